package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/serve"
)

// tlsSettings are a2a serve's flags for TLS, mutual TLS and the HTTP
// server's timeouts.
type tlsSettings struct {
	tlsCert, tlsKey string
	tlsSelfSigned   bool
	clientCA        string
	clientPrincipal string
	headerTimeout   time.Duration
	bodyTimeout     time.Duration
	idleTimeout     time.Duration
}

// How --client-principal names the caller of a client certificate.
const (
	principalSubject = "subject"
	principalCN      = "cn"
	principalURI     = "uri"
)

// Lifetime of the --tls-self-signed certificate, and how much of it must be
// left for the one under --data-dir to be used again.
const (
	selfSignedLifetime = 7 * 24 * time.Hour
	selfSignedMinLeft  = 24 * time.Hour
)

func (t *tlsSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&t.tlsCert, "tls-cert", "", "serve HTTPS with the certificate (chain) in PEM `FILE`; needs --tls-key")
	fs.StringVar(&t.tlsKey, "tls-key", "", "the private key of --tls-cert, in PEM `FILE`")
	fs.BoolVar(&t.tlsSelfSigned, "tls-self-signed", false, "serve HTTPS with a self-signed certificate for 127.0.0.1, localhost and the --public-url host, FOR DEVELOPMENT:\n"+
		"kept under --data-dir/tls and reused while it has a day left; clients trust it with --cacert FILE")
	fs.StringVar(&t.clientCA, "client-ca", "", "require client certificates signed by the CA certificates in PEM `FILE` (mutual TLS) on the A2A bindings;\n"+
		"needs --tls-cert or --tls-self-signed. The agent card and /healthz, /readyz, /metrics stay open")
	fs.StringVar(&t.clientPrincipal, "client-principal", principalSubject, "with --client-ca, what names the caller of a client certificate: subject (its distinguished name,\n"+
		"such as CN=alice,O=Example), cn (its common name) or uri (its first URI name, such as a SPIFFE ID)")
	fs.DurationVar(&t.headerTimeout, "header-timeout", 10*time.Second, "time a client has to send a request's headers (and its TLS handshake); slower connections are closed")
	fs.DurationVar(&t.bodyTimeout, "body-timeout", time.Minute, "time a client has to send a request's body once its headers are in; slower requests are cut off")
	fs.DurationVar(&t.idleTimeout, "idle-timeout", 2*time.Minute, "time an idle keep-alive connection is kept open")
}

// validate checks the flags' combinations; the files are read by newTLS.
func (t *tlsSettings) validate(set map[string]bool, publicURL string) []error {
	var errs []error
	if (t.tlsCert == "") != (t.tlsKey == "") {
		if t.tlsCert == "" {
			errs = append(errs, errors.New("--tls-key needs --tls-cert (give both or neither)"))
		} else {
			errs = append(errs, errors.New("--tls-cert needs --tls-key (give both or neither)"))
		}
	}
	if t.tlsSelfSigned && (t.tlsCert != "" || t.tlsKey != "") {
		errs = append(errs, errors.New("--tls-self-signed and --tls-cert/--tls-key exclude each other: choose one"))
	}
	on := t.on()
	if t.clientCA != "" && !on {
		errs = append(errs, errors.New("--client-ca needs TLS: give --tls-cert and --tls-key, or --tls-self-signed"))
	}
	switch t.clientPrincipal {
	case principalSubject, principalCN, principalURI:
	default:
		errs = append(errs, fmt.Errorf("--client-principal must be subject, cn or uri, got %q", t.clientPrincipal))
	}
	if set["client-principal"] && t.clientCA == "" {
		errs = append(errs, errors.New("--client-principal applies to --client-ca, which is not set"))
	}
	if on && strings.HasPrefix(strings.ToLower(publicURL), "http://") {
		errs = append(errs, fmt.Errorf("--public-url %q is http:// but the server speaks TLS; write https://", publicURL))
	}
	if t.headerTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--header-timeout must be positive, got %v", t.headerTimeout))
	}
	if t.bodyTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--body-timeout must be positive, got %v", t.bodyTimeout))
	}
	if t.idleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--idle-timeout must be positive, got %v", t.idleTimeout))
	}
	return errs
}

