package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// examplePath is the sample config file that docs/serve.md points to.
var examplePath = filepath.Join("..", "..", "..", "..", "docs", "serve.example.jsonc")

// entryPattern matches a setting of the sample, commented out or not.
var entryPattern = regexp.MustCompile(`(?m)^\s*(// )?"([a-z0-9-]+)":`)

// TestServeExampleConfig: the sample config file loads with the real
// loader and changes nothing; it names every flag of a2a serve, once; and
// with every entry uncommented it is still JSON whose values each flag
// takes, so that the sample cannot drift from the flags.
func TestServeExampleConfig(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}

	var stderr syncBuffer
	cfg, code := parseServeArgs([]string{"--config", examplePath}, &stderr)
	if cfg == nil {
		t.Fatalf("a2a serve --config %s: exit %d: %s", examplePath, code, stderr.String())
	}
	want, _ := parseServeArgs(nil, &stderr)
	want.config = examplePath
	if !sameConfig(cfg, want) {
		t.Errorf("the sample as shipped changes the defaults:\n got %+v\nwant %+v", *cfg, *want)
	}

	named := map[string]int{}
	for _, m := range entryPattern.FindAllStringSubmatch(string(data), -1) {
		named[m[2]]++
	}
	newServeFlags(&serveConfig{set: map[string]bool{}}, &stderr).VisitAll(func(f *flag.Flag) {
		switch {
		case f.Name == "config":
			if named[f.Name] != 0 {
				t.Error("the sample sets config, which a config file cannot")
			}
		case named[f.Name] != 1:
			t.Errorf("the sample names --%s %d times, want once", f.Name, named[f.Name])
		}
	})

	// Every entry uncommented: the real loader takes each key and value
	// (the settings need not agree with each other: validate is not run).
	all := regexp.MustCompile(`(?m)^(\s*)// ("[a-z0-9-]+":)`).ReplaceAllString(string(data), `$1$2`)
	path := filepath.Join(t.TempDir(), "all.jsonc")
	if err := os.WriteFile(path, []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &serveConfig{set: map[string]bool{}}
	fs := newServeFlags(c, &stderr)
	c.config = path
	if err := loadServeConfig(fs, c); err != nil {
		t.Fatalf("the sample with every entry uncommented: %v", err)
	}
	for name, n := range named {
		if !c.set[name] && n > 0 {
			t.Errorf("uncommented, the sample does not set %q", name)
		}
	}
}

// TestServeConfigComments: lines whose first non-blank characters are //
// are comments; // elsewhere is JSON's (inside strings, such as URLs).
func TestServeConfigComments(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "// the server\n{\n  // where it is\n\t// \"addr\": \"127.0.0.1:1\",\n  \"public-url\": \"http://agents.example//x\" // not a comment\n}\n")
	var stderr syncBuffer
	if cfg, _ := parseServeArgs([]string{"--config", path}, &stderr); cfg != nil || !strings.Contains(stderr.String(), "not a JSON object") {
		t.Errorf("a // after JSON on a line is not a comment: got %v, %q", cfg != nil, stderr.String())
	}
	path = writeConfig(t, "// the server\r\n{\r\n  // where it is\r\n\t// \"addr\": \"127.0.0.1:1\",\r\n  \"public-url\": \"http://agents.example//x\"\r\n}\r\n")
	cfg, code := parseServeArgs([]string{"--config", path}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if cfg.publicURL != "http://agents.example//x" || cfg.addr != "127.0.0.1:8080" {
		t.Errorf("public-url %q, addr %q", cfg.publicURL, cfg.addr)
	}
}
