package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
)

// opsMux serves /healthz (200 while the process runs), /readyz (200 while
// serving and the store answers its probe, 503 from the start of shutdown
// or while the store is unavailable) and the WithOpsHandler handlers.
func (s *Server) opsMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !s.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "shutting down\n")
			return
		}
		if err := s.probe.check(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "store unavailable\n")
			return
		}
		io.WriteString(w, "ready\n")
	})
	for pattern, h := range s.cfg.ops {
		mux.Handle(pattern, h)
	}
	return mux
}

// Readiness probes of the store: at most one each probeEvery, each given
// probeTimeout; between them /readyz answers with the last result.
const (
	probeEvery   = time.Second
	probeTimeout = 2 * time.Second
)

// readiness asks the store whether it can serve now (store.Prober), for
// /readyz, and keeps the answer for probeEvery so that probes, however
// many, do not load the store. A store that cannot probe (memory) is
// always ready.
type readiness struct {
	p   store.Prober // nil: always ready
	log *slog.Logger

	mu   sync.Mutex // held during a probe: callers meanwhile wait for its result
	at   time.Time  // of the last probe
	err  error      // its result
	down bool       // the last probe failed (to log changes only)
}

func newReadiness(st store.Store, log *slog.Logger) *readiness {
	p, _ := st.(store.Prober)
	return &readiness{p: p, log: log}
}

// check returns nil when the store is ready, or why not.
func (rd *readiness) check(ctx context.Context) error {
	if rd.p == nil {
		return nil
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if !rd.at.IsZero() && time.Since(rd.at) < probeEvery {
		return rd.err
	}
	// The probe is not the caller's: one that gives up does not fail it
	// for the callers that wait behind it.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	err := rd.p.Probe(pctx)
	cancel()
	if err != nil && pctx.Err() != nil && !errors.Is(err, store.ErrUnavailable) {
		err = fmt.Errorf("the store did not answer its probe in %v: %w", probeTimeout, store.Unavailable(err))
	}
	rd.at, rd.err = time.Now(), err
	switch {
	case err != nil && !rd.down:
		rd.log.Warn("not ready: the store is unavailable", "err", err)
	case err == nil && rd.down:
		rd.log.Info("ready: the store is available again")
	}
	rd.down = err != nil
	return err
}

// withClientKey counts callers without a principal by their IP address
// (an IPv6 one by its /64, see ClientKey) for the Handler's per-caller
// limits (without a key the server cannot tell them apart, and does not
// limit them per caller). Loopback callers get no key: they are this
// machine, or a reverse proxy on it that every remote caller comes
// through, and limiting them as one caller would throttle all of those
// together. Behind such a proxy, the per-caller limits apply to
// authenticated callers only; the totals apply to all.
func withClientKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := ClientKey(r.RemoteAddr); key != "" {
			r = r.WithContext(server.WithClientKey(r.Context(), key))
		}
		next.ServeHTTP(w, r)
	})
}

// ClientKey is the key of a caller at remoteAddr (host:port, or a bare
// host) for the per-caller limits, or "" for loopback or what is not an IP
// address. An IPv4 caller is keyed by its address (an IPv4-mapped IPv6
// address as the IPv4 one), an IPv6 caller by its /64 prefix, such as
// "2001:db8:1:2::/64": a host is usually given a whole /64 and can pick
// any address in it, so keying by address would let it be as many callers
// as it likes.
func ClientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	ip = ip.Unmap().WithZone("")
	if ip.IsLoopback() {
		return ""
	}
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ""
	}
	return p.String()
}
