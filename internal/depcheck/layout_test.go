package depcheck

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureListsPackages: the package list of docs/architecture.md
// (its first code block) names every package of the module, and no
// package that is not one.
func TestArchitectureListsPackages(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "\n```\n")
	if ok {
		block, _, ok = strings.Cut(block, "\n```\n")
	}
	if !ok {
		t.Fatal("docs/architecture.md has no code block")
	}
	out, err := exec.Command("go", "list", "github.com/goa2a/a2a/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	named := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z0-9]+(?:/[a-z0-9]+)*`).FindAllString(block, -1) {
		named[w] = true
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, "github.com/goa2a/a2a/")
		pkgs[p] = true
		if !named[p] {
			t.Errorf("docs/architecture.md's package list does not name %s", p)
		}
	}
	// Each line that starts with a name at the left margin names a package
	// (or a directory of them, written with a trailing slash).
	for _, line := range strings.Split(block, "\n") {
		if line == "" || line[0] == ' ' {
			continue
		}
		name := strings.TrimRight(strings.Fields(line)[0], ",")
		if strings.HasSuffix(name, "/") {
			continue
		}
		if !pkgs[name] {
			t.Errorf("docs/architecture.md lists %q, which is not a package of the module", name)
		}
	}
}
