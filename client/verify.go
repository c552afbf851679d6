package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/goa2a/a2a/a2a"
)

// ErrCardNotVerified is wrapped by the error for an agent card whose
// signatures the [CardSignatureVerifier] of [WithCardSignatures] rejected.
// The error also wraps the verifier's own, which says why: with an
// *auth.CardVerifier, auth.ErrCardUnsigned, auth.ErrCardKeyUnknown,
// auth.ErrCardSignature, auth.ErrCardAlgorithm or auth.ErrCardMalformed.
var ErrCardNotVerified = errors.New("client: agent card signature not verified")

// CardSignatureVerifier verifies the signatures of an agent card (A2A
// §8.4.3) from the JSON it was received as. *auth.CardVerifier is one.
type CardSignatureVerifier interface {
	VerifyCardJSON(ctx context.Context, cardJSON []byte) error
}

// WithCardSignatures makes the client verify the signatures of every agent
// card before using it, with v: each card fetched (in [New] and
// [Client.RefreshCard]), from the bytes received, so that a card verifies
// whatever encoding its signer used; and the card given to [NewFromCard],
// as encoding/json encodes it. A card that does not verify is rejected with
// an error wrapping [ErrCardNotVerified]; RefreshCard then keeps the
// previous card. The check runs before that of [WithCardVerifier], which
// still applies. By default signatures are not verified.
//
// The extended card of [Client.GetExtendedAgentCard] and
// [Client.UseExtendedCard] is verified, from the bytes of the result, when
// it carries signatures, and rejected like a public card if none verifies.
// An unsigned extended card is accepted: agents seldom sign it, and it
// comes as the answer to an authenticated call to the interface of a
// public card that verified, so it is as trustworthy as that connection.
func WithCardSignatures(v CardSignatureVerifier) Option {
	return func(c *config) error {
		if v == nil {
			return optionError("WithCardSignatures", "nil verifier")
		}
		c.signatures = v
		return nil
	}
}

// checkSignatures verifies a card's JSON with the verifier of
// [WithCardSignatures], if any.
func (c *Client) checkSignatures(ctx context.Context, cardJSON []byte) error {
	if c.cfg.signatures == nil {
		return nil
	}
	if err := c.cfg.signatures.VerifyCardJSON(ctx, cardJSON); err != nil {
		return fmt.Errorf("%w: %w", ErrCardNotVerified, err)
	}
	return nil
}

// checkCardSignatures verifies a card given as a struct ([NewFromCard]).
func (c *Client) checkCardSignatures(ctx context.Context, card *a2a.AgentCard) error {
	if c.cfg.signatures == nil {
		return nil
	}
	data, err := json.Marshal(card)
	if err != nil {
		return fmt.Errorf("%w: encoding the card: %w", ErrCardNotVerified, err)
	}
	return c.checkSignatures(ctx, data)
}
