package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// Keys of TestServeAPIKey: alice has two (a rotation), bob one.
const (
	keyAlice    = "alice-k3y-0123456789"
	keyAliceNew = "alice-k3y-rotated=="
	keyBob      = "bob-k3y-9876543210"
)

// rawCall sends one request with the given X-API-Key (none when empty) and
// returns the response with its body read.
func rawCall(t *testing.T, method, url, key, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

const (
	sendJSONRPC = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"ping"}]}}}`
	sendREST    = `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"ping"}]}}`
)

func getTaskJSONRPC(id string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"` + id + `"}}`
}

// TestServeAPIKey: with --api-key, both bindings refuse requests without a
// valid key before any method runs, admit each key as its principal, keep
// principals' tasks apart, and leave the card and the ops endpoints open.
func TestServeAPIKey(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "echo", "--store", "memory",
		"--api-key", "alice="+keyAlice, "--api-key", "bob="+keyBob, "--api-key", "alice="+keyAliceNew)
	jsonrpcURL, restURL := ts.base+"/a2a/jsonrpc", ts.base+"/a2a/rest"

	t.Run("card is open and declares the scheme", func(t *testing.T) {
		resp, body := rawCall(t, http.MethodGet, ts.base+"/.well-known/agent-card.json", "", "")
		var card a2a.AgentCard
		if err := json.Unmarshal([]byte(body), &card); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("card: %d %v %s", resp.StatusCode, err, body)
		}
		s, ok := card.SecuritySchemes["apiKey"]
		if !ok || len(card.SecuritySchemes) != 1 || s.APIKey == nil || s.APIKey.Location != "header" || s.APIKey.Name != "X-API-Key" {
			t.Errorf("securitySchemes %s", mustJSON(t, card.SecuritySchemes))
		}
		if len(card.SecurityRequirements) != 1 || len(card.SecurityRequirements[0].Schemes) != 1 {
			t.Fatalf("securityRequirements %s", mustJSON(t, card.SecurityRequirements))
		}
		if _, ok := card.SecurityRequirements[0].Schemes["apiKey"]; !ok {
			t.Errorf("securityRequirements %s", mustJSON(t, card.SecurityRequirements))
		}
	})

	t.Run("ops endpoints are open", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			if code, body := httpGet(t, ts.ops+path); code != http.StatusOK {
				t.Errorf("%s: %d %s", path, code, body)
			}
		}
	})

	const (
		missing = `APIKey realm="a2a", header="X-API-Key"`
		invalid = `APIKey realm="a2a", header="X-API-Key", error="invalid_key"`
	)
	t.Run("refused without a valid key", func(t *testing.T) {
		for _, tc := range []struct {
			name, method, url, body string
		}{
			{"JSON-RPC SendMessage", http.MethodPost, jsonrpcURL, sendJSONRPC},
			{"JSON-RPC GetTask", http.MethodPost, jsonrpcURL, getTaskJSONRPC("x")},
			{"REST ListTasks", http.MethodGet, restURL + "/tasks", ""},
			{"REST SendMessage", http.MethodPost, restURL + "/message:send", sendREST},
			{"REST extended card", http.MethodGet, restURL + "/extendedAgentCard", ""},
			{"unknown path", http.MethodGet, ts.base + "/nothing", ""},
		} {
			for key, challenge := range map[string]string{"": missing, "wrong-key": invalid, keyAlice + "x": invalid} {
				resp, body := rawCall(t, tc.method, tc.url, key, tc.body)
				if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != challenge {
					t.Errorf("%s, key %q: %d %q, want 401 %q", tc.name, key, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), challenge)
				}
				if !strings.Contains(body, `"status":"UNAUTHENTICATED"`) || !strings.Contains(body, "X-API-Key") {
					t.Errorf("%s, key %q: body %s", tc.name, key, body)
				}
			}
		}
	})

	// Alice sends over each binding; her tasks are hers only.
	var aliceTasks []string
	t.Run("admitted with a valid key", func(t *testing.T) {
		resp, body := rawCall(t, http.MethodPost, jsonrpcURL, keyAlice, sendJSONRPC)
		var rpc struct {
			Result struct {
				Task struct{ ID string } `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &rpc); resp.StatusCode != http.StatusOK || err != nil || rpc.Result.Task.ID == "" ||
			!strings.Contains(body, "echo: ping") {
			t.Fatalf("JSON-RPC SendMessage: %d %v %s", resp.StatusCode, err, body)
		}
		resp, body = rawCall(t, http.MethodPost, restURL+"/message:send", keyAliceNew, sendREST)
		var rest struct {
			Task struct{ ID string } `json:"task"`
		}
		if err := json.Unmarshal([]byte(body), &rest); resp.StatusCode != http.StatusOK || err != nil || rest.Task.ID == "" {
			t.Fatalf("REST SendMessage: %d %v %s", resp.StatusCode, err, body)
		}
		aliceTasks = []string{rpc.Result.Task.ID, rest.Task.ID}
	})
	if len(aliceTasks) != 2 {
		t.FailNow()
	}

	t.Run("principals are kept apart", func(t *testing.T) {
		for _, id := range aliceTasks {
			// Either of alice's keys finds her tasks, on either binding.
			for _, key := range []string{keyAlice, keyAliceNew} {
				if resp, body := rawCall(t, http.MethodPost, jsonrpcURL, key, getTaskJSONRPC(id)); resp.StatusCode != http.StatusOK || strings.Contains(body, `"error"`) {
					t.Errorf("alice JSON-RPC GetTask %s: %d %s", id, resp.StatusCode, body)
				}
				if resp, body := rawCall(t, http.MethodGet, restURL+"/tasks/"+id, key, ""); resp.StatusCode != http.StatusOK {
					t.Errorf("alice REST GetTask %s: %d %s", id, resp.StatusCode, body)
				}
			}
			// Bob's key does not.
			resp, body := rawCall(t, http.MethodPost, jsonrpcURL, keyBob, getTaskJSONRPC(id))
			var rpc struct {
				Error *struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &rpc); err != nil || rpc.Error == nil || rpc.Error.Code != -32001 {
				t.Errorf("bob JSON-RPC GetTask %s: %d %s, want TaskNotFound (-32001)", id, resp.StatusCode, body)
			}
			if resp, body := rawCall(t, http.MethodGet, restURL+"/tasks/"+id, keyBob, ""); resp.StatusCode != http.StatusNotFound ||
				!strings.Contains(body, `"reason":"TASK_NOT_FOUND"`) {
				t.Errorf("bob REST GetTask %s: %d %s, want 404 TaskNotFound", id, resp.StatusCode, body)
			}
		}
		resp, body := rawCall(t, http.MethodGet, restURL+"/tasks", keyBob, "")
		if resp.StatusCode != http.StatusOK || strings.Contains(body, aliceTasks[0]) || strings.Contains(body, aliceTasks[1]) {
			t.Errorf("bob REST ListTasks: %d %s", resp.StatusCode, body)
		}
		resp, body = rawCall(t, http.MethodGet, restURL+"/tasks", keyAlice, "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, aliceTasks[0]) || !strings.Contains(body, aliceTasks[1]) {
			t.Errorf("alice REST ListTasks: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("the client sends the key the card asks for", func(t *testing.T) {
		for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
			c, err := client.New(t.Context(), ts.base, client.WithBindings(binding),
				client.WithCredentials("apiKey", func(context.Context) (string, error) { return keyBob, nil }))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.SendMessage(t.Context(), textRequest("hi")); err != nil {
				t.Errorf("%s: %v", binding, err)
			}
			if _, err := ts.client(t, binding).SendMessage(t.Context(), textRequest("hi")); err == nil {
				t.Errorf("%s: a client without the key was served", binding)
			}
		}
	})

	t.Run("refusals are counted as such", func(t *testing.T) {
		_, metrics := httpGet(t, ts.ops+"/metrics")
		for _, binding := range []string{"jsonrpc", "rest"} {
			prefix := `a2a_http_request_errors_total{binding="` + binding + `",`
			found := false
			for line := range strings.Lines(metrics) {
				if strings.HasPrefix(line, prefix) {
					if strings.Contains(line, `error="Unknown"`) {
						t.Errorf("a refusal counted as unknown: %s", line)
					}
					found = found || strings.Contains(line, `error="Unauthenticated"`)
				}
			}
			if !found {
				t.Errorf("no Unauthenticated errors counted on %s:\n%s", binding, metrics)
			}
		}
	})

	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	out, logs := ts.stdout.String(), ts.stderr.String()
	if !strings.Contains(out, "\n  auth        API key (X-API-Key), 2 principals\n") {
		t.Errorf("banner:\n%s", out)
	}
	if !strings.Contains(logs, "msg=serving ") || !strings.Contains(logs, " auth=api-key") || strings.Contains(logs, "without authentication") {
		t.Errorf("logs:\n%s", logs)
	}
	for _, key := range []string{keyAlice, keyAliceNew, keyBob} {
		if strings.Contains(out, key) || strings.Contains(logs, key) {
			t.Errorf("key %q printed:\n%s\n%s", key, out, logs)
		}
	}

}

// TestServeOpen: without --api-key the banner and the log say so, once.
func TestServeOpen(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "echo", "--store", "memory")
	code, body := httpGet(t, ts.base+"/.well-known/agent-card.json")
	if code != http.StatusOK || strings.Contains(body, "securit") {
		t.Errorf("card: %d %s", code, body)
	}
	if _, err := ts.client(t, a2a.BindingHTTPJSON).SendMessage(t.Context(), textRequest("hi")); err != nil {
		t.Error(err)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	out, logs := ts.stdout.String(), ts.stderr.String()
	if !strings.Contains(out, "\n  auth        none: anyone who can reach the server can use it\n") {
		t.Errorf("banner:\n%s", out)
	}
	if n := strings.Count(logs, `level=WARN msg="serving without authentication"`); n != 1 {
		t.Errorf("%d warnings in logs:\n%s", n, logs)
	}
	if !strings.Contains(logs, " auth=none") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestServeAPIKeyFlags(t *testing.T) {
	t.Parallel()
	var stderr syncBuffer
	cfg, code := parseServeArgs([]string{"--api-key", "alice=k1", "--api-key", "alice=k2=", "--api-key", "bob=k3"}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := map[string]string{"k1": "alice", "k2=": "alice", "k3": "bob"}
	if got := cfg.apiKeys; len(got) != len(want) || got["k1"] != "alice" || got["k2="] != "alice" || got["k3"] != "bob" {
		t.Errorf("keys %v, want %v", got, want)
	}
	if n := principals(cfg.apiKeys); n != 2 {
		t.Errorf("%d principals", n)
	}
	if s := cfg.apiKey.String(); strings.Contains(s, "k1") || strings.Contains(s, "k3") {
		t.Errorf("String() shows a key: %q", s)
	}
}

func TestServeAPIKeyFlagErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--api-key", secret}, "--api-key #1: want PRINCIPAL=KEY, found no '='"},
		{[]string{"--api-key", "=" + secret}, "--api-key #1: empty principal"},
		{[]string{"--api-key", "alice="}, `--api-key #1 (principal "alice"): empty key`},
		{[]string{"--api-key", "alice=" + secret, "--api-key", "bob=" + secret}, `--api-key #2 (principal "bob"): principal "alice" has the same key`},
		{[]string{"--api-key", "alice=" + secret, "--api-key", "alice=" + secret}, `--api-key #2 (principal "alice"): the same key is given twice`},
		{[]string{"--api-key", "alice=" + secret + "\n"}, "which a header cannot carry"},
		{[]string{"--api-key", "alice= " + secret}, "which a header cannot carry"},
		{[]string{"--api-key", " alice=" + secret}, "spaces at either end"},
		{[]string{"--api-key", "jwt:alice=" + secret}, `principal "jwt:alice" begins with "jwt:" or "mtls:"`},
		{[]string{"--api-key", "mtls:CN=alice=" + secret}, `principal "mtls:CN" begins with "jwt:" or "mtls:"`},
		{[]string{"--api-key", "ok=fine", "--api-key", secret, "--api-key", "bob="}, "--api-key #3 (principal \"bob\"): empty key"},
	} {
		var stderr syncBuffer
		cfg, code := parseServeArgs(tc.args, &stderr)
		if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want it to contain %q", tc.args, code, stderr.String(), tc.want)
		}
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("%q: the error shows the key: %q", tc.args, stderr.String())
		}
	}
}

// TestServeAPIKeyConfig: the config file takes an array (or one string),
// the command line wins, and errors about the file never show its keys.
func TestServeAPIKeyConfig(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{"api-key": ["alice=file-k1", "bob=file-k2"]}`)
	var stderr syncBuffer
	cfg, code := parseServeArgs([]string{"--config", path}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if len(cfg.apiKeys) != 2 || cfg.apiKeys["file-k1"] != "alice" || cfg.apiKeys["file-k2"] != "bob" {
		t.Errorf("keys %v", cfg.apiKeys)
	}
	cfg, code = parseServeArgs([]string{"--config", path, "--api-key", "carol=flag-k"}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if len(cfg.apiKeys) != 1 || cfg.apiKeys["flag-k"] != "carol" {
		t.Errorf("keys %v", cfg.apiKeys)
	}
	cfg, code = parseServeArgs([]string{"--config", writeConfig(t, `{"api-key": "dave=one-k"}`)}, &stderr)
	if cfg == nil || cfg.apiKeys["one-k"] != "dave" {
		t.Errorf("one string: exit %d: %s", code, stderr.String())
	}

	for _, tc := range []struct {
		text, want string
		code       int
	}{
		{`{"api-key": ["alice=file-s3cret", 7]}`, `key "api-key": invalid value: element 1 is not a string`, ExitError},
		{`{"api-key": ["alice:file-s3cret"]}`, "--api-key #1: want PRINCIPAL=KEY, found no '='", ExitUsage},
	} {
		var stderr syncBuffer
		cfg, code := parseServeArgs([]string{"--config", writeConfig(t, tc.text)}, &stderr)
		if cfg != nil || code != tc.code || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "file-s3cret") {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q, without the key", tc.text, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
