package deployer

import (
	"github.com/goa2a/a2a/a2a"
)

// SecuritySchemeName is the card's name for the bearer scheme.
const SecuritySchemeName = "bearer"

// recordedSignature is the signature entry of the kit's deployer card
// (capture 01 #3, made as capture 17 shows: HS256 over the canonical card
// with its interfaces at http://localhost:41243). It is static data that
// reproduces the recorded card; it signs nothing we serve: it only
// verifies for that exact card, and our encoding of the card's empty
// scope list differs from the kit's (see the package documentation).
// Real signing belongs to the auth package's card signing work.
var recordedSignature = a2a.AgentCardSignature{
	Protected: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJkZXBsb3llci1rZXktMSJ9",
	Signature: "yPk834ji_dOVmxElhzV3yTYBT9NVp8Bx1j5K0LQmOww",
}

// Card returns the deployer's public agent card for a server whose
// interfaces are at jsonrpcURL and restURL (capture 01 #3), including the
// kit's recorded signature entry.
func Card(jsonrpcURL, restURL string) *a2a.AgentCard {
	c := baseCard(jsonrpcURL, restURL)
	c.Signatures = []a2a.AgentCardSignature{recordedSignature}
	return c
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
