//go:build unix

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/pgtest"
)

// TestOutagePostgres: a2a serve on a PostgreSQL server of the test's own
// (pgtest, never the shared one), streaming tasks running, and the server
// stopped for about 10 s: see outageTest.
func TestOutagePostgres(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	outageTest(t, "postgres:"+pg.DSN(), func() { pg.Stop(t) }, func() { pg.Start(t) })
}

// TestOutageSQLite: the same with a SQLite file made unwritable for about
// 10 s. The test runs as root, so chmod would not stop the server (and
// does not affect its open descriptors); chattr +i on the database and its
// -wal does: the kernel refuses writes to an immutable file even through a
// descriptor opened before (EPERM, which SQLite reports as SQLITE_IOERR),
// at once, and chattr -i undoes it. (A test connection holding BEGIN
// EXCLUSIVE would work too, but each write would wait the store's busy
// timeout of 10 s before it failed.) Reads go on working: only writes fail.
// It needs chattr (e2fsprogs), root and a file system with the attribute
// (ext4, xfs, btrfs): without them it fails, rather than skip in CI.
func TestOutageSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	files := []string{path, path + "-wal"}
	chattr := func(flag string) error {
		out, err := exec.Command("chattr", append([]string{flag}, files...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("chattr %s: %v: %s", flag, err, out)
		}
		return nil
	}
	// Before TempDir's cleanup, which cannot remove immutable files.
	t.Cleanup(func() { chattr("-i") })
	outageTest(t, "sqlite:"+path, func() {
		if err := chattr("+i"); err != nil {
			chattr("-i")
			t.Fatalf("cannot make the database unwritable (the test needs chattr, root and ext4, xfs or btrfs): %v", err)
		}
	}, func() {
		if err := chattr("-i"); err != nil {
			t.Fatal(err)
		}
	})
}

