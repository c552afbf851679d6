package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/goa2a/a2a/a2a"
)

// ErrExtendedCardInterface is wrapped by the error for an extended agent
// card that does not offer the interface the client calls (the same
// binding, URL and tenant): the client will not describe one endpoint
// with a card that does not list it.
var ErrExtendedCardInterface = errors.New("client: the extended agent card does not offer the interface in use")

// GetExtendedAgentCard fetches the card the agent shows authenticated
// callers (A2A §3.1.11) and puts it to use in place of the card the client
// has, as A2A §3.1.11 and §13.3 ask: from then on [Client.Card] returns it,
// and its capabilities (streaming, for [Client.Follow] and
// [Client.SendAndFollow]) and skills are the ones that count. The
// interface, transport and credentials stay as they are: the extended card
// must offer the interface in use, or the call fails with an error
// wrapping [ErrExtendedCardInterface] and the card in use stays. The card
// is checked as a fetched public card is (name, version, interfaces), then
// by the hook of [WithCardVerifier], if any; with [WithCardSignatures], a
// signed extended card must verify, from the bytes of the result, while an
// unsigned one is accepted (see WithCardSignatures for why). A card that
// fails a check is not put to use: the error is returned (wrapping
// [ErrCardNotVerified] for signatures) and the card in use stays.
//
// The extended card stays in use until the public card's version changes:
// [Client.RefreshCard] keeps it while the public card is fresh, revalidates
// (304) or comes back with the same version, and puts the new public card
// to use when its version changed; call GetExtendedAgentCard again then.
func (c *Client) GetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	st := c.st()
	// The result as received, so that its signatures verify from the
	// bytes their signer covered.
	var raw json.RawMessage
	if err := c.call(ctx, st, opGetExtendedCard, &a2a.GetExtendedAgentCardRequest{Tenant: st.tenant("")}, &raw); err != nil {
		return nil, err
	}
	card := new(a2a.AgentCard)
	if err := unmarshal(raw, card); err != nil {
		return nil, invalidResponseCause(err, "GetExtendedAgentCard: malformed card: %v", err)
	}
	if err := validateCard(card); err != nil {
		return nil, invalidResponseCause(err, "GetExtendedAgentCard: %v", err)
	}
	// A signed extended card is verified as a fetched public card is; an
	// unsigned one is accepted (see WithCardSignatures).
	if len(card.Signatures) > 0 {
		if err := c.checkSignatures(ctx, raw); err != nil {
			return nil, fmt.Errorf("%w (the extended agent card)", err)
		}
	}
	if c.cfg.verifier != nil {
		if err := c.cfg.verifier(ctx, card); err != nil {
			return nil, fmt.Errorf("client: extended agent card verification failed: %w", err)
		}
	}
	c.refresh.Lock()
	defer c.refresh.Unlock()
	cur := c.st()
	if !offers(c.cfg, card, cur.iface) {
		return nil, fmt.Errorf("%w: %s at %q%s", ErrExtendedCardInterface, cur.iface.ProtocolBinding, cur.iface.URL, tenantNote(cur.iface.Tenant))
	}
	next := *cur
	next.card = card
	if next.public == nil {
		next.public = cur.card
	}
	c.state.Store(&next)
	return card, nil
}

// UseExtendedCard puts the extended card to use, as
// [Client.GetExtendedAgentCard] does, when the card in use declares
// capabilities.extendedAgentCard, and returns the card in use. Otherwise it
// sends nothing and returns the card in use. Call it once the client has
// credentials ([WithBearerToken], [WithCredentials], [WithHeader]).
func (c *Client) UseExtendedCard(ctx context.Context) (*a2a.AgentCard, error) {
	card := c.Card()
	if !card.Capabilities.SupportsExtendedCard() {
		return card, nil
	}
	return c.GetExtendedAgentCard(ctx)
}

// offers reports whether card lists in: the same binding (in any case),
// URL and tenant, at this client's protocol version.
func offers(cfg *config, card *a2a.AgentCard, in a2a.AgentInterface) bool {
	for _, o := range card.SupportedInterfaces {
		b, ok := cfg.supportedBinding(o.ProtocolBinding)
		if ok && b == in.ProtocolBinding && strings.TrimRight(o.URL, "/") == strings.TrimRight(in.URL, "/") &&
			o.Tenant == in.Tenant && versionMatches(o.ProtocolVersion) {
			return true
		}
	}
	return false
}

func tenantNote(tenant string) string {
	if tenant == "" {
		return ""
	}
	return " (tenant " + tenant + ")"
}
