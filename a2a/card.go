package a2a

import (
	"encoding/json"
	"fmt"
)

// AgentCard describes an agent: who it is, where and how to reach it, what it
// can do and how to authenticate (proto AgentCard, A2A §4.4.1).
//
// Required members (name, description, supportedInterfaces, version,
// capabilities, defaultInputModes, defaultOutputModes, skills) are always
// written, even when empty, as card signing needs (A2A §8.4.1).
type AgentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     *string                   `json:"documentationUrl,omitempty"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []SecurityRequirement     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
	Signatures           []AgentCardSignature      `json:"signatures,omitempty"`
	IconURL              *string                   `json:"iconUrl,omitempty"`
}

// MarshalJSON writes required arrays as [] when they are empty.
func (c AgentCard) MarshalJSON() ([]byte, error) {
	type plain AgentCard
	p := plain(c)
	p.SupportedInterfaces = nonNil(p.SupportedInterfaces)
	p.DefaultInputModes = nonNil(p.DefaultInputModes)
	p.DefaultOutputModes = nonNil(p.DefaultOutputModes)
	p.Skills = nonNil(p.Skills)
	return json.Marshal(p)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// AgentInterface is one way to reach the agent: a URL, the binding spoken
// there, the protocol version, and an optional tenant that clients copy into
// every request (proto AgentInterface, A2A §8.3).
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	Tenant          string `json:"tenant,omitempty"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider names the organization behind the agent.
type AgentProvider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// AgentCapabilities declares the optional features the agent supports. The
// booleans are `optional` in the proto: nil means not declared, which counts
// as false.
type AgentCapabilities struct {
	Streaming         *bool            `json:"streaming,omitempty"`
	PushNotifications *bool            `json:"pushNotifications,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
	ExtendedAgentCard *bool            `json:"extendedAgentCard,omitempty"`
}

// SupportsStreaming reports whether streaming is declared true.
func (c AgentCapabilities) SupportsStreaming() bool { return c.Streaming != nil && *c.Streaming }

// SupportsPush reports whether push notifications are declared true.
func (c AgentCapabilities) SupportsPush() bool {
	return c.PushNotifications != nil && *c.PushNotifications
}

// SupportsExtendedCard reports whether the extended card is declared true.
func (c AgentCapabilities) SupportsExtendedCard() bool {
	return c.ExtendedAgentCard != nil && *c.ExtendedAgentCard
}

// Ptr returns a pointer to v, for the optional members of the model.
func Ptr[T any](v T) *T { return &v }

// AgentExtension declares a protocol extension the agent supports.
type AgentExtension struct {
	URI         string         `json:"uri,omitempty"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitempty"`
	Params      map[string]any `json:"params,omitzero"`
}

// AgentSkill is one thing the agent can do.
type AgentSkill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	Examples             []string              `json:"examples,omitempty"`
	InputModes           []string              `json:"inputModes,omitempty"`
	OutputModes          []string              `json:"outputModes,omitempty"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// MarshalJSON writes tags as [] when empty (the member is required).
func (s AgentSkill) MarshalJSON() ([]byte, error) {
	type plain AgentSkill
	p := plain(s)
	p.Tags = nonNil(p.Tags)
	return json.Marshal(p)
}

// AgentCardSignature is a detached JWS over the canonical card (A2A §8.4.2).
type AgentCardSignature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitzero"`
}

// SecurityRequirement maps scheme names to the scopes required of each; all
// schemes of one requirement apply together (proto SecurityRequirement).
type SecurityRequirement struct {
	Schemes map[string]StringList `json:"schemes,omitempty"`
}

// StringList is a list of strings (proto StringList).
type StringList struct {
	List []string `json:"list,omitempty"`
}

