package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
)

// pushListenAbout says what a2a push listen does, for its help.
const pushListenAbout = "receive push notifications on a local webhook and print them"

// pushListenFlags are the flags of a2a push listen.
type pushListenFlags struct {
	addr, token, jwks string
	tasks             multiFlag
	json              bool
}

// newPushListenFlags returns the flag set of a2a push listen, which fills
// o. Parse errors and help are printed by pushListen, not by the flag
// package.
func newPushListenFlags(o *pushListenFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("push listen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "the `HOST:PORT` to listen on (port 0: any free port)")
	fs.StringVar(&o.token, "token", "", "the config's token, expected in the "+push.TokenHeader+" header")
	fs.StringVar(&o.jwks, "jwks", "", "verify each notification's "+push.SignatureHeader+" JWT with the JWK set at `URL` (the agent's URL + "+push.JWKSPath+")")
	fs.Var(&o.tasks, "task", "accept notifications about this task only (repeatable; default: any task)")
	fs.BoolVar(&o.json, "json", false, "print each event as one line of protocol JSON (StreamResponse)")
	return fs
}

// pushListen runs a2a push listen: a webhook on addr, a push.Receiver that
// prints what arrives, until ctx ends (Ctrl-C).
func pushListen(e *env, args []string) int {
	var o pushListenFlags
	fs := newPushListenFlags(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(e.stdout, "Usage: a2a push listen [flags]\n\n  %s\n\nFlags:\n", pushListenAbout)
			printFlags(e.stdout, fs, nil)
			return ExitOK
		}
		return usageFail(e.stderr, "push listen", flagProblem(fs, err))
	}
	if fs.NArg() > 0 {
		return usageFail(e.stderr, "push listen", fmt.Sprintf("unexpected argument %q (a2a push listen takes flags only)", fs.Arg(0)))
	}
	var opts []push.ReceiverOption
	if o.token != "" {
		opts = append(opts, push.WithToken(o.token))
	}
	if o.jwks != "" {
		opts = append(opts, push.WithJWKSURL(o.jwks))
	}
	if o.token == "" && o.jwks == "" {
		return usageFail(e.stderr, "push listen", "give --token (the config's token) or --jwks (the agent's push JWK set URL): a webhook that takes anything from anyone is refused")
	}
	if len(o.tasks) > 0 {
		opts = append(opts, push.WithTasks(o.tasks...))
	}
	var mu sync.Mutex // one event's lines at a time
	s := style{e.term}
	view := newLiveView(e.stdout, s, false)
	lastTask := ""
	opts = append(opts, push.WithRejectHook(func(r *http.Request, status int, reason string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(e.stderr, "a2a push listen: refused a notification from %s: %d %s\n", r.RemoteAddr, status, reason)
	}))
	rcv, err := push.NewReceiver(func(_ context.Context, ev push.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if o.json {
			return e.printJSON(a2a.StreamResponse{Event: ev.Event})
		}
		if ev.TaskID != lastTask {
			fmt.Fprintf(e.stdout, "%s %s\n", s.dim("push for task"), ev.TaskID)
			lastTask = ev.TaskID
		}
		view.Event(ev.Event)
		return nil
	}, opts...)
	if err != nil {
		return usageFail(e.stderr, "push listen", err.Error())
	}
	if o.jwks != "" {
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		err := rcv.Refresh(ctx)
		cancel()
		if err != nil {
			// Not fatal: the key host may come up later; each notification
			// tries again.
			fmt.Fprintf(e.stderr, "a2a push listen: warning: %v (will retry when a notification arrives)\n", err)
		}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "a2a push listen: cannot listen on %s: %v\n", o.addr, err)
		return ExitError
	}
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	info := e.stdout
	if o.json {
		info = e.stderr // keep stdout to JSON lines
	}
	mu.Lock()
	fmt.Fprintf(info, "webhook at http://%s/  (register it with: a2a push create URL TASK_ID http://%s/)\n", ln.Addr(), ln.Addr())
	mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-e.ctx.Done():
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		return ExitOK
	case err := <-done:
		fmt.Fprintf(e.stderr, "a2a push listen: %v\n", err)
		return ExitError
	}
}
