package v03_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the package depends on the standard library and package a2a
// only, so that a program that speaks v0.3 pays for nothing more.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/goa2a/a2a/a2a" && p != "github.com/goa2a/a2a/a2a/v03" {
			t.Errorf("a2a/v03 depends on %s", p)
		}
	}
}
