package v03

import (
	"encoding/json"

	"github.com/goa2a/a2a/a2a"
)

// The security scheme types of v0.3, OpenAPI's (A2A v0.3 §5.5.2).
const (
	SchemeAPIKey        = "apiKey"
	SchemeHTTP          = "http"
	SchemeOAuth2        = "oauth2"
	SchemeOpenIDConnect = "openIdConnect"
	SchemeMutualTLS     = "mutualTLS"
)

// SecurityScheme is a v0.3 security scheme: an OpenAPI 3.0 Security Scheme
// Object told apart by Type, whose other members depend on it. A card
// [FromV1AgentCard] writes also carries the v1.0 scheme, as the one member
// of v1.0's oneof (apiKeySecurityScheme, httpAuthSecurityScheme, ...),
// beside the v0.3 members: v0.3 readers ignore it and v1.0 readers read
// only it.
type SecurityScheme struct {
	Type        string
	Description string
	// In and Name are where an apiKey goes: "header", "query" or
	// "cookie", and the parameter's name.
	In, Name string
	// Scheme and BearerFormat are those of an http scheme.
	Scheme, BearerFormat string
	// Flows and OAuth2MetadataURL are those of an oauth2 scheme.
	Flows             *OAuthFlows
	OAuth2MetadataURL string
	// OpenIDConnectURL is that of an openIdConnect scheme.
	OpenIDConnectURL string

	// V1 is the v1.0 scheme a dual card carries, or nil.
	V1 *a2a.SecurityScheme
}

// OAuthFlows are the flows of a v0.3 oauth2 scheme. v0.3 allows several
// at once, as OpenAPI does; v1.0 one.
type OAuthFlows struct {
	AuthorizationCode *OAuthFlow `json:"authorizationCode,omitempty"`
	ClientCredentials *OAuthFlow `json:"clientCredentials,omitempty"`
	Implicit          *OAuthFlow `json:"implicit,omitempty"`
	Password          *OAuthFlow `json:"password,omitempty"`
}

