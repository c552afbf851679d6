package cli_test

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goa2a/a2a/cmd/a2a/internal/cli"
)

// TestRelease runs .ci/release for one foreign platform and the native
// one, as docs/release.md does for all six, and checks what a release
// promises: SHA256SUMS lists each file with its digest; LICENSE and NOTICE
// are the repository's, and THIRD_PARTY_LICENSES has a licence of every
// module compiled in; each binary is built the way the script says
// (CGO_ENABLED=0, -trimpath, -s -w) and names the commit it was built
// from, with (modified) exactly when the tree had uncommitted changes.
// Both binaries are read with debug/buildinfo, and the native one is run.
//
// The script runs in a plain clone of this checkout with the working
// tree's changes copied over it (see mirror), because a linked git
// worktree gets no VCS stamp from Go. The builds are cached: on a warm
// build cache the test takes a few seconds.
func TestRelease(t *testing.T) {
	t.Parallel()
	root := git(t, ".", "rev-parse", "--show-toplevel")
	head := git(t, root, "rev-parse", "HEAD")
	src := mirror(t, root, head)
	dirty := git(t, src, "status", "--porcelain") != ""

	native := runtime.GOOS + "/" + runtime.GOARCH
	foreign := "windows/arm64"
	if native == foreign {
		foreign = "linux/amd64"
	}
	dist := t.TempDir()
	cmd := exec.Command(filepath.Join(src, ".ci", "release"), dist)
	cmd.Env = append(os.Environ(), "RELEASE_PLATFORMS="+foreign+" "+native)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf(".ci/release: %v\n%s", err, out)
	}

	names := []string{binaryName(foreign), binaryName(native), "LICENSE", "NOTICE", "THIRD_PARTY_LICENSES"}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("SHA256SUMS has %d lines, want %d (%v):\n%s", len(lines), len(names), names, sums)
	}
	for i, line := range lines {
		data, err := os.ReadFile(filepath.Join(dist, names[i]))
		if err != nil {
			t.Fatal(err)
		}
		digest := sha256.Sum256(data)
		// sha256sum's format: the hex digest, two spaces (text mode), the name.
		if want := hex.EncodeToString(digest[:]) + "  " + names[i]; line != want {
			t.Errorf("SHA256SUMS line %d:\ngot  %q\nwant %q", i+1, line, want)
		}
	}

	if got, want := readFile(t, filepath.Join(dist, "LICENSE")), readFile(t, filepath.Join(src, "LICENSE")); got != want {
		t.Errorf("the release's LICENSE is not the repository's")
	}
	if notice, want := readFile(t, filepath.Join(dist, "NOTICE")), readFile(t, filepath.Join(src, "NOTICE")); !strings.HasPrefix(notice, want) {
		t.Errorf("the release's NOTICE does not begin with the repository's:\n%s", notice)
	}
	thirdParty := readFile(t, filepath.Join(dist, "THIRD_PARTY_LICENSES"))

	for i, platform := range []string{foreign, native} {
		path := filepath.Join(dist, names[i])
		info, err := buildinfo.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		goos, goarch, _ := strings.Cut(platform, "/")
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		for key, want := range map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0",
			"-trimpath": "true", "vcs.revision": head} {
			if settings[key] != want {
				t.Errorf("%s: build setting %s = %q, want %q", names[i], key, settings[key], want)
			}
		}
		// -trimpath leaves -ldflags out of the build settings, so -s -w
		// is checked in the file: no symbol table, no DWARF.
		if left := unstripped(t, path); left != "" {
			t.Errorf("%s was not linked with -s -w: it has %s", names[i], left)
		}
		checkVersionText(t, names[i]+" read with debug/buildinfo", cli.VersionOf(info).String(), head, dirty)
		for _, dep := range info.Deps {
			if !strings.Contains(thirdParty, "\n==== "+dep.Path+" "+dep.Version+": ") {
				t.Errorf("THIRD_PARTY_LICENSES has no licence of %s %s, which %s contains", dep.Path, dep.Version, names[i])
			}
		}
	}

	// The check of -s -w can fail: the tests' own a2a, built plainly, has
	// DWARF and (but on Mach-O, see unstripped) a symbol table.
	left := unstripped(t, binary)
	if !strings.Contains(left, "DWARF") || (runtime.GOOS != "darwin" && !strings.Contains(left, "symbol table")) {
		t.Errorf("a plain go build of a2a should have a symbol table and DWARF, found %q", left)
	}

	out, err := exec.Command(filepath.Join(dist, names[1]), "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", names[1], err)
	}
	t.Logf("%s version (tree modified: %v):\n%s", names[1], dirty, out)
	checkVersionText(t, names[1]+" version", string(out), head, dirty)
}