// SecurityScheme is the oneof of security schemes; exactly one member is set
// (proto SecurityScheme, A2A §4.5).
type SecurityScheme struct {
	APIKey        *APIKeySecurityScheme        `json:"apiKeySecurityScheme,omitempty"`
	HTTPAuth      *HTTPAuthSecurityScheme      `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2        *OAuth2SecurityScheme        `json:"oauth2SecurityScheme,omitempty"`
	OpenIDConnect *OpenIDConnectSecurityScheme `json:"openIdConnectSecurityScheme,omitempty"`
	MutualTLS     *MutualTLSSecurityScheme     `json:"mtlsSecurityScheme,omitempty"`
}

func (s *SecurityScheme) members() int {
	return countSet(s.APIKey != nil, s.HTTPAuth != nil, s.OAuth2 != nil, s.OpenIDConnect != nil, s.MutualTLS != nil)
}

// MarshalJSON writes the single scheme member; zero or several members are
// an error, since no reader would accept the result.
func (s SecurityScheme) MarshalJSON() ([]byte, error) {
	if n := s.members(); n != 1 {
		return nil, fmt.Errorf("a2a: security scheme: exactly one scheme member is required, got %d", n)
	}
	type plain SecurityScheme
	return json.Marshal(plain(s))
}

// UnmarshalJSON rejects a scheme with zero or several members.
func (s *SecurityScheme) UnmarshalJSON(b []byte) error {
	type plain SecurityScheme
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	v := SecurityScheme(p)
	if n := v.members(); n != 1 {
		return fmt.Errorf("security scheme: exactly one scheme member is required, got %d", n)
	}
	*s = v
	return nil
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// APIKeySecurityScheme is an API key in a header, query parameter or cookie.
type APIKeySecurityScheme struct {
	Description string `json:"description,omitempty"`
	Location    string `json:"location"`
	Name        string `json:"name"`
}

// HTTPAuthSecurityScheme is HTTP authentication such as Bearer or Basic.
type HTTPAuthSecurityScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// OAuth2SecurityScheme is OAuth 2.0 with its flow.
type OAuth2SecurityScheme struct {
	Description       string     `json:"description,omitempty"`
	Flows             OAuthFlows `json:"flows"`
	OAuth2MetadataURL string     `json:"oauth2MetadataUrl,omitempty"`
}

// OpenIDConnectSecurityScheme is OpenID Connect discovery.
type OpenIDConnectSecurityScheme struct {
	Description      string `json:"description,omitempty"`
	OpenIDConnectURL string `json:"openIdConnectUrl"`
}

// MutualTLSSecurityScheme is mutual TLS.
type MutualTLSSecurityScheme struct {
	Description string `json:"description,omitempty"`
}

// OAuthFlows is the oneof of OAuth 2.0 flows; exactly one member is set.
// Implicit and Password are deprecated in the proto; they are read but should
// not be declared.
type OAuthFlows struct {
	AuthorizationCode *AuthorizationCodeOAuthFlow `json:"authorizationCode,omitempty"`
	ClientCredentials *ClientCredentialsOAuthFlow `json:"clientCredentials,omitempty"`
	Implicit          *ImplicitOAuthFlow          `json:"implicit,omitempty"`
	Password          *PasswordOAuthFlow          `json:"password,omitempty"`
	DeviceCode        *DeviceCodeOAuthFlow        `json:"deviceCode,omitempty"`
}

func (f *OAuthFlows) members() int {
	return countSet(f.AuthorizationCode != nil, f.ClientCredentials != nil, f.Implicit != nil, f.Password != nil, f.DeviceCode != nil)
}

// MarshalJSON writes the single flow member; zero or several members are an
// error.
func (f OAuthFlows) MarshalJSON() ([]byte, error) {
	if n := f.members(); n != 1 {
		return nil, fmt.Errorf("a2a: oauth flows: exactly one flow member is required, got %d", n)
	}
	type plain OAuthFlows
	return json.Marshal(plain(f))
}

// UnmarshalJSON rejects flows with zero or several members.
func (f *OAuthFlows) UnmarshalJSON(b []byte) error {
	type plain OAuthFlows
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	v := OAuthFlows(p)
	if n := v.members(); n != 1 {
		return fmt.Errorf("oauth flows: exactly one flow member is required, got %d", n)
	}
	*f = v
	return nil
}

// AuthorizationCodeOAuthFlow is the authorization code flow.
type AuthorizationCodeOAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl"`
	TokenURL         string            `json:"tokenUrl"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
	PKCERequired     bool              `json:"pkceRequired,omitempty"`
}

// MarshalJSON writes scopes as {} when there are none (the member is
// required).
func (f AuthorizationCodeOAuthFlow) MarshalJSON() ([]byte, error) {
	type plain AuthorizationCodeOAuthFlow
	p := plain(f)
	p.Scopes = nonNilMap(p.Scopes)
	return json.Marshal(p)
}

// ClientCredentialsOAuthFlow is the client credentials flow.
type ClientCredentialsOAuthFlow struct {
	TokenURL   string            `json:"tokenUrl"`
	RefreshURL string            `json:"refreshUrl,omitempty"`
	Scopes     map[string]string `json:"scopes"`
}

// MarshalJSON writes scopes as {} when there are none (the member is
// required).
func (f ClientCredentialsOAuthFlow) MarshalJSON() ([]byte, error) {
	type plain ClientCredentialsOAuthFlow
	p := plain(f)
	p.Scopes = nonNilMap(p.Scopes)
	return json.Marshal(p)
}

// ImplicitOAuthFlow is the deprecated implicit flow.
type ImplicitOAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl,omitempty"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes,omitempty"`
}

// PasswordOAuthFlow is the deprecated resource owner password flow.
type PasswordOAuthFlow struct {
	TokenURL   string            `json:"tokenUrl,omitempty"`
	RefreshURL string            `json:"refreshUrl,omitempty"`
	Scopes     map[string]string `json:"scopes,omitempty"`
}

// DeviceCodeOAuthFlow is the device authorization flow (RFC 8628).
type DeviceCodeOAuthFlow struct {
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	RefreshURL             string            `json:"refreshUrl,omitempty"`
	Scopes                 map[string]string `json:"scopes"`
}

// MarshalJSON writes scopes as {} when there are none (the member is
// required).
func (f DeviceCodeOAuthFlow) MarshalJSON() ([]byte, error) {
	type plain DeviceCodeOAuthFlow
	p := plain(f)
	p.Scopes = nonNilMap(p.Scopes)
	return json.Marshal(p)
}
