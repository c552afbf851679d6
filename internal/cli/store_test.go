package cli

import (
	"path/filepath"
	"testing"
)

func TestParseStoreSpec(t *testing.T) {
	tests := []struct {
		in, kind, arg, describe string
	}{
		{"memory", storeMemory, "", "memory (gone at exit)"},
		{"sqlite", storeSQLite, "", "SQLite " + filepath.Join("/data", "tasks.db")},
		{"sqlite:/var/lib/a2a/x.db", storeSQLite, "/var/lib/a2a/x.db", "SQLite /var/lib/a2a/x.db"},
		{"postgres:host=/var/run/postgresql dbname=a2a password=s3cret", storePostgres, "host=/var/run/postgresql dbname=a2a password=s3cret", "PostgreSQL host=/var/run/postgresql dbname=a2a password=xxxxx"},
		{"postgres://a2a:s3cret@db.internal:5432/a2a", storePostgres, "postgres://a2a:s3cret@db.internal:5432/a2a", "PostgreSQL postgres://a2a:xxxxx@db.internal:5432/a2a"},
		{"postgresql://db.internal/a2a", storePostgres, "postgresql://db.internal/a2a", "PostgreSQL postgresql://db.internal/a2a"},
	}
	for _, tt := range tests {
		sp, err := parseStoreSpec(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if sp.kind != tt.kind || sp.arg != tt.arg {
			t.Errorf("%q = %+v, want kind %q arg %q", tt.in, sp, tt.kind, tt.arg)
		}
		if got := sp.describe("/data"); got != tt.describe {
			t.Errorf("%q describes itself as %q, want %q", tt.in, got, tt.describe)
		}
	}
	for _, bad := range []string{"", "sqlite:", "postgres:", "redis://x", "Memory"} {
		if _, err := parseStoreSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