// on reports whether the server speaks TLS.
func (t *tlsSettings) on() bool { return t.tlsCert != "" || t.tlsSelfSigned }

// serveTLS is the TLS of a run of a2a serve.
type serveTLS struct {
	leaf        *x509.Certificate
	selfSigned  string // where the self-signed certificate is kept; "" in memory or with --tls-cert
	fingerprint string // SHA-256 of the leaf, as "AB:CD:..."
	clientCAs   []*x509.Certificate
}

// setupTLS reads the certificates and returns the options that serve TLS
// (and mutual TLS) on the listener at addr; none without TLS flags.
func (s *serveRun) setupTLS(addr net.Addr) ([]serve.Option, error) {
	t := &s.cfg.tlsSettings
	if !t.on() {
		return nil, nil
	}
	st := &serveTLS{}
	var cert tls.Certificate
	var err error
	if t.tlsSelfSigned {
		hosts := selfSignedHosts(addr, s.cfg.publicURL)
		cert, st.selfSigned, err = selfSignedCert(s.cfg.dataDir, hosts, time.Now())
		if err != nil {
			// In memory then: clients cannot pin it across restarts, but
			// the server runs.
			s.log.Warn("cannot keep the self-signed certificate under --data-dir; it lives in memory only", "err", err)
			if cert, err = newSelfSigned(hosts, time.Now()); err != nil {
				return nil, fmt.Errorf("--tls-self-signed: %w", err)
			}
		}
		s.log.Warn("serving HTTPS with a self-signed certificate: for development only", "sha256", fingerprint(cert.Leaf), "hosts", strings.Join(hosts, ","))
	} else {
		var warnings []string
		if cert, warnings, err = loadKeyPair("--tls-cert", t.tlsCert, "--tls-key", t.tlsKey, time.Now()); err != nil {
			return nil, err
		}
		if host := publicHost(s.cfg.publicURL); host != "" {
			if err := cert.Leaf.VerifyHostname(host); err != nil {
				warnings = append(warnings, fmt.Sprintf("--tls-cert %s: not valid for the --public-url host: %v", t.tlsCert, err))
			}
		}
		for _, w := range warnings {
			s.log.Warn(w)
		}
	}
	st.leaf = cert.Leaf
	st.fingerprint = fingerprint(cert.Leaf)
	config := &tls.Config{
		// TLS 1.3 is preferred and negotiated whenever the client has it;
		// 1.2 stays for clients and TLS-inspecting proxies that lack 1.3.
		// Go's 1.2 suites are all ECDHE with AEAD ciphers, and SSLv3, 1.0
		// and 1.1 are off (A2A §13.4).
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
	}
	if t.clientCA != "" {
		pool, cas, warnings, err := loadClientCAs(t.clientCA)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			s.log.Warn(w)
		}
		// IfGiven, not Require: the card and probes stay reachable without a
		// certificate, and auth.MutualTLS answers the A2A bindings with a
		// 401 challenge rather than a bare TLS alert.
		config.ClientCAs, config.ClientAuth = pool, tls.VerifyClientCertIfGiven
		st.clientCAs = cas
	}
	s.tls = st
	opts := []serve.Option{serve.WithTLS(config)}
	if t.tlsSelfSigned {
		// No HSTS: a browser told to trust a development certificate for
		// localhost would then refuse plain HTTP on every localhost port
		// for a year.
		opts = append(opts, serve.WithHSTS(""))
	}
	if st.clientCAs != nil {
		principal := auth.SubjectPrincipal
		switch t.clientPrincipal {
		case principalCN:
			principal = auth.CommonNamePrincipal
		case principalURI:
			principal = auth.URIPrincipal
		}
		opts = append(opts, serve.WithMutualTLS(auth.MutualTLSConfig{Principal: principal}, auth.WithPrincipalPrefix(mtlsPrincipalPrefix)))
	}
	return opts, nil
}

