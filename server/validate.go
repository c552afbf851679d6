package server

import (
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goa2a/a2a/a2a"
)

// Lengths of what clients name, the same on every binding (a request
// beyond them is InvalidParams naming the field): ids of messages, tasks,
// contexts and push configs, extension URIs (in A2A-Extensions and in
// messages), and the keys of metadata (of a request, a message, a part).
// Ids the server makes are UUIDs (36 bytes).
const (
	MaxIDLength           = 256
	MaxExtensionURILength = 2048
	MaxMetadataKeyLength  = 256
)

// idViolation checks an id a client gave: required or not, at most
// MaxIDLength bytes.
func idViolation(field, id string, required bool) *a2a.FieldViolation {
	switch {
	case id == "" && required:
		return &a2a.FieldViolation{Field: field, Description: lastName(field) + " is required"}
	case len(id) > MaxIDLength:
		return &a2a.FieldViolation{Field: field, Description: lastName(field) + " must be at most " + strconv.Itoa(MaxIDLength) + " bytes, got " + strconv.Itoa(len(id))}
	}
	return nil
}

// lastName is the last element of a field path ("message.taskId": "taskId").
func lastName(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

// appendID adds the violation of id at field, if any, to v.
func appendID(v []a2a.FieldViolation, field, id string, required bool) []a2a.FieldViolation {
	if fv := idViolation(field, id, required); fv != nil {
		v = append(v, *fv)
	}
	return v
}

// metadataViolations checks the keys of metadata at field.
func metadataViolations(v []a2a.FieldViolation, field string, md map[string]any) []a2a.FieldViolation {
	for k := range md {
		if len(k) > MaxMetadataKeyLength {
			v = append(v, a2a.FieldViolation{Field: field, Description: "metadata keys must be at most " + strconv.Itoa(MaxMetadataKeyLength) + " bytes, got one of " + strconv.Itoa(len(k))})
			break // one is enough: the keys are not repeated back
		}
	}
	return v
}

// extensionViolations checks extension URIs at field.
func extensionViolations(v []a2a.FieldViolation, field string, uris []string) []a2a.FieldViolation {
	for i, u := range uris {
		if len(u) > MaxExtensionURILength {
			v = append(v, a2a.FieldViolation{Field: fmt.Sprintf("%s[%d]", field, i), Description: "an extension URI must be at most " + strconv.Itoa(MaxExtensionURILength) + " bytes, got " + strconv.Itoa(len(u))})
		}
	}
	return v
}

// validateSend checks a SendMessage request before anything runs (A2A
// §3.3.2: validate every input; REQUIREMENTS R046–R050, R063, R122, R065).
func (h *Handler) validateSend(req *a2a.SendMessageRequest) error {
	if req == nil || req.Message == nil {
		return a2a.InvalidParam("message", "message is required")
	}
	var v []a2a.FieldViolation
	m := req.Message
	v = appendID(v, "message.messageId", m.MessageID, true)
	v = appendID(v, "message.taskId", m.TaskID, false)
	v = appendID(v, "message.contextId", m.ContextID, false)
	for i, id := range m.ReferenceTaskIDs {
		v = appendID(v, fmt.Sprintf("message.referenceTaskIds[%d]", i), id, false)
	}
	v = extensionViolations(v, "message.extensions", m.Extensions)
	v = metadataViolations(v, "metadata", req.Metadata)
	v = metadataViolations(v, "message.metadata", m.Metadata)
	if m.Role != a2a.RoleUser {
		v = append(v, a2a.FieldViolation{Field: "message.role", Description: "role must be ROLE_USER for a client message, got " + m.Role.String()})
	}
	parts := m.Parts
	if len(parts) == 0 {
		v = append(v, a2a.FieldViolation{Field: "message.parts", Description: "at least one part is required"})
	} else if tooMany := h.limits.checkParts(len(parts)); tooMany != nil {
		v = append(v, *tooMany)
		parts = nil // one violation, not one per part
	}
	for i, p := range parts {
		if p.Content == nil {
			v = append(v, a2a.FieldViolation{Field: fmt.Sprintf("message.parts[%d]", i), Description: "a part must have exactly one of text, raw, url or data"})
		}
		v = metadataViolations(v, fmt.Sprintf("message.parts[%d].metadata", i), p.Metadata)
	}
	if c := req.Configuration; c != nil {
		if c.HistoryLength != nil && *c.HistoryLength < 0 {
			v = append(v, a2a.FieldViolation{Field: "configuration.historyLength", Description: "historyLength must not be negative"})
		}
		if pc := c.TaskPushNotificationConfig; pc != nil {
			v = append(v, pushConfigViolations("configuration.taskPushNotificationConfig.", pc)...)
		}
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	if req.Configuration != nil && req.Configuration.TaskPushNotificationConfig != nil && !h.card.Capabilities.SupportsPush() {
		return a2a.NewError(a2a.CodePushNotificationNotSupported, "")
	}
	for _, p := range m.Parts {
		if mt := p.EffectiveMediaType(); mt != "" && !h.acceptsInput(mt) {
			return a2a.NewError(a2a.CodeContentTypeNotSupported, "").With("mediaType", mt)
		}
	}
	return nil
}

// pushConfigViolations checks a webhook config when it is registered;
// prefix is the field path. The url must be an absolute http or https URL
// with a host. The token and the authentication travel in HTTP headers of
// every notification (A2A §4.3.3; REQUIREMENTS R186, B4), so a control
// character there, CR and LF above all, could add headers of the client's
// choosing to the server's calls: they are refused, as is whitespace
// around them, and the scheme must be an RFC 9110 token. Descriptions
// never repeat the value, which is a secret.
//
// Nothing here resolves DNS or judges the address: a name can point
// anywhere by the time a notification goes out, so the SSRF check is made
// on each connection, by push.Guard, where the server's allow-list is
// known. A webhook at 127.0.0.1 is registered and then refused on
// delivery unless the allow-list admits it.
func pushConfigViolations(prefix string, c *a2a.TaskPushNotificationConfig) []a2a.FieldViolation {
	var v []a2a.FieldViolation
	bad := func(field, description string) {
		v = append(v, a2a.FieldViolation{Field: prefix + field, Description: description})
	}
	v = appendID(v, prefix+"id", c.ID, false)
	switch u, err := url.Parse(c.URL); {
	case c.URL == "":
		bad("url", "url is required")
	case err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
		bad("url", "url must be an absolute http or https URL with a host")
	case len(c.URL) > maxWebhookURL:
		bad("url", "url must be at most "+strconv.Itoa(maxWebhookURL)+" bytes")
	}
	if why := headerValueProblem(c.Token); why != "" {
		bad("token", "token "+why)
	}
	if a := c.Authentication; a != nil {
		switch {
		case a.Scheme == "":
			bad("authentication.scheme", "scheme is required when authentication is given")
		case !isToken(a.Scheme):
			bad("authentication.scheme", "scheme must be an HTTP authentication scheme name such as Bearer or Basic: letters, digits and !#$%&'*+-.^_`|~ only")
		}
		if why := headerValueProblem(a.Credentials); why != "" {
			bad("authentication.credentials", "credentials "+why)
		}
	}
	return v
}

// maxWebhookURL bounds the length of a webhook URL.
const maxWebhookURL = 4096

// headerValueProblem says what keeps s from being sent as (part of) an
// HTTP header value, or returns "" when nothing does.
func headerValueProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "must not contain control characters such as CR or LF"
	case strings.TrimSpace(s) != s:
		return "must not begin or end with whitespace"
	}
	return ""
}

