// Package capture reads the A2A 101 kit's recorded HTTP exchanges (the
// *.http files of a2a-101/capture/out) so tests can replay them against our
// server and compare the answers.
package capture

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Exchange is one recorded request and its response. A request that the
// client received (a webhook, "### webhook 1 · received by the client")
// has no response: Status is 0.
type Exchange struct {
	Title   string
	Method  string
	Path    string
	Host    string
	Header  http.Header
	Body    string
	Status  int
	RHeader http.Header
	// RBody is the response body; for an SSE response it is the raw
	// stream, see Frames.
	RBody string
}

// Frames returns the data payloads of an SSE response body, in order.
func (e *Exchange) Frames() []string {
	var out []string
	for line := range strings.SplitSeq(e.RBody, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// Dir returns the capture directory of the shared reference, found from
// this source file: ../shared/reference/a2a-101/capture/out beside the
// module root.
func Dir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("capture: cannot locate source")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, "..", "shared", "reference", "a2a-101", "capture", "out")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("capture: the shared reference is missing at %s: %w", dir, err)
	}
	return dir, nil
}

// Load parses one capture file, such as "03-blocking-task.http".
func Load(name string) ([]Exchange, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return Parse(string(b))
}

// Parse splits a capture file into exchanges. A section with no response
// is a request the client received, such as a webhook.
func Parse(text string) ([]Exchange, error) {
	var out []Exchange
	sections := strings.Split("\n"+text, "\n### ")
	for _, sec := range sections[1:] {
		title, rest, _ := strings.Cut(sec, "\n")
		ex, err := parseExchange(title, rest)
		if err != nil {
			return nil, fmt.Errorf("capture: %q: %w", title, err)
		}
		out = append(out, ex)
	}
	return out, nil
}

func parseExchange(title, text string) (Exchange, error) {
	ex := Exchange{Title: title, Header: http.Header{}, RHeader: http.Header{}}
	reqText, respText := text, ""
	if i := strings.Index(text, "\nHTTP/1.1 "); i >= 0 {
		reqText, respText = text[:i], text[i+1:]
	}
	sc := bufio.NewScanner(strings.NewReader(reqText))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		return ex, fmt.Errorf("no request line")
	}
	parts := strings.Fields(sc.Text())
	if len(parts) < 2 {
		return ex, fmt.Errorf("bad request line %q", sc.Text())
	}
	ex.Method, ex.Path = parts[0], parts[1]
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, ":")
		ex.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	var body strings.Builder
	for sc.Scan() {
		body.WriteString(sc.Text())
		body.WriteByte('\n')
	}
	ex.Body = strings.TrimSpace(body.String())
	ex.Host = ex.Header.Get("Host")
	if respText == "" {
		return ex, nil // received, not sent: no response recorded
	}

	statusLine, respRest, _ := strings.Cut(respText, "\n")
	f := strings.Fields(statusLine)
	if len(f) < 2 {
		return ex, fmt.Errorf("bad status line %q", statusLine)
	}
	status, err := strconv.Atoi(f[1])
	if err != nil {
		return ex, fmt.Errorf("bad status %q", f[1])
	}
	ex.Status = status
	head, rbody, _ := strings.Cut(respRest, "\n\n")
	for line := range strings.SplitSeq(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			ex.RHeader.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	ex.RBody = strings.TrimSpace(rbody)
	return ex, nil
}
