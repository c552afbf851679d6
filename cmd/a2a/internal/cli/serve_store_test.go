package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store/postgres"
)

// testPostgres is the PostgreSQL server of the tests (A2A_TEST_POSTGRES,
// as in crash_test.go).
func testPostgres() string {
	if dsn := os.Getenv("A2A_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return "host=/var/run/postgresql dbname=test"
}

// freshDatabases numbers the databases of this test process.
var freshDatabases atomic.Int64

// freshDatabase creates a database of its own for the test on the
// PostgreSQL server of postgresDSN (dropped at the end, with the
// connections still open to it), so that servers in their default schemas
// meet no one else's tasks. It returns its name and a DSN for it.
func freshDatabase(t *testing.T) (name, dsn string) {
	t.Helper()
	name = fmt.Sprintf("a2a_cli_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, freshDatabases.Add(1))
	adminExec(t, testPostgres(), "CREATE DATABASE "+name)
	t.Cleanup(func() { adminExec(t, testPostgres(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return name, withDSN(t, testPostgres(), "dbname", name)
}

// adminExec runs SQL statements on dsn with the tests' role.
func adminExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("PostgreSQL is not reachable at %q (start it with .ci/postgres-up): %v", dsn, err)
	}
	defer conn.Close(context.Background())
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// withDSN returns dsn with a connection parameter set, in either form.
func withDSN(t *testing.T, dsn, key, value string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if key == "dbname" {
			u.Path = "/" + value
		} else {
			q := u.Query()
			q.Set(key, value)
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return dsn + " " + key + "='" + strings.ReplaceAll(value, "'", `\'`) + "'"
}

// sendTask sends text to a server and returns the id of the task made.
func sendTask(t *testing.T, ts *testServe, text string) string {
	t.Helper()
	res, err := ts.client(t, a2a.BindingJSONRPC).SendMessage(t.Context(), textRequest(text))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage answered %T, want a task", res.Result)
	}
	return task.ID
}

// listTasks returns the ids of the tasks a server lists, sorted.
func listTasks(t *testing.T, ts *testServe) []string {
	t.Helper()
	res, err := ts.client(t, a2a.BindingHTTPJSON).ListTasks(t.Context(), &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range res.Tasks {
		ids = append(ids, task.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }

// TestPostgresAgentsKeptApart: servers of two agents on one database, in
// their default schemas, never see each other's tasks; two servers of one
// agent (replicas) see each other's.
func TestPostgresAgentsKeptApart(t *testing.T) {
	t.Parallel()
	_, dsn := freshDatabase(t)
	echoA := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn)
	echoB := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn)
	runner := startServe(t, "--agent", "test-runner", "--exec", "true", "--store", "postgres:"+dsn)
	for ts, schema := range map[*testServe]string{echoA: "a2a_echo", echoB: "a2a_echo", runner: "a2a_test_runner"} {
		want := fmt.Sprintf(`, schema "%s" (named after the agent)`, schema)
		if out := ts.stdout.String(); !strings.Contains(out, want) || strings.Contains(out, "note") {
			t.Errorf("the banner does not say %q (or has a note):\n%s", want, out)
		}
	}

	e1 := sendTask(t, echoA, "hello from A")
	e2 := sendTask(t, echoB, "hello from B")
	r1 := sendTask(t, runner, "Run the unit tests")
	for _, ts := range []*testServe{echoA, echoB} {
		if got, want := listTasks(t, ts), sorted(e1, e2); !slices.Equal(got, want) {
			t.Errorf("an echo server lists %q, want the two echo tasks %q", got, want)
		}
	}
	if got := listTasks(t, runner); !slices.Equal(got, []string{r1}) {
		t.Errorf("the test runner lists %q, want only its own task %q", got, r1)
	}
	// Not even by id.
	if _, err := echoA.client(t, a2a.BindingJSONRPC).GetTask(t.Context(), &a2a.GetTaskRequest{ID: r1}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask of the test runner's task on an echo server: %v, want TaskNotFoundError", err)
	}
	if _, err := runner.client(t, a2a.BindingJSONRPC).GetTask(t.Context(), &a2a.GetTaskRequest{ID: e1}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask of an echo task on the test runner: %v, want TaskNotFoundError", err)
	}
	if task, err := echoB.client(t, a2a.BindingJSONRPC).GetTask(t.Context(), &a2a.GetTaskRequest{ID: e1}); err != nil || task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("GetTask on replica B of the task sent to A: %v, %v", task, err)
	}
}

// TestPostgresSchemaChosen: --store-schema (or the config file) and the
// DSN's search_path put agents where they are told, sharing if told so,
// creating the schema.
func TestPostgresSchemaChosen(t *testing.T) {
	t.Parallel()
	_, dsn := freshDatabase(t)
	maxName := strings.Repeat("Z", maxSchema-4) + ".\"x" // quoted as written, and the longest that fits
	echo := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn, "--store-schema", "Shared Tasks")
	runner := startServe(t, "--agent", "test-runner", "--exec", "true", "--store", "postgres:"+dsn,
		"--config", writeConfig(t, `{"store-schema": "Shared Tasks"}`))
	byPath := startServe(t, "--agent", "echo", "--store", "postgres:"+withDSN(t, dsn, "search_path", "agents, public"))
	long := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn, "--store-schema", maxName)
	if want := `schema "Shared Tasks" (--store-schema)`; !strings.Contains(runner.stdout.String(), want) {
		t.Errorf("the banner does not say %q:\n%s", want, runner.stdout.String())
	}
	if want := `schema "agents" (the DSN's search_path)`; !strings.Contains(byPath.stdout.String(), want) {
		t.Errorf("the banner does not say %q:\n%s", want, byPath.stdout.String())
	}
	e := sendTask(t, echo, "hello")
	r := sendTask(t, runner, "Run the unit tests")
	p := sendTask(t, byPath, "hello")
	l := sendTask(t, long, "hello")
	for _, ts := range []*testServe{echo, runner} {
		if got, want := listTasks(t, ts), sorted(e, r); !slices.Equal(got, want) {
			t.Errorf("a server on --store-schema \"Shared Tasks\" lists %q, want both agents' tasks %q", got, want)
		}
	}
	if got := listTasks(t, byPath); !slices.Equal(got, []string{p}) {
		t.Errorf("the server on search_path=agents lists %q, want %q", got, []string{p})
	}
	if got := listTasks(t, long); !slices.Equal(got, []string{l}) {
		t.Errorf("the server on a %d-byte schema lists %q, want %q", len(maxName), got, []string{l})
	}

	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := sorted("Shared Tasks", "agents", "public", maxName); !slices.Equal(schemas, want) {
		t.Errorf("schemas %q, want %q (no default schema made)", schemas, want)
	}
}

// TestPostgresSchemaWithoutCreate: a role that may not create the schema
// or its tables gets an error that says what failed and names the flag
// and the privilege that fix it; doing what it says works.
func TestPostgresSchemaWithoutCreate(t *testing.T) {
	t.Parallel()
	// A new role, in a database of its own where it has no CREATE
	// privilege; dropped after the database, which holds its schema.
	role := fmt.Sprintf("a2a_cli_role_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, freshDatabases.Add(1))
	adminExec(t, testPostgres(), "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { adminExec(t, testPostgres(), "DROP ROLE IF EXISTS "+role) })
	db, adminDSN := freshDatabase(t)
	dsn := withDSN(t, adminDSN, "user", role)

	serveFails := func(args ...string) string {
		t.Helper()
		var stdout, stderr syncBuffer
		code := serveCommand(t.Context(), append([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--store", "postgres:" + dsn}, args...), &stdout, &stderr)
		if code != ExitError {
			t.Fatalf("a2a serve %q as a role without CREATE: exit %d, want %d\n%s%s", args, code, ExitError, stdout.String(), stderr.String())
		}
		return stderr.String()
	}
	want := func(msg string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(msg, p) {
				t.Errorf("the error does not say %q:\n%s", p, msg)
			}
		}
	}

	msg := serveFails("--agent", "echo")
	want(msg, `creating schema "a2a_echo"`, "permission denied", "(SQLSTATE 42501)",
		fmt.Sprintf(`role "%s" has no CREATE privilege on database "%s"`, role, db),
		"--store-schema NAME",
		fmt.Sprintf(`CREATE SCHEMA "a2a_echo" AUTHORIZATION "%s"`, role),
		fmt.Sprintf(`GRANT CREATE ON DATABASE "%s" TO "%s"`, db, role))
	msg = serveFails("--agent", "echo", "--store-schema", "public")
	want(msg, "permission denied", fmt.Sprintf(`role "%s" has no CREATE privilege on schema "public"`, role),
		"--store-schema NAME", fmt.Sprintf(`GRANT CREATE ON SCHEMA "public" TO "%s"`, role))
	if t.Failed() {
		return
	}

	// The first fix it names.
	adminExec(t, adminDSN, fmt.Sprintf(`CREATE SCHEMA "a2a_echo" AUTHORIZATION "%s"`, role))
	ts := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn)
	id := sendTask(t, ts, "hello")
	if got := listTasks(t, ts); !slices.Equal(got, []string{id}) {
		t.Errorf("lists %q, want %q", got, []string{id})
	}

	// An empty schema an administrator made: the role needs USAGE and
	// CREATE on it.
	adminExec(t, adminDSN, "CREATE SCHEMA empty")
	msg = serveFails("--agent", "echo", "--store-schema", "empty")
	want(msg, fmt.Sprintf(`role "%s" has no USAGE and CREATE privileges on schema "empty"`, role),
		"--store-schema NAME", fmt.Sprintf(`GRANT USAGE, CREATE ON SCHEMA "empty" TO "%s"`, role))
	adminExec(t, adminDSN, fmt.Sprintf(`GRANT USAGE, CREATE ON SCHEMA "empty" TO "%s"`, role))
	startServe(t, "--agent", "echo", "--store", "postgres:"+dsn, "--store-schema", "empty").stop(t)

	// A schema an administrator made, with the store's tables: the role
	// needs USAGE, then the rights on the tables, and no CREATE.
	st, err := postgres.Open(t.Context(), adminDSN, postgres.Options{Schema: "made"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	msg = serveFails("--agent", "echo", "--store-schema", "made")
	grantTables := fmt.Sprintf(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "made" TO "%s"`, role)
	want(msg, "permission denied", fmt.Sprintf(`role "%s" has no USAGE privilege on schema "made"`, role),
		"--store-schema NAME", fmt.Sprintf(`GRANT USAGE ON SCHEMA "made" TO "%s"; %s`, role, grantTables))
	adminExec(t, adminDSN, fmt.Sprintf(`GRANT USAGE ON SCHEMA "made" TO "%s"`, role))
	msg = serveFails("--agent", "echo", "--store-schema", "made")
	want(msg, "permission denied", fmt.Sprintf(`role "%s" lacks a privilege on the store's tables in schema "made"`, role),
		"--store-schema NAME", grantTables)
	if t.Failed() {
		return
	}
	adminExec(t, adminDSN, grantTables)
	ts = startServe(t, "--agent", "echo", "--store", "postgres:"+dsn, "--store-schema", "made")
	id = sendTask(t, ts, "hello")
	if got := listTasks(t, ts); !slices.Equal(got, []string{id}) {
		t.Errorf("lists %q, want %q", got, []string{id})
	}
}

// TestPostgresOlderSchemaNote: tasks that a2a serve kept in the
// connection's schema before schemas per agent are not lost: a server in
// the new default schema says where they are and how to serve them, and
// --store-schema public does.
func TestPostgresOlderSchemaNote(t *testing.T) {
	t.Parallel()
	_, dsn := freshDatabase(t)
	old := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn, "--store-schema", "public")
	id := sendTask(t, old, "stored before the upgrade")
	if code := old.stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}

	upgraded := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn)
	want := `note        schema "public" holds 1 task of an older a2a serve, which kept every agent's tasks there; ` +
		`this agent's schema "a2a_echo" holds none. To go on serving them, pass --store-schema public`
	if out := upgraded.stdout.String(); !strings.Contains(out, want) {
		t.Errorf("the banner does not say\n%s\nit is:\n%s", want, out)
	}
	if !strings.Contains(upgraded.stderr.String(), "level=WARN") || !strings.Contains(upgraded.stderr.String(), "--store-schema public") {
		t.Errorf("no warning logged:\n%s", upgraded.stderr.String())
	}
	if got := listTasks(t, upgraded); len(got) != 0 {
		t.Errorf("the new schema lists %q", got)
	}
	mine := sendTask(t, upgraded, "stored after")
	upgraded.stop(t)

	// Once the agent's schema has tasks of its own, no more note.
	again := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn)
	if out := again.stdout.String(); strings.Contains(out, "note") {
		t.Errorf("a note although the agent's schema has tasks:\n%s", out)
	}
	if got := listTasks(t, again); !slices.Equal(got, []string{mine}) {
		t.Errorf("lists %q, want %q", got, []string{mine})
	}
	migrated := startServe(t, "--agent", "echo", "--store", "postgres:"+dsn, "--store-schema", "public")
	if got := listTasks(t, migrated); !slices.Equal(got, []string{id}) {
		t.Errorf("--store-schema public lists %q, want the task stored before %q", got, []string{id})
	}
}