// isToken reports whether s is an RFC 9110 token (§5.6.2), as an
// authentication scheme must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// acceptedInputModes collects the media types the card accepts: the
// defaults and every skill's input modes.
func acceptedInputModes(c *a2a.AgentCard) []string {
	modes := append([]string(nil), c.DefaultInputModes...)
	for _, s := range c.Skills {
		modes = append(modes, s.InputModes...)
	}
	return modes
}

// acceptsInput reports whether media type mt matches an accepted mode,
// honouring wildcards such as "image/*" and "*/*". A card that lists no
// modes accepts everything.
func (h *Handler) acceptsInput(mt string) bool {
	if len(h.inputModes) == 0 {
		return true
	}
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(mt))
	}
	for _, mode := range h.inputModes {
		mode = strings.ToLower(strings.TrimSpace(mode))
		if i := strings.IndexByte(mode, ';'); i >= 0 {
			mode = strings.TrimSpace(mode[:i])
		}
		switch {
		case mode == base, mode == "*/*", mode == "*":
			return true
		case strings.HasSuffix(mode, "/*") && strings.HasPrefix(base, mode[:len(mode)-1]):
			return true
		}
	}
	return false
}

// checkHistoryLength rejects a negative historyLength (A2A §3.2.4).
func checkHistoryLength(field string, n *int32) error {
	if n != nil && *n < 0 {
		return a2a.InvalidParam(field, "historyLength must not be negative")
	}
	return nil
}

// requireID rejects an empty or too long identifier.
func requireID(field, id string) error {
	if fv := idViolation(field, id, true); fv != nil {
		return a2a.InvalidParams(*fv)
	}
	return nil
}

// present prepares a stored task for a client: history trimmed to the
// newest historyLength messages (none for 0, all when nil), artifacts
// omitted unless withArtifacts, and slices clipped so the caller cannot
// disturb the shared snapshot by appending.
func present(t *a2a.Task, historyLength *int32, withArtifacts bool) *a2a.Task {
	n := *t
	n.History = t.History[:len(t.History):len(t.History)]
	if historyLength != nil {
		switch k := int(*historyLength); {
		case k == 0:
			n.History = nil
		case k < len(n.History):
			n.History = n.History[len(n.History)-k:]
		}
	}
	if len(n.History) == 0 {
		n.History = nil
	}
	if !withArtifacts {
		n.Artifacts = nil
	} else if len(t.Artifacts) > 0 {
		n.Artifacts = make([]a2a.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			a.Parts = a.Parts[:len(a.Parts):len(a.Parts)]
			n.Artifacts[i] = a
		}
	}
	return &n
}
