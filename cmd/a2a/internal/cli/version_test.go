package cli_test

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/goa2a/a2a/cmd/a2a/internal/cli"
)

// buildInfo is the build information of a binary of version version with
// the given settings besides GOOS and GOARCH.
func buildInfo(version string, settings ...string) *debug.BuildInfo {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/goa2a/a2a/cmd/a2a",
		Main: debug.Module{Path: "github.com/goa2a/a2a", Version: version}}
	for i := 0; i+1 < len(settings); i += 2 {
		info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return info
}

func TestVersionOf(t *testing.T) {
	t.Parallel()
	const rev = "47e473f1a2b3c4d5e6f708192a3b4c5d6e7f8091"
	platform := []string{"GOOS", "linux", "GOARCH", "arm64"}
	vcs := func(modified string) []string {
		return append([]string{"-trimpath", "true", "vcs", "git", "vcs.revision", rev,
			"vcs.time", "2026-12-03T14:22:00Z", "vcs.modified", modified}, platform...)
	}
	cases := []struct {
		name     string
		info     *debug.BuildInfo
		text     string
		jsonText string
	}{{
		name:     "tagged release",
		info:     buildInfo("v1.2.0", vcs("false")...),
		text:     "a2a v1.2.0 go1.26.8 linux/arm64\nrevision " + rev + ", committed 2026-12-03T14:22:00Z\n",
		jsonText: `{"version":"v1.2.0","revision":"` + rev + `","time":"2026-12-03T14:22:00Z","modified":false,"go":"go1.26.8","platform":"linux/arm64"}`,
	}, {
		name:     "modified tree",
		info:     buildInfo("v0.0.0-20261203142200-47e473f1a2b3+dirty", vcs("true")...),
		text:     "a2a v0.0.0-20261203142200-47e473f1a2b3+dirty go1.26.8 linux/arm64\nrevision " + rev + " (modified), committed 2026-12-03T14:22:00Z\n",
		jsonText: `{"version":"v0.0.0-20261203142200-47e473f1a2b3+dirty","revision":"` + rev + `","time":"2026-12-03T14:22:00Z","modified":true,"go":"go1.26.8","platform":"linux/arm64"}`,
	}, {
		// go install github.com/goa2a/a2a/cmd/a2a@v1.2.0 builds from the
		// module zip: a real version, no VCS settings.
		name:     "go install at a version",
		info:     buildInfo("v1.2.0", platform...),
		text:     "a2a v1.2.0 go1.26.8 linux/arm64\n",
		jsonText: `{"version":"v1.2.0","go":"go1.26.8","platform":"linux/arm64"}`,
	}, {
		// go run, or go build with -buildvcs=false or in a git worktree.
		name:     "no version, no VCS",
		info:     buildInfo("(devel)", platform...),
		text:     "a2a (devel) go1.26.8 linux/arm64\n",
		jsonText: `{"version":"(devel)","go":"go1.26.8","platform":"linux/arm64"}`,
	}, {
		name:     "empty main version and no platform",
		info:     buildInfo(""),
		text:     "a2a (devel) go1.26.8\n",
		jsonText: `{"version":"(devel)","go":"go1.26.8"}`,
	}, {
		name:     "no build information",
		info:     nil,
		text:     "a2a (unknown)\n",
		jsonText: `{"version":"(unknown)"}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := cli.VersionOf(tc.info)
			if got := v.String(); got != tc.text {
				t.Errorf("String:\ngot  %q\nwant %q", got, tc.text)
			}
			if strings.Contains(v.String(), "\n\n") || strings.HasPrefix(v.String(), "\n") {
				t.Errorf("String has an empty line: %q", v.String())
			}
			got, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.jsonText {
				t.Errorf("JSON:\ngot  %s\nwant %s", got, tc.jsonText)
			}
		})
	}
}

// TestVersionCommand runs a2a version, a2a --version and a2a version
// --json on the binary built for these tests and compares what they print
// with the build information read from its file.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	want := cli.VersionOf(info)
	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := exec.Command(binary, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			t.Fatalf("a2a %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), errOut.String(), code
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, stderr, code := run(args...)
		if code != cli.ExitOK || stderr != "" {
			t.Errorf("a2a %s: exit %d, stderr %q", args[0], code, stderr)
		}
		if stdout != want.String() {
			t.Errorf("a2a %s printed\n%q\nwant\n%q", args[0], stdout, want.String())
		}
	}
	stdout, _, code := run("version", "--json")
	if code != cli.ExitOK || strings.Count(stdout, "\n") != 1 {
		t.Errorf("a2a version --json: exit %d, want one line, got %q", code, stdout)
	}
	var got cli.Version
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("a2a version --json printed %q: %v", stdout, err)
	}
	if g, w := got.String(), want.String(); g != w {
		t.Errorf("a2a version --json decodes to\n%q\nwant\n%q", g, w)
	}
	if got.Go != info.GoVersion || got.Platform == "" {
		t.Errorf("a2a version --json: go %q platform %q, want go %q and a platform", got.Go, got.Platform, info.GoVersion)
	}

	if _, stderr, code := run("version", "extra"); code != cli.ExitUsage || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("a2a version extra: exit %d, stderr %q; want %d and the argument named", code, stderr, cli.ExitUsage)
	}
}

// TestVersionInProcess calls Main as the other commands' tests do: the
// version command must print something even in a test binary, whose build
// information has no module version.
func TestVersionInProcess(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"version"}, &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if out := stdout.String(); !strings.HasPrefix(out, "a2a ") || !strings.HasSuffix(out, "\n") || strings.Contains(out, "\n\n") {
		t.Errorf("a2a version printed %q", out)
	}
}
