// Package depcheck holds a test of the module's build graph: a program
// that imports only the core packages compiles none of the optional ones.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// core are the packages a program embedding goa2a needs at least.
var core = []string{
	"github.com/goa2a/a2a/a2a",
	"github.com/goa2a/a2a/server",
	"github.com/goa2a/a2a/client",
	"github.com/goa2a/a2a/store",
	"github.com/goa2a/a2a/store/memory",
}

// optional are the import path prefixes only opting-in packages may bring:
// gRPC and protobuf, OpenTelemetry, Prometheus, the SQL stores' drivers.
var optional = []string{
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
	"go.opentelemetry.io/",
	"github.com/prometheus/",
	"github.com/jackc/",
	"modernc.org/",
	"database/sql",
	"github.com/goa2a/a2a/server/a2agrpc",
	"github.com/goa2a/a2a/client/grpcclient",
	"github.com/goa2a/a2a/store/sqlite",
	"github.com/goa2a/a2a/store/postgres",
	"github.com/goa2a/a2a/serve",
	"github.com/goa2a/a2a/a2aotel",
	"github.com/goa2a/a2a/a2aprom",
}

// TestCoreDeps: go list -deps of the core packages names none of the
// optional ones.
func TestCoreDeps(t *testing.T) {
	out, err := exec.Command("go", append([]string{"list", "-deps"}, core...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < len(core) {
		t.Fatalf("go list -deps listed %d packages: %s", len(deps), out)
	}
	for _, dep := range deps {
		for _, opt := range optional {
			if dep == strings.TrimSuffix(opt, "/") || strings.HasPrefix(dep, strings.TrimSuffix(opt, "/")+"/") {
				t.Errorf("the core packages depend on %s", dep)
			}
		}
	}
}