// printTLS writes the banner's TLS lines.
func (s *serveRun) printTLS() {
	if s.tls == nil {
		fmt.Fprintf(s.stdout, "  tls         none: plain HTTP (use --tls-cert/--tls-key, or a proxy that terminates TLS, in production)\n")
		return
	}
	if s.cfg.tlsSelfSigned {
		where := "in memory"
		if s.tls.selfSigned != "" {
			where = s.tls.selfSigned
		}
		fmt.Fprintf(s.stdout, "  tls         self-signed certificate for DEVELOPMENT ONLY (%s), until %s\n", where, s.tls.leaf.NotAfter.UTC().Format(time.DateOnly))
		if s.tls.selfSigned != "" {
			fmt.Fprintf(s.stdout, "              clients trust it with --cacert %s\n", s.tls.selfSigned)
		}
	} else {
		fmt.Fprintf(s.stdout, "  tls         %s (%s), until %s\n", s.cfg.tlsCert, s.tls.leaf.Subject, s.tls.leaf.NotAfter.UTC().Format(time.DateOnly))
	}
	fmt.Fprintf(s.stdout, "  sha256      %s\n", s.tls.fingerprint)
	if s.tls.clientCAs != nil {
		names := make([]string, len(s.tls.clientCAs))
		for i, c := range s.tls.clientCAs {
			names[i] = c.Subject.String()
		}
		fmt.Fprintf(s.stdout, "  auth        client certificates (mutual TLS) of %s, caller named by %s\n", strings.Join(names, "; "), s.cfg.clientPrincipal)
	}
}

// mutualTLSOn reports whether --client-ca guards the bindings.
func (s *serveRun) mutualTLSOn() bool { return s.tls != nil && s.tls.clientCAs != nil }

// fingerprint is the SHA-256 of c's DER, in the colon-separated upper-case
// hex that browsers and openssl show.
func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// publicHost is the host name of --public-url, "" when none.
func publicHost(publicURL string) string {
	if publicURL == "" {
		return ""
	}
	u, err := url.Parse(publicURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// loadKeyPair reads a certificate and its key, the files of the flags
// certFlag and keyFlag. Errors name the flag, the file and what is wrong
// with it, never key material; warnings are for a certificate that does
// not hold now.
func loadKeyPair(certFlag, certFile, keyFlag, keyFile string, now time.Time) (tls.Certificate, []string, error) {
	certPEM, err := readFlagFile(certFlag, certFile)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certs, err := pemCertificates(certFlag, certFile, certPEM)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyPEM, err := readFlagFile(keyFlag, keyFile)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	if err := checkKeyPEM(keyFlag, keyFile, keyPEM); err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s %s does not go with %s %s: %v", keyFlag, keyFile, certFlag, certFile, err)
	}
	leaf := certs[0]
	cert.Leaf = leaf
	var warnings []string
	switch {
	case now.After(leaf.NotAfter):
		warnings = append(warnings, fmt.Sprintf("%s %s: the certificate expired on %s; the other side will refuse it", certFlag, certFile, leaf.NotAfter.UTC().Format(time.RFC3339)))
	case now.Before(leaf.NotBefore):
		warnings = append(warnings, fmt.Sprintf("%s %s: the certificate is not valid before %s; the other side will refuse it", certFlag, certFile, leaf.NotBefore.UTC().Format(time.RFC3339)))
	case leaf.NotAfter.Sub(now) < 7*24*time.Hour:
		warnings = append(warnings, fmt.Sprintf("%s %s: the certificate expires on %s", certFlag, certFile, leaf.NotAfter.UTC().Format(time.RFC3339)))
	}
	return cert, warnings, nil
}

// loadClientCAs reads --client-ca.
func loadClientCAs(file string) (*x509.CertPool, []*x509.Certificate, []string, error) {
	data, err := readFlagFile("--client-ca", file)
	if err != nil {
		return nil, nil, nil, err
	}
	certs, err := pemCertificates("--client-ca", file, data)
	if err != nil {
		return nil, nil, nil, err
	}
	pool := x509.NewCertPool()
	var warnings []string
	for i, c := range certs {
		pool.AddCert(c)
		if !c.IsCA {
			warnings = append(warnings, fmt.Sprintf("--client-ca %s: certificate %d (%s) is not a CA certificate; only that very certificate will be admitted", file, i+1, c.Subject))
		}
	}
	return pool, certs, warnings, nil
}

// readFlagFile reads the file of a flag, naming both in an error.
func readFlagFile(flagName, file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s %s: cannot read: %v", flagName, file, err)
	}
	return data, nil
}

