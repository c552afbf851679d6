package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"flag"
	"fmt"
	"strings"

	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/serve"
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

// pushOptions returns the option of push delivery, none with --push=false.
func (s *serveRun) pushOptions() []serve.Option {
	g := &s.cfg.pushSettings
	if !g.push {
		return nil
	}
	if s.cfg.storeSpec.kind == storePostgres && g.key == nil {
		// Any replica may deliver a task's notifications: each signing with
		// a key of its own, a receiver that fetched one replica's JWK set
		// refuses the others'.
		s.log.Warn("replicas sharing this store sign push notifications with keys of their own",
			"hint", "give every replica the same --push-sign-key, so that receivers verify whichever replica delivers")
	}
	return []serve.Option{serve.WithPush(serve.Push{Allow: g.allow, Key: g.key})}
}

// printPush says how webhooks are delivered.
func (s *serveRun) printPush() {
	if !s.cfg.pushSettings.push {
		fmt.Fprintf(s.stdout, "  push        off\n")
		return
	}
	allow := "none"
	if len(s.cfg.pushSettings.allow) > 0 {
		allow = strings.Join(s.cfg.pushSettings.allow, ", ")
	}
	fmt.Fprintf(s.stdout, "  push        webhooks signed ES256, key at %s%s; private addresses allowed: %s\n", s.srv.URL(), push.JWKSPath, allow)
}
