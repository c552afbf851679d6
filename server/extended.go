package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// DefaultExtendedCardMaxAge is how long a client may reuse an extended
// agent card fetched with GET (the HTTP+JSON binding) before revalidating
// it, when [WithExtendedCardMaxAge] is not given.
const DefaultExtendedCardMaxAge = 5 * time.Minute

// WithExtendedCardMaxAge sets the max-age of the Cache-Control header on a
// GetExtendedAgentCard answer to GET (the HTTP+JSON binding). The default
// is [DefaultExtendedCardMaxAge]; 0 makes clients revalidate every time,
// which costs a 304 when the card is unchanged. The answer is always
// private: it belongs to one caller, and shared caches must not keep it.
// A negative age is an error.
func WithExtendedCardMaxAge(d time.Duration) Option {
	return func(h *Handler) error {
		if d < 0 {
			return fmt.Errorf("server: WithExtendedCardMaxAge: negative max age %v", d)
		}
		h.extendedMaxAge = d
		return nil
	}
}

// PrincipalFrom returns the principal [WithPrincipal] attached to ctx, or
// "" for an anonymous call. An extended card source reads it to vary the
// card by caller.
func PrincipalFrom(ctx context.Context) string { return principalFrom(ctx) }

// GetExtendedAgentCard returns the card for authenticated callers (A2A
// §3.1.11, §13.3).
//
// The call needs an authenticated caller, one the authenticator in front
// of the Handler named with [WithPrincipal]. Behind the authenticators of
// package auth an anonymous call never gets this far; when none is
// installed, an anonymous call is refused here with UnauthenticatedError
// (JSON-RPC -31401, HTTP 401) naming the schemes the public card declares,
// so that forgetting the middleware does not publish the extended card.
//
// The card source ([WithExtendedCard]) receives ctx, with the principal in
// it, so the card may differ per caller. What it returns is validated as
// the public card is (name, version, interfaces); an invalid card is an
// internal error, logged, and not sent.
func (h *Handler) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return unary(h, ctx, a2a.MethodGetExtendedAgentCard, req, h.getExtendedAgentCard)
}

func (h *Handler) getExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if err := h.begin(ctx); err != nil {
		return nil, err
	}
	if !h.card.Capabilities.SupportsExtendedCard() {
		return nil, a2a.NewError(a2a.CodeUnsupportedOperation, "this agent declares no extended agent card")
	}
	if principalFrom(ctx) == "" {
		return nil, h.unauthenticated()
	}
	if h.extended == nil {
		return nil, a2a.NewError(a2a.CodeExtendedAgentCardNotConfigured, "")
	}
	c, err := h.extended(ctx)
	if err != nil {
		return nil, a2a.AsError(err)
	}
	if c == nil {
		return nil, a2a.NewError(a2a.CodeExtendedAgentCardNotConfigured, "")
	}
	if err := validateCard(c); err != nil {
		h.log.Error("invalid extended agent card", "err", err)
		return nil, a2a.NewError(a2a.CodeInternal, "the extended agent card is invalid")
	}
	return c, nil
}

// unauthenticated is the error for an anonymous GetExtendedAgentCard: it
// says what is missing and which schemes the public card declares.
func (h *Handler) unauthenticated() *a2a.Error {
	schemes := make([]string, 0, len(h.card.SecuritySchemes))
	for name := range h.card.SecuritySchemes {
		schemes = append(schemes, name)
	}
	slices.Sort(schemes)
	msg := "GetExtendedAgentCard needs an authenticated caller: send the credentials of one of the security schemes the agent card declares"
	if len(schemes) == 0 {
		msg = "GetExtendedAgentCard needs an authenticated caller, and this server authenticates no one: its agent card declares no security schemes"
	}
	e := a2a.NewError(a2a.CodeUnauthenticated, msg)
	if len(schemes) > 0 {
		e = e.With("schemes", strings.Join(schemes, ","))
	}
	return e
}

// ExtendedCardMaxAge is how long a client may reuse the extended card
// fetched with GET ([WithExtendedCardMaxAge]); the HTTP+JSON binding
// writes it as Cache-Control.
func (h *Handler) ExtendedCardMaxAge() time.Duration { return h.extendedMaxAge }
