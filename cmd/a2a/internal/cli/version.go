package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is what "a2a version" reports about a binary, read from the
// build information the Go toolchain writes into it. Its JSON form is the
// output of "a2a version --json"; the member names are stable.
type Version struct {
	// Version is the module version: a tag (v1.2.0), a pseudo-version of
	// an untagged commit (v0.0.0-20261203142200-47e473f1a2b3, "+dirty"
	// added for a modified tree), or "(devel)" when the build had no
	// version (go run, go build outside a git checkout).
	Version string `json:"version"`
	// Revision is the commit the binary was built from (vcs.revision),
	// empty when the build carried no VCS information: go install
	// ...@version builds from a module zip, and -buildvcs=false or a git
	// worktree (golang/go#58218) leave it out.
	Revision string `json:"revision,omitempty"`
	// Time is the commit's time (vcs.time, RFC 3339), not the build's.
	Time string `json:"time,omitempty"`
	// Modified says whether the working tree had changes that were not
	// committed (vcs.modified); nil when the build carried no VCS
	// information, so that "unknown" is not shown as "clean".
	Modified *bool `json:"modified,omitempty"`
	// Go is the toolchain that built the binary (go1.26.8).
	Go string `json:"go,omitempty"`
	// Platform is GOOS/GOARCH of the binary (linux/amd64).
	Platform string `json:"platform,omitempty"`
}

// VersionOf reads the version from a binary's build information, as
// [debug.ReadBuildInfo] gives it for the running program or
// debug/buildinfo.ReadFile for a file. A nil info (a binary built without
// module support) gives the version "(unknown)" and nothing else.
func VersionOf(info *debug.BuildInfo) Version {
	if info == nil {
		return Version{Version: "(unknown)"}
	}
	v := Version{Version: info.Main.Version, Go: info.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			modified := s.Value == "true"
			v.Modified = &modified
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		v.Platform = goos + "/" + goarch
	}
	return v
}

// String is the form "a2a version" prints: a first line with the version,
// the Go version and the platform, and, when the binary carries VCS
// information, a second with the revision, "(modified)" for a tree with
// uncommitted changes, and the commit's time. For example:
//
//	a2a v1.2.0 go1.26.8 linux/amd64
//	revision 47e473f1a2b3c4d5e6f708192a3b4c5d6e7f8091, committed 2026-12-03T14:22:00Z
//
// The text always ends with a newline and never has an empty line.
func (v Version) String() string {
	var b strings.Builder
	b.WriteString("a2a ")
	b.WriteString(v.Version)
	for _, s := range []string{v.Go, v.Platform} {
		if s != "" {
			b.WriteString(" ")
			b.WriteString(s)
		}
	}
	b.WriteString("\n")
	var vcs []string
	if v.Revision != "" {
		rev := "revision " + v.Revision
		if v.Modified != nil && *v.Modified {
			rev += " (modified)"
		}
		vcs = append(vcs, rev)
	}
	if v.Time != "" {
		vcs = append(vcs, "committed "+v.Time)
	}
	if len(vcs) > 0 {
		b.WriteString(strings.Join(vcs, ", "))
		b.WriteString("\n")
	}
	return b.String()
}

// versionAbout says what a2a version does, in a line.
const versionAbout = "show the version, VCS revision, Go version and platform of this a2a"

const versionUsage = "Usage: a2a version [--json]\n\n  " + versionAbout + "\n\nFlags:\n"

// newVersionFlags returns the flag set of a2a version, which fills asJSON.
func newVersionFlags(asJSON *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("a2a version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(asJSON, "json", false, `print one JSON object: {"version", "revision", "time", "modified", "go", "platform"}`)
	return fs
}

// versionCommand implements "a2a version" and "a2a --version".
func versionCommand(args []string, stdout, stderr io.Writer) int {
	var asJSON bool
	fs := newVersionFlags(&asJSON)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, versionUsage)
			printFlags(stdout, fs, nil)
			return ExitOK
		}
		return usageFail(stderr, "version", flagProblem(fs, err))
	}
	if fs.NArg() > 0 {
		return usageFail(stderr, "version", fmt.Sprintf("unexpected argument %q (a2a version takes flags only)", fs.Arg(0)))
	}
	info, _ := debug.ReadBuildInfo() // nil without module support
	v := VersionOf(info)
	// What the running binary is built with and for is known even when
	// its build information is missing.
	if v.Go == "" {
		v.Go = runtime.Version()
	}
	if v.Platform == "" {
		v.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	if !asJSON {
		fmt.Fprint(stdout, v)
		return ExitOK
	}
	out, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(stderr, "a2a version: encoding the version as JSON: %v\n", err)
		return ExitError
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return ExitOK
}
