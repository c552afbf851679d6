package cli

import (
	"context"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/kit/deployer"
)

// demoCardSignature applies the known difference card-signature: when
// want and got are agent cards whose signature entries have the same
// protected headers (the kit's HS256 header, kid deployer-key-1) and got,
// as the text gtext, verifies with the demo secret, it copies the kit's
// signature values into got and reports true. The kit's secret is not
// recorded, so its values cannot be reproduced (docs/kit-differences.md).
func demoCardSignature(want, got any, gtext string) bool {
	wm, ok1 := want.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	ws, _ := wm["signatures"].([]any)
	gs, _ := gm["signatures"].([]any)
	if len(ws) == 0 || len(ws) != len(gs) {
		return false
	}
	v := &auth.CardVerifier{Keys: auth.CardKeysOf(deployer.DemoSigner()), Algorithms: []string{auth.CardHS256}}
	if _, err := v.Verify(context.Background(), []byte(gtext)); err != nil {
		return false
	}
	changed := false
	for i := range ws {
		w, _ := ws[i].(map[string]any)
		g, _ := gs[i].(map[string]any)
		if w == nil || g == nil || w["protected"] != g["protected"] {
			return false
		}
		if w["signature"] != g["signature"] {
			g["signature"] = w["signature"]
			changed = true
		}
	}
	return changed
}
