package cli

import (
	"path/filepath"
	"regexp"
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
		{"postgres:host=/var/run/postgresql dbname=a2a user=a2a password=s3cret", storePostgres, "host=/var/run/postgresql dbname=a2a user=a2a password=s3cret", "PostgreSQL a2a@/var/run/postgresql/a2a, schema \"a2a_test_runner\" (named after the agent)"},
		{"postgres://a2a:s3cret@db.internal:5432/a2a", storePostgres, "postgres://a2a:s3cret@db.internal:5432/a2a", "PostgreSQL a2a@db.internal:5432/a2a, schema \"a2a_test_runner\" (named after the agent)"},
		{"postgresql://a2a@db.internal/a2a?password=s3cret", storePostgres, "postgresql://a2a@db.internal/a2a?password=s3cret", "PostgreSQL a2a@db.internal:5432/a2a, schema \"a2a_test_runner\" (named after the agent)"},
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

func TestAgentSchema(t *testing.T) {
	long := strings.Repeat("very long agent name ", 10)
	for in, want := range map[string]string{
		"echo":                   "a2a_echo",
		"test-runner":            "a2a_test_runner",
		"code-reviewer":          "a2a_code_reviewer",
		"Echo Agent":             "a2a_echo_agent",
		"  --v1.2 agent!! ":      "a2a_v1_2_agent",
		`x"; DROP SCHEMA public`: "a2a_x_drop_schema_public",
		"public":                 "a2a_public",
		"pg_catalog":             "a2a_pg_catalog",
	} {
		if got := agentSchema(in); got != want {
			t.Errorf("agentSchema(%q) = %q, want %q", in, got, want)
		}
	}
	// Nothing left, or too long: a hash of the whole name keeps agents apart.
	for _, pair := range [][2]string{{"エージェント", "代理人"}, {long + "a", long + "b"}} {
		a, b := agentSchema(pair[0]), agentSchema(pair[1])
		if a == b {
			t.Errorf("agentSchema(%q) = agentSchema(%q) = %q", pair[0], pair[1], a)
		}
		for _, s := range []string{a, b} {
			if len(s) > maxSchema || !regexp.MustCompile(`^a2a_[a-z0-9_]*[a-z0-9]$`).MatchString(s) {
				t.Errorf("agentSchema gave %q (%d bytes; at most %d)", s, len(s), maxSchema)
			}
		}
	}
	if got := len(agentSchema(long)); got != maxSchema {
		t.Errorf("a long name's schema has %d bytes, want the most that fit, %d", got, maxSchema)
	}
	if maxSchema != 47 {
		t.Errorf("maxSchema = %d, want 63 - len(\"a2a_task_events.\") = 47", maxSchema)
	}
}

func TestDSNSchema(t *testing.T) {
	tests := []struct {
		dsn    string
		schema string
		ok     bool
	}{
		{"host=/tmp dbname=a2a", "", false},
		{"host=/tmp dbname=a2a search_path=agents", "agents", true},
		{"host=/tmp dbname=a2a search_path=Agents,public", "agents", true},
		{`host=/tmp dbname=a2a search_path='"My Agents", public'`, "My Agents", true},
		{`host=/tmp dbname=a2a search_path='"a""b"'`, `a"b`, true},
		{`host=/tmp search_path='"$user", public'`, "", true},
		{`host=/tmp search_path='$user'`, "", true},
		{"postgres://u@db/a2a?search_path=shared", "shared", true},
		{"postgres://u@db/a2a?options=-c%20search_path%3Dshared", "", true},
		{"host='unterminated", "", false},
	}
	for _, tt := range tests {
		schema, ok := dsnSchema(tt.dsn)
		if schema != tt.schema || ok != tt.ok {
			t.Errorf("dsnSchema(%q) = %q, %v; want %q, %v", tt.dsn, schema, ok, tt.schema, tt.ok)
		}
	}
}

// TestStoreSchemaResolve: which schema a serve uses, and how the banner
// says so.
func TestStoreSchemaResolve(t *testing.T) {
	const dsn = "host=/var/run/postgresql dbname=a2a user=a2a"
	tests := []struct {
		args     []string
		schema   string
		describe string
	}{
		{[]string{"--store", "postgres:" + dsn}, "a2a_test_runner",
			`PostgreSQL a2a@/var/run/postgresql/a2a, schema "a2a_test_runner" (named after the agent)`},
		{[]string{"--store", "postgres:" + dsn, "--store-schema", "Shared Tasks"}, "Shared Tasks",
			`PostgreSQL a2a@/var/run/postgresql/a2a, schema "Shared Tasks" (--store-schema)`},
		{[]string{"--store", "postgres:" + dsn + " search_path=agents", "--store-schema", "public"}, "public",
			`PostgreSQL a2a@/var/run/postgresql/a2a, schema "public" (--store-schema)`},
		{[]string{"--store", "postgres:" + dsn + " search_path=agents,public"}, "agents",
			`PostgreSQL a2a@/var/run/postgresql/a2a, schema "agents" (the DSN's search_path)`},
		{[]string{"--store", "postgres:" + dsn + ` search_path='"$user",public'`}, "",
			`PostgreSQL a2a@/var/run/postgresql/a2a, the connection's current schema (the DSN's search_path)`},
		{[]string{"--store", "postgres:" + dsn, "--config", writeConfig(t, `{"store-schema": "from_file"}`)}, "from_file",
			`PostgreSQL a2a@/var/run/postgresql/a2a, schema "from_file" (--store-schema)`},
		{[]string{"--store", "postgres:" + dsn, "--store-schema", "flag", "--config", writeConfig(t, `{"store-schema": "from_file"}`)}, "flag",
			`PostgreSQL a2a@/var/run/postgresql/a2a, schema "flag" (--store-schema)`},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		cfg, code := parseServeArgs(tt.args, &stderr)
		if cfg == nil {
			t.Errorf("%q: exit %d: %s", tt.args, code, stderr.String())
			continue
		}
		sp := cfg.storeSpec.resolve("/data", "test-runner")
		if sp.schema != tt.schema {
			t.Errorf("%q: schema %q, want %q", tt.args, sp.schema, tt.schema)
		}
		if got := sp.describe(); got != tt.describe {
			t.Errorf("%q: describes itself as\n%s\nwant\n%s", tt.args, got, tt.describe)
		}
	}
}

func TestStoreSchemaUsage(t *testing.T) {
	pg := []string{"--store", "postgres:host=/tmp dbname=a2a"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--store-schema", "a2a_echo"}, "--store-schema applies to the PostgreSQL store, not sqlite"},
		{[]string{"--store", "memory", "--store-schema", "a2a_echo"}, "--store-schema applies to the PostgreSQL store, not memory"},
		{append(pg, "--store-schema", ""), "--store-schema must not be empty"},
		{append(pg, "--store-schema", strings.Repeat("s", 48)), "is 48 bytes long; at most 47 fit"},
		{append(pg, "--store-schema", "pg_tasks"), "names beginning with pg_ are reserved"},
		{append(pg, "--store-schema", "a\x00b"), "must not hold a NUL byte"},
		{append(pg, "--config", writeConfig(t, `{"store-schema": ""}`)), "--store-schema must not be empty"},
	} {
		var stderr strings.Builder
		cfg, code := parseServeArgs(tt.args, &stderr)
		if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want a usage error with %q", tt.args, code, stderr.String(), tt.want)
		}
	}
	var stderr strings.Builder
	if cfg, _ := parseServeArgs(append(pg, "--store-schema", strings.Repeat("s", 47)), &stderr); cfg == nil {
		t.Errorf("a 47-byte --store-schema is refused: %s", stderr.String())
	}
}
