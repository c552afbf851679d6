package v03

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/goa2a/a2a/a2a"
)

// AgentCard is a v0.3 agent card (A2A v0.3 §5.5). The members marked v1.0
// are not v0.3's: [FromV1AgentCard] sets them so that one card is read by
// clients of both versions (a dual card), and [ToV1AgentCard] prefers them
// to the v0.3 members they stand beside.
type AgentCard struct {
	ProtocolVersion      string                    `json:"protocolVersion"`
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	URL                  string                    `json:"url"`
	PreferredTransport   string                    `json:"preferredTransport,omitempty"`
	AdditionalInterfaces []AgentInterface          `json:"additionalInterfaces,omitempty"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     *string                   `json:"documentationUrl,omitempty"`
	IconURL              *string                   `json:"iconUrl,omitempty"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	Security             []SecurityRequirement     `json:"security,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
	// SupportsAuthenticatedExtendedCard is what v1.0 moved to
	// capabilities.extendedAgentCard (A2A §A.2.2).
	SupportsAuthenticatedExtendedCard *bool                `json:"supportsAuthenticatedExtendedCard,omitempty"`
	Signatures                        []AgentCardSignature `json:"signatures,omitempty"`

	// SupportedInterfaces (v1.0) are the card's interfaces as v1.0 lists
	// them, with their protocol versions and tenants.
	SupportedInterfaces []a2a.AgentInterface `json:"supportedInterfaces,omitempty"`
	// SecurityRequirements (v1.0) is Security in v1.0's shape.
	SecurityRequirements []a2a.SecurityRequirement `json:"securityRequirements,omitempty"`
}

// MarshalJSON writes the required arrays as [] when they are empty.
func (c AgentCard) MarshalJSON() ([]byte, error) {
	type plain AgentCard
	p := plain(c)
	p.DefaultInputModes = nonNil(p.DefaultInputModes)
	p.DefaultOutputModes = nonNil(p.DefaultOutputModes)
	p.Skills = nonNil(p.Skills)
	return json.Marshal(p)
}

// AgentInterface is a URL and the transport spoken there ("JSONRPC",
// "HTTP+JSON", "GRPC"), v1.0's AgentInterface without a protocol version
// or tenant.
type AgentInterface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// AgentProvider, AgentExtension and AgentCardSignature have the same shape
// in v0.3 and v1.0.
type (
	AgentProvider      = a2a.AgentProvider
	AgentExtension     = a2a.AgentExtension
	AgentCardSignature = a2a.AgentCardSignature
)

// AgentCapabilities are a v0.3 card's capabilities. StateTransitionHistory
// is v0.3's only (v1.0 removed it); ExtendedAgentCard is v1.0's only.
type AgentCapabilities struct {
	Streaming              *bool            `json:"streaming,omitempty"`
	PushNotifications      *bool            `json:"pushNotifications,omitempty"`
	StateTransitionHistory *bool            `json:"stateTransitionHistory,omitempty"`
	Extensions             []AgentExtension `json:"extensions,omitempty"`
	// ExtendedAgentCard (v1.0) stands beside the card's
	// supportsAuthenticatedExtendedCard.
	ExtendedAgentCard *bool `json:"extendedAgentCard,omitempty"`
}

// AgentSkill is a v0.3 skill.
type AgentSkill struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Examples    []string              `json:"examples,omitempty"`
	InputModes  []string              `json:"inputModes,omitempty"`
	OutputModes []string              `json:"outputModes,omitempty"`
	Security    []SecurityRequirement `json:"security,omitempty"`
	// SecurityRequirements (v1.0) is Security in v1.0's shape.
	SecurityRequirements []a2a.SecurityRequirement `json:"securityRequirements,omitempty"`
}

// MarshalJSON writes tags as [] when there are none (the member is
// required).
func (s AgentSkill) MarshalJSON() ([]byte, error) {
	type plain AgentSkill
	p := plain(s)
	p.Tags = nonNil(p.Tags)
	return json.Marshal(p)
}

// FromV1AgentCard returns a dual card: a v0.3 card that also carries every
// member of c, so that one card, served once, is read by v0.3 and v1.0
// clients alike. Its JSON is c's JSON with the v0.3 members added (v1.0
// readers ignore them, A2A §5.7; v0.3 readers ignore the v1.0 ones).
//
// The v0.3 members say what v0.3 can:
//   - url and preferredTransport are those of the first JSON-RPC
//     interface (v0.3 clients speak JSON-RPC first), else of the first
//     interface; additionalInterfaces lists the others; protocolVersion is
//     [CardProtocolVersion]. Only interfaces without a tenant count, since a
//     v0.3 client cannot send one; if some of those are declared for
//     protocol version 0.3, only those count. A card with none is an error.
//   - security and each skill's security are the security requirements;
//     supportsAuthenticatedExtendedCard is capabilities.extendedAgentCard.
//   - each security scheme gets its OpenAPI-like v0.3 members. An API key
//     located elsewhere than a header, query or cookie, and the device
//     code flow, have no v0.3 form: UnsupportedOperation errors. The PKCE
//     requirement of an authorization code flow is left to the v1.0
//     member, v0.3 having no place for it.
//
// Signatures are copied as they are. A signature covers the JSON it was
// made over (A2A §8.4): one over c does not verify over the dual card,
// which has more members; sign the dual card itself instead.
func FromV1AgentCard(c *a2a.AgentCard) (*AgentCard, error) {
	if c == nil {
		return nil, nil
	}
	primary, more, err := v03Interfaces(c.SupportedInterfaces)
	if err != nil {
		return nil, err
	}
	out := &AgentCard{
		ProtocolVersion:    CardProtocolVersion,
		Name:               c.Name,
		Description:        c.Description,
		URL:                primary.URL,
		PreferredTransport: primary.ProtocolBinding,
		Provider:           c.Provider,
		Version:            c.Version,
		DocumentationURL:   c.DocumentationURL,
		IconURL:            c.IconURL,
		Capabilities: AgentCapabilities{
			Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			Extensions: c.Capabilities.Extensions, ExtendedAgentCard: c.Capabilities.ExtendedAgentCard,
		},
		Security:                          fromV1Requirements(c.SecurityRequirements),
		DefaultInputModes:                 nonNil(c.DefaultInputModes),
		DefaultOutputModes:                nonNil(c.DefaultOutputModes),
		Skills:                            make([]AgentSkill, len(c.Skills)),
		SupportsAuthenticatedExtendedCard: c.Capabilities.ExtendedAgentCard,
		Signatures:                        c.Signatures,
		SupportedInterfaces:               c.SupportedInterfaces,
		SecurityRequirements:              c.SecurityRequirements,
	}
	for _, i := range more {
		out.AdditionalInterfaces = append(out.AdditionalInterfaces, AgentInterface{URL: i.URL, Transport: i.ProtocolBinding})
	}
	if c.SecuritySchemes != nil {
		out.SecuritySchemes = make(map[string]SecurityScheme, len(c.SecuritySchemes))
		for _, name := range slices.Sorted(maps.Keys(c.SecuritySchemes)) {
			s := c.SecuritySchemes[name]
			if out.SecuritySchemes[name], err = fromV1Scheme(&s, key("securitySchemes", name)); err != nil {
				return nil, err
			}
		}
	}
	for i, s := range c.Skills {
		out.Skills[i] = AgentSkill{
			ID: s.ID, Name: s.Name, Description: s.Description, Tags: nonNil(s.Tags),
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes,
			Security:             fromV1Requirements(s.SecurityRequirements),
			SecurityRequirements: s.SecurityRequirements,
		}
	}
	return out, nil
}

// v03Interfaces picks the interfaces a v0.3 client may use, as
// [FromV1AgentCard] says: the one for url and preferredTransport, and
// the others.
func v03Interfaces(ifs []a2a.AgentInterface) (a2a.AgentInterface, []a2a.AgentInterface, error) {
	if len(ifs) == 0 {
		return a2a.AgentInterface{}, nil, invalid("supportedInterfaces", "a card needs an interface")
	}
	var usable, legacy []a2a.AgentInterface
	for _, i := range ifs {
		if i.Tenant != "" {
			continue
		}
		usable = append(usable, i)
		if i.ProtocolVersion == Version || strings.HasPrefix(i.ProtocolVersion, Version+".") {
			legacy = append(legacy, i)
		}
	}
	if len(usable) == 0 {
		return a2a.AgentInterface{}, nil, notInV03("supportedInterfaces", "every interface has a tenant, which v0.3 clients cannot send")
	}
	if len(legacy) > 0 {
		usable = legacy
	}
	p := 0
	for j, i := range usable {
		if i.ProtocolBinding == a2a.BindingJSONRPC {
			p = j
			break
		}
	}
	more := make([]a2a.AgentInterface, 0, len(usable)-1)
	more = append(append(more, usable[:p]...), usable[p+1:]...)
	return usable[p], more, nil
}

// ToV1AgentCard returns the v1.0 card c describes. The v1.0 members of a
// dual card are taken as they are; of a v0.3 card, or where a dual card
// lacks them:
//   - supportedInterfaces are url with preferredTransport (JSON-RPC when
//     absent, as v0.3 says) and then additionalInterfaces, each once, all
//     with protocol version [Version];
//   - the security requirements are security's, the extended card
//     capability is supportsAuthenticatedExtendedCard;
//   - the security schemes are read from their v0.3 members: an oauth2
//     scheme with several flows is an UnsupportedOperation error, since
//     v1.0 allows one.
//
// stateTransitionHistory, which v1.0 removed, is not kept; nor is the
// card's protocolVersion (v1.0 has one per interface). Signatures are
// copied: they verify, if at all, over the JSON they were received as.
func ToV1AgentCard(c *AgentCard) (*a2a.AgentCard, error) {
	if c == nil {
		return nil, nil
	}
	out := &a2a.AgentCard{
		Name:                c.Name,
		Description:         c.Description,
		SupportedInterfaces: c.SupportedInterfaces,
		Provider:            c.Provider,
		Version:             c.Version,
		DocumentationURL:    c.DocumentationURL,
		IconURL:             c.IconURL,
		Capabilities: a2a.AgentCapabilities{
			Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			Extensions: c.Capabilities.Extensions, ExtendedAgentCard: c.Capabilities.ExtendedAgentCard,
		},
		SecurityRequirements: c.SecurityRequirements,
		DefaultInputModes:    c.DefaultInputModes,
		DefaultOutputModes:   c.DefaultOutputModes,
		Signatures:           c.Signatures,
	}
	if len(out.SupportedInterfaces) == 0 {
		out.SupportedInterfaces = v1Interfaces(c)
	}
	if out.Capabilities.ExtendedAgentCard == nil {
		out.Capabilities.ExtendedAgentCard = c.SupportsAuthenticatedExtendedCard
	}
	if out.SecurityRequirements == nil {
		out.SecurityRequirements = toV1Requirements(c.Security)
	}
	if c.SecuritySchemes != nil {
		out.SecuritySchemes = make(map[string]a2a.SecurityScheme, len(c.SecuritySchemes))
		for _, name := range slices.Sorted(maps.Keys(c.SecuritySchemes)) {
			s := c.SecuritySchemes[name]
			v, err := toV1Scheme(&s, key("securitySchemes", name))
			if err != nil {
				return nil, err
			}
			out.SecuritySchemes[name] = v
		}
	}
	if c.Skills != nil {
		out.Skills = make([]a2a.AgentSkill, len(c.Skills))
	}
	for i, s := range c.Skills {
		out.Skills[i] = a2a.AgentSkill{
			ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags,
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes,
			SecurityRequirements: s.SecurityRequirements,
		}
		if s.SecurityRequirements == nil {
			out.Skills[i].SecurityRequirements = toV1Requirements(s.Security)
		}
	}
	return out, nil
}

// v1Interfaces derives v1.0 interfaces from the v0.3 members of c.
func v1Interfaces(c *AgentCard) []a2a.AgentInterface {
	binding := c.PreferredTransport
	if binding == "" {
		binding = a2a.BindingJSONRPC
	}
	out := []a2a.AgentInterface{{URL: c.URL, ProtocolBinding: binding, ProtocolVersion: Version}}
	for _, ai := range c.AdditionalInterfaces {
		dup := false
		for _, o := range out {
			if o.URL == ai.URL && o.ProtocolBinding == ai.Transport {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a2a.AgentInterface{URL: ai.URL, ProtocolBinding: ai.Transport, ProtocolVersion: Version})
		}
	}
	return out
}