// OAuthFlow is one v0.3 OAuth flow. AuthorizationURL is that of the
// authorizationCode and implicit flows, TokenURL that of the others and of
// authorizationCode.
type OAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl,omitempty"`
	TokenURL         string            `json:"tokenUrl,omitempty"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
}

// securitySchemeWire is every member a scheme may have, for decoding.
type securitySchemeWire struct {
	Type              string      `json:"type"`
	Description       string      `json:"description"`
	In                string      `json:"in"`
	Name              string      `json:"name"`
	Scheme            string      `json:"scheme"`
	BearerFormat      string      `json:"bearerFormat"`
	Flows             *OAuthFlows `json:"flows"`
	OAuth2MetadataURL string      `json:"oauth2MetadataUrl"`
	OpenIDConnectURL  string      `json:"openIdConnectUrl"`

	APIKey        *a2a.APIKeySecurityScheme        `json:"apiKeySecurityScheme"`
	HTTPAuth      *a2a.HTTPAuthSecurityScheme      `json:"httpAuthSecurityScheme"`
	OAuth2        *a2a.OAuth2SecurityScheme        `json:"oauth2SecurityScheme"`
	OpenIDConnect *a2a.OpenIDConnectSecurityScheme `json:"openIdConnectSecurityScheme"`
	MutualTLS     *a2a.MutualTLSSecurityScheme     `json:"mtlsSecurityScheme"`
}

// MarshalJSON writes the members of the scheme's type (the required ones
// even when empty), then the v1.0 member if there is one.
func (s SecurityScheme) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": s.Type}
	if s.Description != "" {
		m["description"] = s.Description
	}
	switch s.Type {
	case SchemeAPIKey:
		m["in"], m["name"] = s.In, s.Name
	case SchemeHTTP:
		m["scheme"] = s.Scheme
		if s.BearerFormat != "" {
			m["bearerFormat"] = s.BearerFormat
		}
	case SchemeOAuth2:
		m["flows"] = s.Flows
		if s.Flows == nil {
			m["flows"] = OAuthFlows{}
		}
		if s.OAuth2MetadataURL != "" {
			m["oauth2MetadataUrl"] = s.OAuth2MetadataURL
		}
	case SchemeOpenIDConnect:
		m["openIdConnectUrl"] = s.OpenIDConnectURL
	}
	if v := s.V1; v != nil {
		switch {
		case v.APIKey != nil:
			m["apiKeySecurityScheme"] = v.APIKey
		case v.HTTPAuth != nil:
			m["httpAuthSecurityScheme"] = v.HTTPAuth
		case v.OAuth2 != nil:
			m["oauth2SecurityScheme"] = v.OAuth2
		case v.OpenIDConnect != nil:
			m["openIdConnectSecurityScheme"] = v.OpenIDConnect
		case v.MutualTLS != nil:
			m["mtlsSecurityScheme"] = v.MutualTLS
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the v0.3 members and, when present, the v1.0 one.
// Nothing is checked here: [ToV1AgentCard] says what it cannot read.
func (s *SecurityScheme) UnmarshalJSON(b []byte) error {
	var w securitySchemeWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = SecurityScheme{
		Type: w.Type, Description: w.Description, In: w.In, Name: w.Name,
		Scheme: w.Scheme, BearerFormat: w.BearerFormat,
		Flows: w.Flows, OAuth2MetadataURL: w.OAuth2MetadataURL, OpenIDConnectURL: w.OpenIDConnectURL,
	}
	v := &a2a.SecurityScheme{APIKey: w.APIKey, HTTPAuth: w.HTTPAuth, OAuth2: w.OAuth2, OpenIDConnect: w.OpenIDConnect, MutualTLS: w.MutualTLS}
	if *v != (a2a.SecurityScheme{}) {
		s.V1 = v
	}
	return nil
}

// fromV1Scheme returns the v0.3 members of s and s itself as the v1.0 one.
func fromV1Scheme(s *a2a.SecurityScheme, path string) (SecurityScheme, error) {
	out := SecurityScheme{V1: s}
	n := 0
	if v := s.APIKey; v != nil {
		n++
		switch v.Location {
		case "header", "query", "cookie":
		default:
			return SecurityScheme{}, notInV03(join(path, "apiKeySecurityScheme.location"), `a v0.3 API key is in "header", "query" or "cookie"`)
		}
		out.Type, out.Description, out.In, out.Name = SchemeAPIKey, v.Description, v.Location, v.Name
	}
	if v := s.HTTPAuth; v != nil {
		n++
		out.Type, out.Description, out.Scheme, out.BearerFormat = SchemeHTTP, v.Description, v.Scheme, v.BearerFormat
	}
	if v := s.OAuth2; v != nil {
		n++
		flows, err := fromV1Flows(&v.Flows, join(path, "oauth2SecurityScheme.flows"))
		if err != nil {
			return SecurityScheme{}, err
		}
		out.Type, out.Description, out.Flows, out.OAuth2MetadataURL = SchemeOAuth2, v.Description, flows, v.OAuth2MetadataURL
	}
	if v := s.OpenIDConnect; v != nil {
		n++
		out.Type, out.Description, out.OpenIDConnectURL = SchemeOpenIDConnect, v.Description, v.OpenIDConnectURL
	}
	if v := s.MutualTLS; v != nil {
		n++
		out.Type, out.Description = SchemeMutualTLS, v.Description
	}
	if n != 1 {
		return SecurityScheme{}, invalid(path, "a security scheme has exactly one scheme member")
	}
	return out, nil
}

// fromV1Flows returns the v0.3 flows of f. The device code flow has no v0.3
// form; pkceRequired has none either and is carried by the v1.0 member
// only.
func fromV1Flows(f *a2a.OAuthFlows, path string) (*OAuthFlows, error) {
	out := &OAuthFlows{}
	n := 0
	if v := f.AuthorizationCode; v != nil {
		n++
		out.AuthorizationCode = &OAuthFlow{AuthorizationURL: v.AuthorizationURL, TokenURL: v.TokenURL, RefreshURL: v.RefreshURL, Scopes: nonNilMap(v.Scopes)}
	}
	if v := f.ClientCredentials; v != nil {
		n++
		out.ClientCredentials = &OAuthFlow{TokenURL: v.TokenURL, RefreshURL: v.RefreshURL, Scopes: nonNilMap(v.Scopes)}
	}
	if v := f.Implicit; v != nil {
		n++
		out.Implicit = &OAuthFlow{AuthorizationURL: v.AuthorizationURL, RefreshURL: v.RefreshURL, Scopes: nonNilMap(v.Scopes)}
	}
	if v := f.Password; v != nil {
		n++
		out.Password = &OAuthFlow{TokenURL: v.TokenURL, RefreshURL: v.RefreshURL, Scopes: nonNilMap(v.Scopes)}
	}
	if f.DeviceCode != nil {
		return nil, notInV03(join(path, "deviceCode"), "v0.3 has no device code flow")
	}
	if n != 1 {
		return nil, invalid(path, "OAuth flows have exactly one flow member")
	}
	return out, nil
}

// toV1Scheme returns the v1.0 scheme of s: its v1.0 member when it has
// one, else one read from the v0.3 members.
func toV1Scheme(s *SecurityScheme, path string) (a2a.SecurityScheme, error) {
	if v := s.V1; v != nil {
		if n := countSet(v.APIKey != nil, v.HTTPAuth != nil, v.OAuth2 != nil, v.OpenIDConnect != nil, v.MutualTLS != nil); n != 1 {
			return a2a.SecurityScheme{}, invalid(path, "a v1.0 security scheme has exactly one scheme member")
		}
		if v.OAuth2 != nil {
			f := &v.OAuth2.Flows
			if n := countSet(f.AuthorizationCode != nil, f.ClientCredentials != nil, f.Implicit != nil, f.Password != nil, f.DeviceCode != nil); n != 1 {
				return a2a.SecurityScheme{}, invalid(join(path, "oauth2SecurityScheme.flows"), "v1.0 OAuth flows have exactly one flow member")
			}
		}
		return *v, nil
	}
	switch s.Type {
	case SchemeAPIKey:
		return a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{Description: s.Description, Location: s.In, Name: s.Name}}, nil
	case SchemeHTTP:
		return a2a.SecurityScheme{HTTPAuth: &a2a.HTTPAuthSecurityScheme{Description: s.Description, Scheme: s.Scheme, BearerFormat: s.BearerFormat}}, nil
	case SchemeOAuth2:
		if s.Flows == nil {
			return a2a.SecurityScheme{}, invalid(join(path, "flows"), "an oauth2 scheme needs flows")
		}
		flows, err := toV1Flows(s.Flows, join(path, "flows"))
		if err != nil {
			return a2a.SecurityScheme{}, err
		}
		return a2a.SecurityScheme{OAuth2: &a2a.OAuth2SecurityScheme{Description: s.Description, Flows: flows, OAuth2MetadataURL: s.OAuth2MetadataURL}}, nil
	case SchemeOpenIDConnect:
		return a2a.SecurityScheme{OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{Description: s.Description, OpenIDConnectURL: s.OpenIDConnectURL}}, nil
	case SchemeMutualTLS:
		return a2a.SecurityScheme{MutualTLS: &a2a.MutualTLSSecurityScheme{Description: s.Description}}, nil
	}
	return a2a.SecurityScheme{}, invalid(join(path, "type"), "unknown security scheme type "+quoteOrNone(s.Type))
}

// toV1Flows returns the one v1.0 flow of f; several flows are an
// UnsupportedOperation error (the JS SDK keeps the first of them).
func toV1Flows(f *OAuthFlows, path string) (a2a.OAuthFlows, error) {
	var out a2a.OAuthFlows
	n := 0
	if v := f.AuthorizationCode; v != nil {
		n++
		out.AuthorizationCode = &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: v.AuthorizationURL, TokenURL: v.TokenURL, RefreshURL: v.RefreshURL, Scopes: v.Scopes}
	}
	if v := f.ClientCredentials; v != nil {
		n++
		out.ClientCredentials = &a2a.ClientCredentialsOAuthFlow{TokenURL: v.TokenURL, RefreshURL: v.RefreshURL, Scopes: v.Scopes}
	}
	if v := f.Implicit; v != nil {
		n++
		out.Implicit = &a2a.ImplicitOAuthFlow{AuthorizationURL: v.AuthorizationURL, RefreshURL: v.RefreshURL, Scopes: v.Scopes}
	}
	if v := f.Password; v != nil {
		n++
		out.Password = &a2a.PasswordOAuthFlow{TokenURL: v.TokenURL, RefreshURL: v.RefreshURL, Scopes: v.Scopes}
	}
	switch {
	case n == 0:
		return a2a.OAuthFlows{}, invalid(path, "an oauth2 scheme needs a flow")
	case n > 1:
		return a2a.OAuthFlows{}, notInV1(path, "a v1.0 oauth2 scheme has one flow")
	}
	return out, nil
}

// SecurityRequirement is one v0.3 security requirement: the scopes
// required of each scheme named, all of them together (OpenAPI's Security
// Requirement Object).
type SecurityRequirement map[string][]string

func fromV1Requirements(rs []a2a.SecurityRequirement) []SecurityRequirement {
	if rs == nil {
		return nil
	}
	out := make([]SecurityRequirement, len(rs))
	for i, r := range rs {
		out[i] = make(SecurityRequirement, len(r.Schemes))
		for name, scopes := range r.Schemes {
			out[i][name] = nonNil(scopes.List)
		}
	}
	return out
}

func toV1Requirements(rs []SecurityRequirement) []a2a.SecurityRequirement {
	if rs == nil {
		return nil
	}
	out := make([]a2a.SecurityRequirement, len(rs))
	for i, r := range rs {
		out[i].Schemes = make(map[string]a2a.StringList, len(r))
		for name, scopes := range r {
			if len(scopes) == 0 {
				scopes = nil
			}
			out[i].Schemes[name] = a2a.StringList{List: scopes}
		}
	}
	return out
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
