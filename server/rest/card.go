package rest

import (
	"context"
	"net/http"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server/internal/wire"
)

// extendedCard answers GET /extendedAgentCard: the card with the caching
// headers the server chooses (wire.ExtendedCardHeaders), or
// 304 Not Modified when the client's If-None-Match still matches.
func (rh *Handler) extendedCard(ctx context.Context, w http.ResponseWriter, r *http.Request, rt route) {
	card, err := rh.h.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{Tenant: rt.tenant})
	if err != nil {
		rh.writeError(w, 0, err)
		return
	}
	b, err := wire.AppendJSON(nil, card)
	if err != nil {
		rh.cfg.Log.Error("encoding HTTP+JSON response", "err", err)
		rh.writeError(w, 0, a2a.NewError(a2a.CodeInternal, ""))
		return
	}
	if wire.ExtendedCardHeaders(w.Header(), rh.h.ExtendedCardMaxAge(), r.Method, r.Header.Get("If-None-Match"), b) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK) // Content-Type: set by ServeHTTP
	if _, err := w.Write(b); err != nil {
		rh.cfg.Log.Debug("writing HTTP+JSON response", "err", err)
	}
}
