package cli

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/serve"
)

// cardJWKSPath is where a2a serve --sign-key publishes the public key of
// its card signatures, named as their jku.
const cardJWKSPath = auth.CardJWKSPath

// signSettings are the flags of agent card signing (A2A §8.4).
type signSettings struct {
	signKeyFile string
	signKeyID   string

	signKey crypto.Signer // made by validate
	alg     string        // of the key's signatures
}

func (g *signSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&g.signKeyFile, "sign-key", "", "sign the agent card (A2A §8.4) with the private key in this PEM `FILE` (EC P-256: ES256, RSA of 2048 bits or more:\n"+
		"RS256, Ed25519: EdDSA; PKCS #8, SEC 1 or PKCS #1, unencrypted), and publish its public key as a JWK set at\n"+
		cardJWKSPath+", which the signature names as its jku")
	fs.StringVar(&g.signKeyID, "sign-kid", "", "with --sign-key, the key ID (kid) of the signatures (default: derived from the public key)")
}

// validate reads the key. set tells which settings were given.
func (g *signSettings) validate(set map[string]bool) []error {
	if g.signKeyFile == "" {
		if set["sign-kid"] {
			return []error{errors.New("--sign-kid applies to --sign-key, which is not set")}
		}
		return nil
	}
	data, err := readFlagFile("--sign-key", g.signKeyFile)
	if err != nil {
		return []error{err}
	}
	key, err := parseSigningKey(data)
	if err != nil {
		return []error{fmt.Errorf("--sign-key %s: %v", g.signKeyFile, err)}
	}
	g.signKey = key
	if g.signKeyID == "" {
		if g.signKeyID, err = auth.KeyID("card-", key.Public()); err != nil {
			return []error{fmt.Errorf("--sign-key %s: %v", g.signKeyFile, err)}
		}
	}
	signer, err := auth.NewCardSigner(g.signKeyID, key, "") // a usable key (P-256, RSA size)
	if err != nil {
		return []error{fmt.Errorf("--sign-key %s: %v", g.signKeyFile, err)}
	}
	g.alg = signer.Alg()
	return nil
}

// parseSigningKey reads the first private key block of a PEM file. Errors
// say what is wrong, never what the key is.
func parseSigningKey(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM private key block (PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY) in the file")
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the private key is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)")
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the %s block does not parse", b.Type)
		}
		switch k := k.(type) {
		case *ecdsa.PrivateKey:
			return k, nil
		case *rsa.PrivateKey:
			return k, nil
		case ed25519.PrivateKey:
			return k, nil
		default:
			return nil, fmt.Errorf("unsupported private key type %T (want EC P-256, RSA or Ed25519)", k)
		}
	}
}

// cardSigning returns the option that signs the card with --sign-key,
// if given; the server publishes the key at serve.CardJWKSPath.
func (s *serveRun) cardSigning() []serve.Option {
	g := &s.cfg.signSettings
	if g.signKey == nil {
		return nil
	}
	return []serve.Option{serve.WithCardSigning(g.signKey, g.signKeyID)}
}

// printCardSigning says how the card is signed.
func (s *serveRun) printCardSigning() {
	if g := &s.cfg.signSettings; g.signKey != nil {
		fmt.Fprintf(s.stdout, "  card signed %s, kid %s, key at %s%s\n", g.alg, g.signKeyID, s.srv.URL(), cardJWKSPath)
	}
}
