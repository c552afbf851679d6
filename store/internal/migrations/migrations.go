// Package migrations reads a store's embedded schema migrations: SQL files
// named NNNN_what.sql in a directory "migrations", numbered 1, 2, 3, ...
// How they are applied (transactions, locks) is each store's business.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load returns the migrations of fsys in order, checking that their
// versions run 1, 2, 3, ... without a gap and end at want: anything else
// is a packaging mistake.
func Load(fsys fs.FS, want int) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("reading migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a version number", e.Name())
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("migration %s has version %d, want %d", e.Name(), v, len(ms)+1)
		}
		b, err := fs.ReadFile(fsys, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	if len(ms) != want {
		return nil, fmt.Errorf("%d migrations embedded, but the schema version is %d", len(ms), want)
	}
	return ms, nil
}
