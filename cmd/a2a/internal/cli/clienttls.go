package cli

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// clientTLSFlags are the client commands' TLS flags: which servers to
// trust besides the system's CAs, and the client certificate for servers
// that ask for one (mutual TLS).
//
// There is deliberately no flag to skip verification (curl's --insecure):
// it would send tokens and API keys to whoever answers, and the only case
// that needs it, a2a serve --tls-self-signed, is served by --cacert with
// the certificate file that serve's banner names.
type clientTLSFlags struct {
	cacert    string
	cert, key string
}

func (f *clientTLSFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cacert, "cacert", "", "also trust the CA (or self-signed) certificates in PEM `FILE` for https:// agents, such as the one of a2a serve --tls-self-signed")
	fs.StringVar(&f.cert, "cert", "", "present the client certificate in PEM `FILE` to agents that ask for one (mutual TLS); needs --key")
	fs.StringVar(&f.key, "key", "", "the private key of --cert, in PEM `FILE`")
}

// httpClient returns the HTTP client the flags ask for, nil when they ask
// for nothing. Warnings (a client certificate out of its validity period)
// go to stderr. Errors name the flag and the file, never key material.
func (f *clientTLSFlags) httpClient(stderr io.Writer) (*http.Client, error) {
	if f.cacert == "" && f.cert == "" && f.key == "" {
		return nil, nil
	}
	if (f.cert == "") != (f.key == "") {
		if f.cert == "" {
			return nil, usageError("--key needs --cert (give both or neither)")
		}
		return nil, usageError("--cert needs --key (give both or neither)")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.cacert != "" {
		data, err := readFlagFile("--cacert", f.cacert)
		if err != nil {
			return nil, usageError(err.Error())
		}
		certs, err := pemCertificates("--cacert", f.cacert, data)
		if err != nil {
			return nil, usageError(err.Error())
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		for _, c := range certs {
			pool.AddCert(c)
		}
		cfg.RootCAs = pool
	}
	if f.cert != "" {
		cert, warnings, err := loadKeyPair("--cert", f.cert, "--key", f.key, time.Now())
		if err != nil {
			return nil, usageError(err.Error())
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "a2a: warning: %s\n", w)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, nil
}