// outageTest runs one a2a serve on storeArg, whose agent writes a line each
// 50 ms, starts several streaming tasks, and takes the store down with
// down once each task has written some lines. While the store is down,
// /readyz answers 503 naming the store, a JSON-RPC SendMessage gets the
// Unavailable error with a RetryInfo, and an HTTP+JSON one 503 with
// Retry-After. About 10 s later up brings the store back: /readyz answers
// 200 again, and every task ends, completed with every line the agent
// wrote or failed with a reason; none is left submitted or working. A send
// then works as before.
func outageTest(t *testing.T, storeArg string, down, up func()) {
	const (
		lines  = 100 // of each task: 5 s
		tasks  = 4
		outage = 10 * time.Second
	)
	script := `read n; i=0; while [ "$i" -lt "$n" ]; do echo "line $i"; i=$((i+1)); sleep 0.05; done`
	r := startReplica(t, "outage", "--exec", "sh -c '"+script+"'", "--store", storeArg)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)

	var (
		mu  sync.Mutex
		ids = map[string]int{} // every task created, to check at the end: the lines it writes
		wg  sync.WaitGroup
	)
	defer func() { cancel(); wg.Wait() }()
	created := func(id string, n int) {
		mu.Lock()
		defer mu.Unlock()
		ids[id] = n
	}
	for range tasks {
		started := make(chan string, 1)
		wg.Go(func() {
			started := started
			// The stream may break during the outage; what counts is
			// what the task becomes, checked with GetTask below.
			for f, err := range r.stream(ctx, "SendStreamingMessage", sendParams(strconv.Itoa(lines)), "") {
				if err != nil {
					t.Logf("stream: %v", err)
					break
				}
				if started != nil {
					started <- f.taskID
					started = nil
				}
			}
			if started != nil {
				started <- ""
			}
		})
		id := <-started
		if id == "" {
			t.Fatal("a streaming send got no task")
		}
		created(id, lines)
	}
	for id := range ids {
		waitUntil(t, "task "+id+" to write some lines", func() bool {
			task, err := r.c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			return err == nil && strings.Count(artifactText(task), "\n") >= 5
		})
	}
	if code, body := getURL(t, r.base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before the outage: %d %q", code, body)
	}

	down()
	downAt := time.Now()
	waitUntil(t, "/readyz to say 503", func() bool {
		code, body := getURL(t, r.base+"/readyz")
		if code == http.StatusServiceUnavailable && body != "store unavailable\n" {
			t.Errorf("/readyz during the outage: %d %q", code, body)
		}
		return code == http.StatusServiceUnavailable
	})

	// New sends while the store is down: each gets Unavailable, retryable.
	// (One sent in the moment before the store noticed may be taken; its
	// task is checked with the others.)
	waitUntil(t, "a JSON-RPC SendMessage to get Unavailable", func() bool {
		msg := client.TextMessage("3")
		body := mustMarshal(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": msg}})
		code, resp := postURL(t, r.base+"/a2a/jsonrpc", body)
		var rpc struct {
			Result *a2a.SendMessageResponse
			Error  *struct {
				Code    int
				Message string
				Data    json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(resp), &rpc); err != nil {
			t.Fatalf("JSON-RPC SendMessage during the outage: %d %q: %v", code, resp, err)
		}
		if rpc.Error == nil {
			if task, ok := rpc.Result.Result.(*a2a.Task); ok {
				created(task.ID, 3)
			}
			t.Logf("JSON-RPC SendMessage during the outage taken: %s", resp)
			return false
		}
		if rpc.Error.Code != -32603 || !strings.Contains(string(rpc.Error.Data), a2a.RetryInfoType) {
			t.Errorf("JSON-RPC SendMessage during the outage: %s, want -32603 with a RetryInfo", resp)
		}
		return true
	})
	waitUntil(t, "an HTTP+JSON SendMessage to get 503", func() bool {
		body := mustMarshal(t, map[string]any{"message": client.TextMessage("3")})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/a2a/rest/message:send", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", a2a.ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("HTTP+JSON SendMessage during the outage: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			var res a2a.SendMessageResponse
			if json.Unmarshal(b, &res) == nil {
				if task, ok := res.Result.(*a2a.Task); ok {
					created(task.ID, 3)
				}
			}
			t.Logf("HTTP+JSON SendMessage during the outage taken: %s", b)
			return false
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("HTTP+JSON SendMessage during the outage: %s, Retry-After %q: %s", resp.Status, resp.Header.Get("Retry-After"), b)
		}
		return true
	})
	if code, _ := getURL(t, r.base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz later in the outage: %d, want 503", code)
	}
	time.Sleep(time.Until(downAt.Add(outage)))

	up()
	waitUntil(t, "/readyz to say 200 again", func() bool {
		code, _ := getURL(t, r.base+"/readyz")
		return code == http.StatusOK
	})
	mu.Lock()
	all := maps.Clone(ids)
	mu.Unlock()
	for id, n := range all {
		var task *a2a.Task
		waitUntil(t, "task "+id+" to end", func() bool {
			var err error
			task, err = r.c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			return err == nil && task.Status.State.Terminal()
		})
		switch st := task.Status; {
		case st.State == a2a.TaskStateCompleted:
			if artifactText(task) != agentLines(0, n) {
				t.Errorf("task %s completed with %q, want every line the agent wrote", id, artifactText(task))
			}
		case st.State == a2a.TaskStateFailed:
			if st.Message == nil || st.Message.Text() == "" {
				t.Errorf("task %s failed without a reason", id)
			} else {
				t.Logf("task %s failed: %s", id, st.Message.Text())
			}
		default:
			t.Errorf("task %s ended %v, want completed or failed", id, st.State)
		}
	}
	// And the server serves as before.
	res, err := r.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("3")})
	if err != nil {
		t.Fatalf("SendMessage after the outage: %v", err)
	}
	if task, ok := res.Result.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted || artifactText(task) != agentLines(0, 3) {
		t.Errorf("SendMessage after the outage returned %+v", res.Result)
	}
}

func getURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func postURL(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
