package interop

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestA2AGo runs the tests against the official Go SDK
// (github.com/a2aproject/a2a-go/v2 v2.3.1), which live in a module of
// their own (interop/a2ago) so that the library's go.mod does not list
// the SDK: its client against our server on the three bindings, errors
// included, and our client against its server.
//
// Both implementations register the proto package lf.a2a.v1 in one test
// binary; protobuf-go refuses that at start unless told to warn, which is
// what GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn does (each side only
// uses its own generated types).
func TestA2AGo(t *testing.T) {
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir = "a2ago"
	cmd.Env = append(os.Environ(), "GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn")
	out, err := cmd.CombinedOutput()
	if err != nil {
		var kept []string
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "WARNING: proto:") {
				kept = append(kept, line)
			}
		}
		t.Fatalf("go test in interop/a2ago: %v\n%s", err, strings.Join(kept, "\n"))
	}
}