// unstripped says what of a symbol table and DWARF data the executable
// at path has ("" for neither), whether it is ELF, PE or Mach-O.
func unstripped(t *testing.T, path string) string {
	t.Helper()
	var symbols bool
	var sections []string
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		for _, s := range f.Sections {
			sections = append(sections, s.Name)
			symbols = symbols || s.Name == ".symtab"
		}
	} else if f, err := pe.Open(path); err == nil {
		defer f.Close()
		symbols = len(f.Symbols) > 0
		for _, s := range f.Sections {
			sections = append(sections, s.Name)
		}
	} else if f, err := macho.Open(path); err == nil {
		defer f.Close()
		// A Mach-O executable keeps the symbols dyld needs after -s; only
		// its DWARF is checked.
		for _, s := range f.Sections {
			sections = append(sections, s.Name)
		}
	} else {
		t.Fatalf("%s is neither ELF, PE nor Mach-O", path)
	}
	var left []string
	if symbols {
		left = append(left, "a symbol table")
	}
	for _, name := range sections {
		if strings.HasPrefix(strings.TrimLeft(name, "._"), "debug_") || strings.HasPrefix(strings.TrimLeft(name, "._"), "zdebug_") {
			left = append(left, "DWARF ("+name+")")
			break
		}
	}
	return strings.Join(left, " and ")
}

// readFile returns the content of the file at path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// checkVersionText checks that the output of a2a version names revision
// and says (modified) exactly when dirty.
func checkVersionText(t *testing.T, what, text, revision string, dirty bool) {
	t.Helper()
	if !strings.Contains(text, "revision "+revision) {
		t.Errorf("%s: %q does not name the revision %s", what, text, revision)
	}
	if got := strings.Contains(text, "(modified)"); got != dirty {
		t.Errorf("%s: %q says (modified) %v, want %v (git status --porcelain)", what, text, got, dirty)
	}
}

// binaryName is the release file name of a2a for platform ("os/arch").
func binaryName(platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	name := "a2a_" + goos + "_" + goarch
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// git runs git in dir and returns its output without the final newline.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSuffix(string(out), "\n")
}

// mirror makes a plain clone of the checkout at root, at commit head, in a
// temporary directory, and copies the working tree's state over it:
// tracked files as they are now (edited, or deleted), and untracked files
// git does not ignore. The clone then holds what root's working tree
// holds, modified exactly when root's is, and a .git directory: Go stamps no VCS
// information in a linked worktree, whose .git is a file (golang/go#58218).
func mirror(t *testing.T, root, head string) string {
	t.Helper()
	dir := t.TempDir()
	// --shared borrows root's objects (no copy), which also finds a head
	// that no branch points at.
	git(t, root, "clone", "--quiet", "--shared", "--no-checkout", root, dir)
	git(t, dir, "checkout", "--quiet", "--detach", head)
	names := map[string]bool{}
	for _, list := range []string{
		git(t, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"),
		git(t, root, "ls-tree", "-r", "-z", "--name-only", head),
	} {
		for name := range strings.SplitSeq(list, "\x00") {
			if name != "" {
				names[name] = true
			}
		}
	}
	for name := range names {
		from, to := filepath.Join(root, filepath.FromSlash(name)), filepath.Join(dir, filepath.FromSlash(name))
		fi, err := os.Lstat(from)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			continue
		case err != nil:
			t.Fatal(err)
		case !fi.Mode().IsRegular():
			t.Fatalf("mirror: %s is not a regular file (%v); copy it by hand", name, fi.Mode())
		}
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		// Remove first: WriteFile keeps an existing file's mode.
		if err := os.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	// What is staged in root is unstaged in the clone, so the two
	// statuses differ in their columns, not in being empty.
	if got, want := git(t, dir, "status", "--porcelain"), git(t, root, "status", "--porcelain"); (got == "") != (want == "") {
		t.Fatalf("mirror: the clone's git status\n%s\nand the checkout's\n%s\ndisagree on whether the tree is modified", got, want)
	}
	return dir
}
