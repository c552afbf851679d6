package serve_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExample holds the README's library example to Example: the
// README shows Example's body, less the line the test adds in place of a
// person (marked "test only"), as the body of a main function.
func TestReadmeExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	if !ok {
		t.Fatal("example_test.go has no func Example")
	}
	body, _, ok = strings.Cut(body, "\t// Output:\n")
	if !ok {
		t.Fatal("Example has no output comment")
	}
	var lines []string
	for _, l := range strings.SplitAfter(body, "\n") {
		if !strings.Contains(l, "// test only") {
			lines = append(lines, l)
		}
	}
	want := "func main() {\n" + strings.Join(lines, "") + "}\n"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not show Example as its library example; want it to hold:\n%s", want)
	}
	if n := strings.Count(want, "\n"); n > 30 {
		t.Errorf("the example's main is %d lines long", n)
	}
}
