package server

import (
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/goa2a/a2a/a2a"
)

// validateSend checks a SendMessage request before anything runs (A2A
// §3.3.2: validate every input; REQUIREMENTS R046–R050, R063, R122, R065).
func (h *Handler) validateSend(req *a2a.SendMessageRequest) error {
	if req == nil || req.Message == nil {
		return a2a.InvalidParam("message", "message is required")
	}
	var v []a2a.FieldViolation
	m := req.Message
	if m.MessageID == "" {
		v = append(v, a2a.FieldViolation{Field: "message.messageId", Description: "messageId is required"})
	}
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

// pushConfigViolations checks a webhook config; prefix is the field path.
func pushConfigViolations(prefix string, c *a2a.TaskPushNotificationConfig) []a2a.FieldViolation {
	var v []a2a.FieldViolation
	if c.URL == "" {
		v = append(v, a2a.FieldViolation{Field: prefix + "url", Description: "url is required"})
	} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v = append(v, a2a.FieldViolation{Field: prefix + "url", Description: "url must be an absolute http or https URL"})
	}
	if a := c.Authentication; a != nil && a.Scheme == "" {
		v = append(v, a2a.FieldViolation{Field: prefix + "authentication.scheme", Description: "scheme is required when authentication is given"})
	}
	return v
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

// requireID rejects an empty identifier.
func requireID(field, id string) error {
	if id == "" {
		return a2a.InvalidParam(field, field+" is required")
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
