package capture

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// IDs pairs the ids a recording generated with the ones our server
// generated, one to one, so a replay can compare answers and translate
// later requests.
type IDs struct {
	ours   map[string]string // recorded -> ours
	theirs map[string]string // ours -> recorded
	// LooseTime accepts any timestamp instead of the recorded one.
	LooseTime bool
}

// NewIDs returns an empty pairing.
func NewIDs() *IDs { return &IDs{ours: map[string]string{}, theirs: map[string]string{}} }

// Ours returns our id for a recorded one.
func (m *IDs) Ours(recorded string) string { return m.ours[recorded] }

func (m *IDs) pair(recorded, ours string) error {
	if o, ok := m.ours[recorded]; ok {
		if o != ours {
			return fmt.Errorf("id %q was %q before, now %q", recorded, o, ours)
		}
		return nil
	}
	if r, ok := m.theirs[ours]; ok && r != recorded {
		return fmt.Errorf("our id %q stands for both %q and %q", ours, r, recorded)
	}
	m.ours[recorded], m.theirs[ours] = ours, recorded
	return nil
}

// Translate rewrites the recorded ids in s into ours.
func (m *IDs) Translate(s string) string {
	for r, o := range m.ours {
		if r != o && r != "" {
			s = strings.ReplaceAll(s, r, o)
		}
	}
	return s
}

// idKeys are the members whose string values are generated ids.
var idKeys = map[string]bool{"id": true, "contextId": true, "taskId": true, "messageId": true, "nextPageToken": true}

// Compare walks a recorded and our JSON value together and lists the
// differences: generated ids must correspond one to one (inside texts too,
// such as an approval link), timestamps must be equal unless LooseTime, and
// everything else must be equal.
func (m *IDs) Compare(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			wv, wok := w[k]
			gv, gok := g[k]
			p := path + "." + k
			ws, wIsStr := wv.(string)
			gs, gIsStr := gv.(string)
			switch {
			case !wok:
				diffs = append(diffs, fmt.Sprintf("%s: unexpected member %v", p, gv))
			case !gok:
				diffs = append(diffs, fmt.Sprintf("%s: missing (want %v)", p, wv))
			case k == "timestamp" && m.LooseTime:
				if !gIsStr || !strings.HasSuffix(gs, "Z") {
					diffs = append(diffs, fmt.Sprintf("%s: bad timestamp %v", p, gv))
				}
			case idKeys[k] && wIsStr && gIsStr:
				if err := m.pair(ws, gs); err != nil {
					diffs = append(diffs, p+": "+err.Error())
				}
			default:
				diffs = append(diffs, m.Compare(p, wv, gv)...)
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d items %v, got %v", path, len(w), want, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, m.Compare(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	case string:
		if g, ok := got.(string); ok && m.Translate(w) == g {
			return nil
		}
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

// DropEmptyStringLists removes "list": [] from the scheme maps of every
// securityRequirements entry under v, and reports whether it removed any.
// The kit writes a StringList with no scopes as {"list": []}; ProtoJSON,
// and our encoding, omit the empty repeated field and write {}: a known
// difference (docs/kit-differences.md).
func DropEmptyStringLists(v any) bool {
	changed := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if reqs, ok := x["securityRequirements"].([]any); ok {
				for _, r := range reqs {
					schemes, _ := r.(map[string]any)["schemes"].(map[string]any)
					for _, sl := range schemes {
						m, _ := sl.(map[string]any)
						if l, ok := m["list"].([]any); ok && len(l) == 0 {
							delete(m, "list")
							changed = true
						}
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return changed
}
