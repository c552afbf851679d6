package lease

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestDead(t *testing.T) {
	self := Self("")
	now := time.Now()
	fresh := now.Add(-time.Second)
	stale := now.Add(-time.Minute)
	ttl := 30 * time.Second

	// A child that has exited and been reaped.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := cmd.Process.Pid

	tests := []struct {
		name string
		r    Runner
		hb   time.Time
		want bool
	}{
		{"self, even stale", self, stale, false},
		{"same process, other store", Runner{ID: "x", Host: self.Host, PID: self.PID}, fresh, false},
		{"stale heartbeat", Runner{ID: "x", Host: "elsewhere", PID: 1}, stale, true},
		{"fresh, other host", Runner{ID: "x", Host: "elsewhere", PID: gone}, fresh, false},
		{"fresh, same host name, other PID namespace", Runner{ID: "x", Host: self.Host + "-other-ns", PID: gone}, fresh, false},
		{"fresh, this host, process gone", Runner{ID: "x", Host: self.Host, PID: gone}, fresh, true},
		{"fresh, this host, process alive", Runner{ID: "x", Host: self.Host, PID: os.Getppid()}, fresh, false},
	}
	for _, tt := range tests {
		if got := Dead(tt.r, tt.hb, self, ttl, now); got != tt.want {
			t.Errorf("%s: Dead = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSelfNamesTheProcessTable(t *testing.T) {
	host, _ := os.Hostname()
	self := Self("")
	if !strings.HasPrefix(self.Host, host) {
		t.Errorf("Host %q does not start with the host name %q", self.Host, host)
	}
	if _, err := os.Stat("/proc/self/ns/pid"); err == nil && !strings.Contains(self.Host, "pid:[") {
		t.Errorf("Host %q lacks the PID namespace", self.Host)
	}
	if Self("").Host != self.Host || Self("").ID == self.ID {
		t.Error("two runners of one process should share the host and differ in id")
	}
}
