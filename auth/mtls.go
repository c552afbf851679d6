package auth

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// mutualTLSChallenge is the auth-scheme of the challenge [MutualTLS]
// sends. Mutual TLS has no registered HTTP authentication scheme, since its
// credentials travel in the TLS handshake, not in a header; the challenge
// names one anyway so that a client sees what it is asked for.
const mutualTLSChallenge = "MutualTLS"

// MutualTLSScheme is the agent card's description of what [MutualTLS]
// checks: an mtlsSecurityScheme (A2A §4.5). Declare it in
// AgentCard.SecuritySchemes, and require it in
// AgentCard.SecurityRequirements, so that clients know to present a
// certificate.
func MutualTLSScheme() a2a.SecurityScheme {
	return a2a.SecurityScheme{MutualTLS: &a2a.MutualTLSSecurityScheme{
		Description: "A client certificate issued by the operator of this server, presented in the TLS handshake.",
	}}
}

// MutualTLSConfig tells [MutualTLS] how to name callers and whom to admit.
// The zero value admits every verified certificate as its subject.
type MutualTLSConfig struct {
	// Principal names the caller after the leaf of its verified
	// certificate chain. The default is [SubjectPrincipal]. A certificate
	// it names "" is refused: an empty principal would share the anonymous
	// owner's tasks.
	Principal func(*x509.Certificate) string

	// Allow, when not empty, admits only these principals (as Principal
	// names them). A verified certificate of anyone else is refused as
	// not valid here, as a token for another audience is.
	Allow []string

	// Now is the clock against which the leaf's validity period is checked
	// again on every request (the handshake checked it once, but a
	// connection can outlive its certificate). The default is time.Now.
	Now func() time.Time
}

// SubjectPrincipal names the caller after the certificate's subject
// distinguished name in the RFC 2253 form of [crypto/x509/pkix.Name.String], such as
// "CN=alice,OU=agents,O=Example". It is stable for a given certificate
// profile, and unlike the common name alone it keeps apart two subjects
// that only differ in their organization.
func SubjectPrincipal(c *x509.Certificate) string { return c.Subject.String() }

// CommonNamePrincipal names the caller after the certificate subject's
// common name (CN) only. Use it when the client CA issues one name per CN.
func CommonNamePrincipal(c *x509.Certificate) string { return c.Subject.CommonName }

// URIPrincipal names the caller after the certificate's first URI subject
// alternative name, such as a SPIFFE ID ("spiffe://example.org/agent/a");
// a certificate without one names no principal and is refused.
func URIPrincipal(c *x509.Certificate) string {
	if len(c.URIs) == 0 {
		return ""
	}
	return c.URIs[0].String()
}

type mutualTLS struct {
	realm     string
	prefix    string
	principal func(*x509.Certificate) string
	allow     map[string]bool // nil admits everyone
	now       func() time.Time
	next      http.Handler

	missing    []byte // response bodies, encoded once
	unverified []byte
	expired    []byte
	unnamed    []byte
	denied     []byte
}

// MutualTLS returns middleware that admits a request only when its
// connection presented a client certificate that the server's TLS
// configuration verified, and calls next with the certificate's principal
// (see [MutualTLSConfig.Principal]) attached to the request context by
// [server.WithPrincipal].
//
// MutualTLS does not verify certificates itself: it reads the verified
// chains of r.TLS. Serve it with a [tls.Config] whose ClientCAs holds the
// client CA and whose ClientAuth is [tls.VerifyClientCertIfGiven]: the
// handshake then rejects an expired certificate, one from another CA or
// one without the client-authentication extended key usage with a TLS
// alert (the client sees a handshake error, never an HTTP response), and
// admits connections without a certificate, so that the public agent card
// stays readable (A2A §8.2) and MutualTLS can answer them with a 401
// rather than a bare alert. ([tls.RequireAndVerifyClientCert] works too,
// but leaves the card unreadable without a certificate.)
//
// A request without a verified client certificate gets HTTP 401, before
// any A2A method runs (A2A §7.4), with the challenge
//
//	WWW-Authenticate: MutualTLS realm="a2a"
//
// and a google.rpc.Status JSON body with status UNAUTHENTICATED that says
// to present a client certificate signed by the server's client CA, the
// same on every binding. A certificate that was presented but fails here
// (not verified by the server's configuration, outside its validity
// period now, naming no principal, or not in Allow) adds
// error="invalid_certificate" to the challenge.
//
// MutualTLS panics, as [http.ServeMux.Handle] does for a bad pattern, when
// next is nil, when Allow holds an empty principal or when the realm holds
// control characters.
func MutualTLS(cfg MutualTLSConfig, next http.Handler, opts ...Option) http.Handler {
	if next == nil {
		panic("auth: MutualTLS: nil handler")
	}
	s := newSettings("MutualTLS", opts)
	m := &mutualTLS{
		realm:      s.realm,
		prefix:     s.prefix,
		principal:  cfg.Principal,
		now:        cfg.Now,
		next:       next,
		missing:    statusBody("Present a client certificate signed by the server's client CA."),
		unverified: statusBody("The client certificate was not verified. Present a client certificate signed by the server's client CA."),
		expired:    statusBody("The client certificate has expired or is not yet valid. Present a current client certificate signed by the server's client CA."),
		unnamed:    statusBody("The client certificate names no principal."),
		denied:     statusBody("The client certificate is not admitted by this server."),
	}
	if m.principal == nil {
		m.principal = SubjectPrincipal
	}
	if m.now == nil {
		m.now = time.Now
	}
	if len(cfg.Allow) > 0 {
		m.allow = make(map[string]bool, len(cfg.Allow))
		for _, p := range cfg.Allow {
			if p == "" {
				panic("auth: MutualTLS: an empty principal in Allow")
			}
			m.allow[p] = true
		}
	}
	return m
}

func (m *mutualTLS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	leaf, presented := verifiedLeaf(r.TLS)
	switch {
	case !presented:
		m.refuse(w, "", m.missing)
		return
	case leaf == nil:
		m.refuse(w, "invalid_certificate", m.unverified)
		return
	}
	if now := m.now(); now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		m.refuse(w, "invalid_certificate", m.expired)
		return
	}
	principal := m.principal(leaf)
	switch {
	case principal == "":
		m.refuse(w, "invalid_certificate", m.unnamed)
		return
	case m.allow != nil && !m.allow[principal]:
		m.refuse(w, "invalid_certificate", m.denied)
		return
	}
	m.next.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), m.prefix+principal)))
}

func (m *mutualTLS) refuse(w http.ResponseWriter, errCode string, body []byte) {
	refuse(w, challenge(mutualTLSChallenge, m.realm, errCode), body)
}

// verifiedLeaf returns the leaf of the connection's first verified client
// chain; presented reports whether the client sent a certificate at all
// (it may have sent one that nothing verified, under a configuration that
// only requests certificates).
func verifiedLeaf(cs *tls.ConnectionState) (leaf *x509.Certificate, presented bool) {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return nil, false
	}
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return nil, true
	}
	return cs.VerifiedChains[0][0], true
}

// HasClientCertificate reports whether r came over a connection that
// presented a client certificate, verified or not. A server that accepts
// several kinds of credentials can send such requests to [MutualTLS] and
// the others to the authenticator of their header.
func HasClientCertificate(r *http.Request) bool {
	_, presented := verifiedLeaf(r.TLS)
	return presented
}
