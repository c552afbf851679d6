// Command strip writes a copy of the A2A proto without its google.api
// annotations (HTTP rules, method signatures, field behaviours), whose
// protos are not needed to generate the Go code of the gRPC binding. What
// remains (messages, enums, the service) is the normative model,
// unchanged.
//
// Usage: go run ./strip IN.proto OUT.proto
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

var (
	importAPI       = regexp.MustCompile(`(?m)^import "google/api/[^"]+";\n`)
	fieldBehaviour  = regexp.MustCompile(`\s*\[\(google\.api\.field_behavior\) = [A-Z_]+\]`)
	methodSignature = regexp.MustCompile(`(?m)^\s*option \(google\.api\.method_signature\) = "[^"]*";\n`)
	goPackage       = regexp.MustCompile(`(?m)^option go_package = "[^"]*";`)
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: strip IN.proto OUT.proto")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := string(in)
	s = importAPI.ReplaceAllString(s, "")
	s = fieldBehaviour.ReplaceAllString(s, "")
	s = methodSignature.ReplaceAllString(s, "")
	s = stripHTTPRules(s)
	s = goPackage.ReplaceAllString(s, `option go_package = "github.com/goa2a/a2a/internal/grpcpb";`)
	if strings.Contains(s, "google.api") {
		fmt.Fprintln(os.Stderr, "strip: a google.api reference is left; the proto changed shape")
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], []byte(s), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// stripHTTPRules removes each `option (google.api.http) = { ... };`,
// braces nested.
func stripHTTPRules(s string) string {
	const start = "option (google.api.http) = {"
	var b strings.Builder
	for {
		i := strings.Index(s, start)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		// Drop the line's indentation too.
		lineStart := strings.LastIndexByte(s[:i], '\n') + 1
		b.WriteString(s[:lineStart])
		depth, j := 0, i+len(start)-1
		for ; j < len(s); j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		rest := s[j+1:]
		rest = strings.TrimPrefix(rest, ";")
		rest = strings.TrimPrefix(rest, "\n")
		s = rest
	}
}