// pemCertificates parses the CERTIFICATE blocks of a PEM file.
func pemCertificates(flagName, file string, data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	sawKey := false
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s %s: certificate %d: %v", flagName, file, len(certs)+1, err)
			}
			certs = append(certs, c)
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			sawKey = true
		}
	}
	if len(certs) > 0 {
		return certs, nil
	}
	if sawKey {
		return nil, fmt.Errorf("%s %s: holds a private key, not a certificate (is it the key file?)", flagName, file)
	}
	return nil, fmt.Errorf("%s %s: no PEM certificate in it (want a \"-----BEGIN CERTIFICATE-----\" block)", flagName, file)
}

// checkKeyPEM checks that a PEM file holds a private key this server can
// use, without printing any of it.
func checkKeyPEM(flagName, file string, data []byte) error {
	sawCert := false
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			sawCert = true
		case b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "":
			return fmt.Errorf("%s %s: the private key is encrypted; give it unencrypted (and readable by this user only)", flagName, file)
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
				return nil
			}
			if _, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
				return nil
			}
			if _, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
				return nil
			}
			return fmt.Errorf("%s %s: the %s block is not a private key Go can read (want PKCS #8, SEC 1 EC or PKCS #1 RSA)", flagName, file, b.Type)
		}
	}
	if sawCert {
		return fmt.Errorf("%s %s: holds a certificate, not a private key (is it the certificate file?)", flagName, file)
	}
	return fmt.Errorf("%s %s: no PEM private key in it (want a \"-----BEGIN PRIVATE KEY-----\" block)", flagName, file)
}

// selfSignedHosts are the names the --tls-self-signed certificate is for:
// the loopback names, the listen host unless it is a wildcard, and the
// --public-url host.
func selfSignedHosts(addr net.Addr, publicURL string) []string {
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	add := func(h string) {
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if ta, ok := addr.(*net.TCPAddr); ok && !ta.IP.IsUnspecified() {
		add(ta.IP.String())
	}
	add(publicHost(publicURL))
	return hosts
}

// selfSignedCert returns the self-signed certificate kept in dataDir/tls
// when it is for hosts and has a day left, else a new one it keeps there
// (the key readable by this user only). Reusing it lets clients pin it
// across restarts.
func selfSignedCert(dataDir string, hosts []string, now time.Time) (tls.Certificate, string, error) {
	dir := filepath.Join(dataDir, "tls")
	certFile, keyFile := filepath.Join(dir, "self-signed.crt"), filepath.Join(dir, "self-signed.key")
	if cert, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil && coversHosts(cert.Leaf, hosts) && cert.Leaf.NotAfter.Sub(now) >= selfSignedMinLeft && !now.Before(cert.Leaf.NotBefore) {
		return cert, certFile, nil
	}
	cert, err := newSelfSigned(hosts, now)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cert, "", err
	}
	if err := writeFileAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return cert, "", err
	}
	if err := writeFileAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644); err != nil {
		return cert, "", err
	}
	return cert, certFile, nil
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it, so that a crash leaves the old file or the new one.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// coversHosts reports whether c is for every one of hosts.
func coversHosts(c *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// newSelfSigned makes an ECDSA P-256 certificate for hosts, valid from a
// minute ago (for clocks a little behind) for selfSignedLifetime.
func newSelfSigned(hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "a2a serve development certificate", Organization: []string{"goa2a (self-signed)"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(selfSignedLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
