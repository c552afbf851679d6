package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStoreSpec(t *testing.T) {
	tests := []struct {
		in, kind, arg, describe string
	}{
		{"memory", storeMemory, "", "memory (gone at exit)"},
		{"sqlite", storeSQLite, filepath.Join("/data", "test-runner.db"), "SQLite " + filepath.Join("/data", "test-runner.db")},
		{"sqlite:/var/lib/a2a/x.db", storeSQLite, "/var/lib/a2a/x.db", "SQLite /var/lib/a2a/x.db"},
		{"postgres:host=/var/run/postgresql dbname=a2a user=a2a password=s3cret", storePostgres, "host=/var/run/postgresql dbname=a2a user=a2a password=s3cret", "PostgreSQL a2a@/var/run/postgresql/a2a"},
		{"postgres://a2a:s3cret@db.internal:5432/a2a", storePostgres, "postgres://a2a:s3cret@db.internal:5432/a2a", "PostgreSQL a2a@db.internal:5432/a2a"},
		{"postgresql://a2a@db.internal/a2a?password=s3cret", storePostgres, "postgresql://a2a@db.internal/a2a?password=s3cret", "PostgreSQL a2a@db.internal:5432/a2a"},
	}
	for _, tt := range tests {
		sp, err := parseStoreSpec(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		sp = sp.resolve("/data", "test-runner")
		if sp.kind != tt.kind || sp.arg != tt.arg {
			t.Errorf("%q = %+v, want kind %q arg %q", tt.in, sp, tt.kind, tt.arg)
		}
		if got := sp.describe(); got != tt.describe {
			t.Errorf("%q describes itself as %q, want %q", tt.in, got, tt.describe)
		}
	}
	for _, bad := range []string{"", "sqlite:", "postgres:", "redis://x", "Memory"} {
		if _, err := parseStoreSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"test-runner":       "test-runner",
		"Echo Agent":        "echo-agent",
		"../../etc/passwd":  "etc-passwd",
		"command: sh -c ls": "command-sh-c-ls",
		"???":               "tasks",
		"v1.2 agent":        "v1.2-agent",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	for _, dsn := range []string{
		"host=db password='s3cr et' user=u dbname=d",
		"postgres://u:s3cret@db/d",
		"postgres://db/d?password=s3cret&user=u",
		"host=db dbname=d password=s3cret",
	} {
		got := redactDSN(dsn)
		if strings.Contains(got, "s3cr") {
			t.Errorf("redactDSN(%q) = %q shows the password", dsn, got)
		}
		if !strings.Contains(got, "db") {
			t.Errorf("redactDSN(%q) = %q does not say where", dsn, got)
		}
	}
	if got := redactDSN("host='unterminated"); strings.Contains(got, "unterminated") {
		t.Errorf("an unparsable DSN is shown: %q", got)
	}
}
