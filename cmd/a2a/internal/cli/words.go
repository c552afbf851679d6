package cli

import (
	"errors"
	"fmt"
	"strings"
)

// splitWords splits a command line into argv the way a POSIX shell splits
// words, without running a shell: words are separated by unquoted blanks
// (space, tab, newline); 'single quotes' keep everything literally;
// "double quotes" keep everything but \" \\ \$ \` and a backslash-newline;
// outside quotes a backslash keeps the next character literally.
//
// Nothing is expanded or interpreted: no variables, globs, ~, pipes or
// redirections. So that a command meant for a shell does not silently run
// with "|" or "$HOME" as arguments, an unquoted | & ; < > ( ) $ or ` is an
// error that suggests sh -c.
func splitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word (possibly an empty quoted one)
	)
	end := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n':
			end()
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New("a backslash ends the command")
			}
			i++
			if s[i] != '\n' { // backslash-newline continues the line
				cur.WriteByte(s[i])
				in = true
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			in = true
			i += j + 1
		case '"':
			in = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] != '\n' {
						cur.WriteByte(s[i])
					}
					continue
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, errors.New("unterminated double quote")
			}
		case '|', '&', ';', '<', '>', '(', ')', '$', '`':
			return nil, fmt.Errorf("unquoted %q: no shell runs the command; to use one, write sh -c '...'", c)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	end()
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}

// quoteWords is the inverse of splitWords: each word single-quoted when it
// needs to be, for messages and the config file's array form.
func quoteWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.IndexFunc(w, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
				r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) < 0 {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
