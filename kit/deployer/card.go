package deployer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
)

// SecuritySchemeName is the card's name for the bearer scheme.
const SecuritySchemeName = "bearer"

// KeyID is the key ID of the deployer's card signatures, the kit's
// (capture 17 #2).
const KeyID = "deployer-key-1"

// JWKSPath is where [NewServer] publishes the public key of its card
// signatures, as a JWK set (RFC 7517); the signatures name it as their
// "jku".
const JWKSPath = auth.CardJWKSPath

// DemoSecret is the HS256 secret of [DemoSigner]. It is public on purpose:
// it lets a demo recording be reproduced byte for byte, and so a card it
// signs proves nothing to anyone but a test. The kit's own secret, with
// which it made the signature of capture 01 #3, is not recorded anywhere.
const DemoSecret = "a2a-101 demo card signing secret (public, proves nothing)"

// DemoSigner returns the signer of the demo's deterministic mode: HS256
// with [DemoSecret] under [KeyID], no jku. Its protected header is the
// kit's exactly (capture 17 #2); its signatures are not, since the kit's
// secret is unknown (docs/kit-differences.md, card-signature).
func DemoSigner() *auth.CardSigner {
	s, err := auth.NewCardSigner(KeyID, []byte(DemoSecret), "")
	if err != nil {
		panic("deployer: the demo secret is unusable: " + err.Error()) // a constant
	}
	return s
}

// NewSigner returns a signer with a new ES256 key under [KeyID], whose
// signatures name jwksURL (such as baseURL + [JWKSPath]) as their jku; the
// key lives as long as the signer.
func NewSigner(jwksURL string) (*auth.CardSigner, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("deployer: generating the card signing key: %w", err)
	}
	return auth.NewCardSigner(KeyID, k, jwksURL)
}

// Card returns the deployer's public agent card for a server whose
// interfaces are at jsonrpcURL and restURL (capture 01 #3), signed by
// signer (A2A §8.4).
func Card(jsonrpcURL, restURL string, signer *auth.CardSigner) (*a2a.AgentCard, error) {
	c, err := auth.SignCard(baseCard(jsonrpcURL, restURL), signer)
	if err != nil {
		return nil, fmt.Errorf("deployer: signing the card: %w", err)
	}
	return c, nil
}

// ExtendedCard returns the card GetExtendedAgentCard gives authenticated
// callers: the public card plus the rollback skill, unsigned (capture 18
// #2).
func ExtendedCard(jsonrpcURL, restURL string) *a2a.AgentCard {
	c := baseCard(jsonrpcURL, restURL)
	c.Skills = append(c.Skills, a2a.AgentSkill{
		ID: "rollback", Name: "Roll back a deploy",
		Description: "Return staging to the previous build. Shown only to authenticated callers.",
		Tags:        []string{"deploy", "rollback"},
	})
	return c
}

func baseCard(jsonrpcURL, restURL string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "deployer",
		Description: "Deploys a tagged build to staging after an operator approves it.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: jsonrpcURL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{URL: restURL, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Provider:     &a2a.AgentProvider{URL: "https://deploy.example.com", Organization: "Platform Team"},
		Version:      "1.4.1",
		Capabilities: a2a.AgentCapabilities{Streaming: a2a.Ptr(true), ExtendedAgentCard: a2a.Ptr(true)},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			SecuritySchemeName: {HTTPAuth: &a2a.HTTPAuthSecurityScheme{
				Description: "A token issued by the platform team.",
				Scheme:      "Bearer",
			}},
		},
		SecurityRequirements: []a2a.SecurityRequirement{
			{Schemes: map[string]a2a.StringList{SecuritySchemeName: {List: []string{}}}},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "deploy", Name: "Deploy a build",
			Description: "Deploy one tagged build to staging, with operator approval.",
			Tags:        []string{"deploy", "staging"},
			Examples:    []string{"Deploy build 2026.10.06-1 to staging"},
		}},
	}
}
