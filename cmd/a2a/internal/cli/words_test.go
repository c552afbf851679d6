package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "go test ./...", want: []string{"go", "test", "./..."}},
		{in: "  spaced \t out\n", want: []string{"spaced", "out"}},
		{in: `sh -c 'echo one; echo two'`, want: []string{"sh", "-c", "echo one; echo two"}},
		{in: `grep -E "a|b" file`, want: []string{"grep", "-E", "a|b", "file"}},
		{in: `echo "say \"hi\" \$HOME \\ \n"`, want: []string{"echo", `say "hi" $HOME \ \n`}},
		{in: `a\ b c\'d`, want: []string{"a b", "c'd"}},
		{in: `'' "" x`, want: []string{"", "", "x"}},
		{in: `ab'cd'"ef"`, want: []string{"abcdef"}},
		{in: "one \\\ntwo", want: []string{"one", "two"}},
		{in: `find . -exec rm {} \;`, want: []string{"find", ".", "-exec", "rm", "{}", ";"}},
		{in: "", err: "empty command"},
		{in: "   ", err: "empty command"},
		{in: `echo 'open`, err: "unterminated single quote"},
		{in: `echo "open`, err: "unterminated double quote"},
		{in: `echo \`, err: "a backslash ends the command"},
		{in: "cat | wc -l", err: `unquoted '|'`},
		{in: "make && make install", err: `unquoted '&'`},
		{in: "echo hi > out", err: `unquoted '>'`},
		{in: "echo $HOME", err: `unquoted '$'`},
		{in: "echo `date`", err: "unquoted '`'"},
		{in: "a;b", err: `unquoted ';'`},
	} {
		got, err := splitWords(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("splitWords(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzSplitWords: quoting any words and splitting them back gives the same
// words, and splitting never panics.
func FuzzSplitWords(f *testing.F) {
	f.Add("go test ./...", "")
	f.Add("it's", `a "quoted" $word`)
	f.Add("", "\n\t ")
	f.Fuzz(func(t *testing.T, a, b string) {
		_, _ = splitWords(a + " " + b)
		words := []string{a, b}
		got, err := splitWords(quoteWords(words))
		if err != nil || !slices.Equal(got, words) {
			t.Errorf("splitWords(quoteWords(%q)) = %q, %v", words, got, err)
		}
	})
}
