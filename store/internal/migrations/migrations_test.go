package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	good := fstest.MapFS{"migrations/0001_init.sql": file("A"), "migrations/0002_more.sql": file("B")}
	ms, err := Load(good, 2)
	if err != nil || len(ms) != 2 || ms[0].Version != 1 || ms[1].SQL != "B" || ms[1].Name != "0002_more.sql" {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
	for name, tc := range map[string]struct {
		fsys fstest.MapFS
		want int
		err  string
	}{
		"gap":         {fstest.MapFS{"migrations/0001_a.sql": file(""), "migrations/0003_c.sql": file("")}, 2, "has version 3, want 2"},
		"bad name":    {fstest.MapFS{"migrations/init.sql": file("")}, 1, "must start with a version number"},
		"wrong count": {good, 3, "2 migrations embedded, but the schema version is 3"},
		"no dir":      {fstest.MapFS{}, 1, "reading migrations"},
	} {
		if _, err := Load(tc.fsys, tc.want); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, tc.err)
		}
	}
}
