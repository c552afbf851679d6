//go:build unix

// Package pgtest runs PostgreSQL servers of a test's own, for tests that
// stop and start the server (outages): the machine's shared server, which
// other packages' tests use at the same time, is never touched.
//
// A server lives in a temporary directory: its data directory, and its
// unix socket beside it, without TCP (listen_addresses is empty), so the
// port is only the socket's name and servers of several tests never meet.
// It is made with the installed server binaries (initdb, pg_ctl), found in
// $A2A_PG_BIN, in the newest /usr/lib/postgresql/*/bin, or on the PATH.
// PostgreSQL refuses to run as root: a test run as root runs the server
// as the user postgres (or nobody), which owns the directory.
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Server is a PostgreSQL server of the test that started it.
type Server struct {
	dir  string // the socket's directory; data/ holds the cluster, log the server's log
	bin  string
	cred *syscall.Credential // the server's user when the test runs as root
}

// Start makes a cluster in a new temporary directory and starts its
// server. The server is stopped (immediately) and the directory removed
// when the test ends. Start fails the test, never skips it, when the
// server cannot be made.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "a2a-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{dir: dir, bin: bin}
	t.Cleanup(func() {
		s.ctl("stop", "-m", "immediate", "-w", "-t", "60") // whatever it was doing
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		if s.cred, err = serverUser(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	if err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	s.Start(t)
	return s
}

// DSN is the libpq keyword/value connection string of the server's
// database postgres, as its superuser postgres.
func (s *Server) DSN() string {
	return "host=" + s.dir + " port=5432 user=postgres dbname=postgres"
}

// Dir is the directory of the server's socket (the DSN's host).
func (s *Server) Dir() string { return s.dir }

// Start starts the server (again) and waits until it accepts
// connections.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	opts := "-c listen_addresses='' -k " + s.dir + " -c fsync=off -c max_connections=50 -c shared_buffers=16MB"
	if out, err := s.ctl("start", "-w", "-t", "120", "-l", filepath.Join(s.dir, "log"), "-o", opts); err != nil {
		t.Fatalf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, s.Log())
	}
}

// Stop stops the server with pg_ctl's fast mode, as an operator would:
// open connections are terminated (57P01), and further ones refused, until
// Start.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if out, err := s.ctl("stop", "-m", "fast", "-w", "-t", "120"); err != nil {
		t.Fatalf("pgtest: pg_ctl stop: %v\n%s\n%s", err, out, s.Log())
	}
}

// Log returns what the server has logged.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	return string(b)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) ctl(args ...string) ([]byte, error) {
	return s.run("pg_ctl", append([]string{"-D", s.data()}, args...)...)
}

// run runs one of the server's programs, as the server's user.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, prog), args...)
	cmd.Dir = s.dir
	// Nothing of the test's environment steers the server (PGDATA,
	// PGHOST, ...); pg_ctl needs a PATH to find postgres' helpers.
	cmd.Env = []string{"PATH=" + s.bin + ":/usr/bin:/bin", "LANG=C", "LC_ALL=C", "TZ=UTC"}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		cmd.Env = append(cmd.Env, "HOME="+s.dir)
	}
	// The output goes to a file, not a pipe: the server that pg_ctl start
	// leaves running must not hold a pipe that Wait would wait for.
	out, err := os.CreateTemp("", "a2a-pgtest-out-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		err = fmt.Errorf("%s did not finish in 5 minutes", prog)
	}
	b, _ := os.ReadFile(out.Name())
	return b, err
}

// binDir finds the directory of initdb, pg_ctl and postgres.
func binDir() (string, error) {
	if d := os.Getenv("A2A_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("pgtest: no PostgreSQL server binaries (initdb, pg_ctl, postgres): install them, or set A2A_PG_BIN to their directory")
}

// version reads the major version of /usr/lib/postgresql/N/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// serverUser is the user a root test runs the server as.
func serverUser() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root: no user postgres or nobody to run the server as")
}
