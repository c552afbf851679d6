package cli

// Help and mistakes. Every command prints its help on stdout and exits 0
// with --help, -h or a2a help CMD. A mistake on the command line gets one
// line on stderr saying what is wrong, with a suggestion when a name is
// mistyped, and a second line saying where the help is; the exit status is
// ExitUsage. The flag package's own messages and usage are discarded
// (fs.SetOutput(io.Discard)): they write flags with one dash, print every
// flag after every mistake, and print -h on stderr.

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// usageFail reports problem, a mistake on the command line of a2a cmd (""
// for a2a itself), in one line, says where the command's help is, and
// returns ExitUsage.
func usageFail(w io.Writer, cmd, problem string) int {
	if cmd == "" {
		fmt.Fprintf(w, "a2a: %s\nRun 'a2a help' for usage.\n", problem)
	} else {
		fmt.Fprintf(w, "a2a %s: %s\nRun 'a2a %s --help' for usage.\n", cmd, problem, cmd)
	}
	return ExitUsage
}

// isHelpFlag reports whether arg asks for help the way the flag package
// understands it (-h, -help, --h, --help).
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

// flagName writes a flag the way the help and the docs do: --name, or -v
// for a one-letter flag.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagProblem turns an error of fs.Parse into the one line a person reads:
// the flag written as the docs write it, a suggestion for an unknown flag,
// and for a value that does not parse, what a value looks like.
//
// The flag package's errors have no types, only texts (stable since Go 1);
// a text this does not know is returned as it is.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag " + flagName(name) + didYouMean(name, flagNames(fs), flagName)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return flagName(name) + " needs a value"
	}
	for _, form := range []struct{ prefix, middle string }{
		{"invalid value ", " for flag -"},
		{"invalid boolean value ", " for -"},
	} {
		rest, ok := strings.CutPrefix(msg, form.prefix)
		if !ok {
			continue
		}
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			break
		}
		rest, ok = strings.CutPrefix(rest[len(quoted):], form.middle)
		name, why, found := strings.Cut(rest, ": ")
		if !ok || !found {
			break
		}
		value, _ := strconv.Unquote(quoted)
		f := fs.Lookup(name)
		if f == nil {
			break
		}
		if _, secret := f.Value.(secretFlag); secret {
			return fmt.Sprintf("invalid value for %s: %s", flagName(name), why)
		}
		return fmt.Sprintf("invalid value %q for %s: %s", value, flagName(name), valueProblem(f, value, why))
	}
	return msg
}

// valueProblem says what is wrong with value, which flag f refused with
// why: the flag package's "parse error" says nothing about what it wanted.
func valueProblem(f *flag.Flag, value, why string) string {
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		return "want true or false"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return why
	}
	switch g.Get().(type) {
	case time.Duration:
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return "a duration needs a unit, such as 30s, 2m or 1h30m"
		}
		return "not a duration: write a number with a unit, such as 30s, 2m or 1h30m"
	case int, int64, uint, uint64:
		if why == "value out of range" {
			return "out of range"
		}
		return "want a whole number"
	case float64:
		if why == "value out of range" {
			return "out of range"
		}
		return "want a number"
	}
	return why
}

// flagNames lists the names of fs's flags.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// suggest returns the candidates typed was probably meant to be, best
// first: those it is a prefix of if there are any, else those the fewest
// edits away (an edit inserts, deletes or replaces a letter, or swaps two
// next to each other), within two edits and fewer than half the letters of
// the longer word, so that short words do not match everything. At most
// three are returned.
func suggest(typed string, candidates []string) []string {
	if typed == "" {
		return nil
	}
	var prefixed, near []string
	best := 3
	for _, c := range candidates {
		if c == typed {
			continue
		}
		if strings.HasPrefix(c, typed) {
			prefixed = append(prefixed, c)
			continue
		}
		d := editDistance(typed, c)
		if d > 2 || d >= max(len(typed), len(c))/2+1 {
			continue
		}
		if d < best {
			best, near = d, near[:0]
		}
		if d == best {
			near = append(near, c)
		}
	}
	out := prefixed
	if len(out) == 0 {
		out = near
	}
	out = slices.Clone(out)
	slices.Sort(out)
	return out[:min(len(out), 3)]
}

// editDistance is the optimal string alignment distance of a and b (the
// Damerau-Levenshtein distance where no letter is edited twice), counted
// in bytes: flag and command names are ASCII.
func editDistance(a, b string) int {
	// Three rows of the table: i-2, i-1 and i.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// didYouMean is "; did you mean X?" with the names of candidates typed may
// have been meant to be (suggest), each written by spell; "" when none is
// close.
func didYouMean(typed string, candidates []string, spell func(string) string) string {
	s := suggest(typed, candidates)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = spell(s[i])
	}
	return "; did you mean " + orList(s) + "?"
}

// asTyped spells a name as it is.
func asTyped(name string) string { return name }

// printFlags writes the flags of fs that keep accepts (all with a nil
// keep), sorted by name: each as --name PLACEHOLDER (the placeholder of
// flag.UnquoteUsage, or the flag's name in capitals for a flag.Value of
// our own), then its description indented on the next lines, ending with
// the default unless it is the zero value or the description already says
// what the default is.
func printFlags(w io.Writer, fs *flag.FlagSet, keep func(*flag.Flag) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f) {
			return
		}
		placeholder, usage := flagPlaceholder(f)
		line := "  " + flagName(f.Name)
		if placeholder != "" {
			line += " " + placeholder
		}
		if def := defaultText(f); def != "" && !strings.Contains(usage, "(default") {
			usage += " (default " + def + ")"
		}
		fmt.Fprintln(w, line)
		for l := range strings.SplitSeq(usage, "\n") {
			fmt.Fprintf(w, "      %s\n", l)
		}
	})
}

// flagPlaceholder returns the name of f's value ("" for a boolean flag) and
// its description, as flag.UnquoteUsage does, except that a flag.Value of
// our own is named after the flag (--header HEADER) rather than "value".
func flagPlaceholder(f *flag.Flag) (placeholder, usage string) {
	placeholder, usage = flag.UnquoteUsage(f)
	if placeholder == "value" && !strings.Contains(f.Usage, "`") {
		placeholder = strings.ToUpper(f.Name)
	}
	return placeholder, usage
}

// defaultText is f's default as help shows it, "" for the zero value of its
// type (false, 0, "", no duration).
func defaultText(f *flag.Flag) string {
	if isZeroValue(f) {
		return ""
	}
	if f.DefValue == "" || strings.ContainsAny(f.DefValue, " \t\n\"") {
		return strconv.Quote(f.DefValue)
	}
	return f.DefValue
}

// isZeroValue reports whether f's default is the zero value of its type,
// as the flag package decides it for PrintDefaults: by comparing with what
// a new zero value of the type prints.
func isZeroValue(f *flag.Flag) (zero bool) {
	defer func() {
		if recover() != nil {
			zero = false // a String that cannot print its zero value: show the default
		}
	}()
	typ := reflect.TypeOf(f.Value)
	var z reflect.Value
	if typ.Kind() == reflect.Pointer {
		z = reflect.New(typ.Elem())
	} else {
		z = reflect.Zero(typ)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}
