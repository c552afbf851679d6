package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
)

// pushSettings are the flags of webhook delivery (push notifications).
type pushSettings struct {
	push       bool
	allowHosts string
	keyFile    string

	allow []string          // parsed --push-allow-hosts
	key   *ecdsa.PrivateKey // from --push-sign-key, or made at start
}

func (g *pushSettings) register(fs *flag.FlagSet) {
	fs.BoolVar(&g.push, "push", true, "deliver push notifications: the card declares pushNotifications, and every status and artifact update\n"+
		"is POSTed to the webhooks clients register, signed (ES256, key published at "+push.JWKSPath+"), retried\n"+
		"with backoff, and resumed after a restart; --push=false refuses push configs")
	fs.StringVar(&g.allowHosts, "push-allow-hosts", "", "comma-separated `LIST` of hosts, addresses or prefixes (127.0.0.1, ::1, 10.1.0.0/16, hooks.internal)\n"+
		"that webhooks may reach although they are loopback, private or link-local, which is refused by default\n"+
		"(server-side request forgery): for local development and tests")
	fs.StringVar(&g.keyFile, "push-sign-key", "", "sign push notifications with the EC P-256 private key in this PEM `FILE` (default: a key made at start;\n"+
		"replicas behind one URL need the same key, so that receivers find it in the JWK set any of them serves)")
}

// validate checks the allow-list and reads the key. set tells which
// settings were given.
func (g *pushSettings) validate(set map[string]bool) []error {
	if !g.push {
		var errs []error
		for _, name := range []string{"push-allow-hosts", "push-sign-key"} {
			if set[name] {
				errs = append(errs, fmt.Errorf("--%s applies to push delivery, which --push=false turns off", name))
			}
		}
		return errs
	}
	var errs []error
	if g.allowHosts != "" {
		g.allow = push.ParseAllowList(g.allowHosts)
		if _, err := push.NewGuard(push.WithAllow(g.allow...)); err != nil {
			errs = append(errs, fmt.Errorf("--push-allow-hosts: %v", strings.TrimPrefix(err.Error(), "push: ")))
		}
	}
	if g.keyFile != "" {
		data, err := readFlagFile("--push-sign-key", g.keyFile)
		if err != nil {
			return append(errs, err)
		}
		key, err := parseSigningKey(data)
		if err != nil {
			return append(errs, fmt.Errorf("--push-sign-key %s: %v", g.keyFile, err))
		}
		ec, ok := key.(*ecdsa.PrivateKey)
		if !ok || ec.Curve != elliptic.P256() {
			return append(errs, fmt.Errorf("--push-sign-key %s: push notifications are signed with ES256, which needs an EC P-256 key", g.keyFile))
		}
		g.key = ec
	}
	return errs
}

// pushRun is the delivery worker of a serve run.
type pushRun struct {
	d      *push.Deliverer
	signer *push.Signer
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// setupPush declares push in the card (or, with --push=false, takes it
// out), with the extension that lets a2a push get show delivery state.
func (s *serveRun) setupPush(card *a2a.AgentCard) {
	if !s.cfg.pushSettings.push {
		card.Capabilities.PushNotifications = nil
		return
	}
	card.Capabilities.PushNotifications = a2a.Ptr(true)
	card.Capabilities.Extensions = append(card.Capabilities.Extensions, a2a.AgentExtension{
		URI:         server.PushDeliveryExtension,
		Description: "declare it on GetTaskPushNotificationConfig to get the webhook's delivery state in the " + server.PushDeliveryHeader + " response header",
	})
}

// newDeliverer makes the deliverer once the store is open.
func (s *serveRun) newDeliverer() (*pushRun, error) {
	g := &s.cfg.pushSettings
	if !g.push {
		return nil, nil
	}
	key := g.key
	if key == nil {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), nil); err != nil {
			return nil, fmt.Errorf("making a push signing key: %w", err)
		}
	}
	kid, err := keyID("push-", &key.PublicKey)
	if err != nil {
		return nil, err
	}
	signer, err := push.NewSigner(kid, key, push.WithIssuer(s.base))
	if err != nil {
		return nil, err
	}
	guard, err := push.NewGuard(push.WithAllow(g.allow...))
	if err != nil {
		return nil, fmt.Errorf("--push-allow-hosts: %w", err)
	}
	d, err := push.NewDeliverer(s.store, push.WithGuard(guard), push.WithSigning(signer),
		push.WithLogger(s.log), push.WithResultHook(s.metrics.observePush))
	if err != nil {
		return nil, err
	}
	return &pushRun{d: d, signer: signer}, nil
}

// start runs the deliverer until stop.
func (p *pushRun) start() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		_ = p.d.Run(ctx) // returns ctx's error, at stop
	}()
}

// stop ends deliveries in flight and waits for the deliverer; what is not
// delivered stays in the store, for the next start.
func (p *pushRun) stop() {
	if p == nil || p.cancel == nil {
		return
	}
	p.cancel()
	p.done.Wait()
}

// isPushJWKS tells whether path is the published push key, which, like
// the card, needs no credentials.
func (s *serveRun) isPushJWKS(path string) bool {
	return s.push != nil && path == push.JWKSPath
}

// mountPushJWKS serves the push signing key at push.JWKSPath.
func (s *serveRun) mountPushJWKS(mux *http.ServeMux) {
	if s.push != nil {
		mux.Handle(push.JWKSPath, s.push.signer.JWKSHandler())
	}
}

// printPush says how webhooks are delivered.
func (s *serveRun) printPush() {
	if s.push == nil {
		fmt.Fprintf(s.stdout, "  push        off\n")
		return
	}
	allow := "none"
	if len(s.cfg.pushSettings.allow) > 0 {
		allow = strings.Join(s.cfg.pushSettings.allow, ", ")
	}
	fmt.Fprintf(s.stdout, "  push        webhooks signed ES256, key at %s%s; private addresses allowed: %s\n", s.base, push.JWKSPath, allow)
}
