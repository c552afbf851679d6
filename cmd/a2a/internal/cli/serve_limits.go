package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// limitSettings are the flags of the server's limits (server.Limits). On
// the command line a count of 0 means no limit.
type limitSettings struct {
	maxStreams             int
	maxStreamsPerPrincipal int
	maxTasksPerPrincipal   int
	maxTasks               int
	authFailures           int
	rate                   float64
	burst                  int
	maxParts               int
	maxDepth               int
}

// Defaults of a2a serve: the library's, plus a rate limit, since a2a serve
// faces the network. 20 calls a second is far above what a person or an
// agent driving tasks needs (a stream counts once, however long), and a
// burst of 40 lets a client fetch a page of tasks and each of them at once.
const (
	serveRate  = 20
	serveBurst = 40
)

func (l *limitSettings) register(fs *flag.FlagSet) {
	fs.IntVar(&l.maxStreams, "max-streams", server.DefaultMaxStreams, "most streams (message:stream, subscribe) open at once on the server; 0 for no limit")
	fs.IntVar(&l.maxStreamsPerPrincipal, "max-streams-per-principal", server.DefaultMaxStreamsPerPrincipal, "most streams one caller may hold open at once; 0 for no limit.\n"+
		"A caller is its principal (--api-key, --client-ca) or, without one, its IP address; loopback\n"+
		"callers without a principal (this machine, or a reverse proxy on it) are not limited per caller")
	fs.IntVar(&l.maxTasksPerPrincipal, "max-tasks-per-principal", server.DefaultMaxActiveTasksPerPrincipal, "most tasks one caller may have running in the agent at once; a message that would start\n"+
		"another is refused (continuing a task never is); 0 for no limit")
	fs.IntVar(&l.maxTasks, "max-tasks", server.DefaultMaxActiveTasks, "most tasks running in the agent at once on the server, all callers together; a message that\n"+
		"would start another is refused (continuing a task never is); 0 for no limit")
	fs.IntVar(&l.authFailures, "max-auth-failures", serve.DefaultAuthFailures, "refused authentications (401, 403) one client address may have before its requests to the A2A\n"+
		"bindings are refused with 429, unchecked; it earns one back each second. An address is an IPv4\n"+
		"address or an IPv6 /64; loopback is not counted (see --max-streams-per-principal); 0 for no limit")
	fs.Float64Var(&l.rate, "rate", serveRate, "calls per second one caller may make on average (a token bucket of --burst); 0 turns rate limiting off")
	fs.IntVar(&l.burst, "burst", serveBurst, "calls one caller may make at once after a quiet spell, with --rate")
	fs.IntVar(&l.maxParts, "max-parts", server.DefaultMaxParts, "most parts a message may have; 0 for no limit")
	fs.IntVar(&l.maxDepth, "max-depth", a2a.DefaultMaxDepth, "how deeply a request's JSON may nest objects and arrays; 0 for no limit")
}

// validate checks the limit flags.
func (l *limitSettings) validate() []error {
	var errs []error
	for _, c := range []struct {
		name string
		v    int
	}{
		{"max-streams", l.maxStreams},
		{"max-streams-per-principal", l.maxStreamsPerPrincipal},
		{"max-tasks-per-principal", l.maxTasksPerPrincipal},
		{"max-tasks", l.maxTasks},
		{"max-auth-failures", l.authFailures},
		{"max-parts", l.maxParts},
		{"max-depth", l.maxDepth},
	} {
		if c.v < 0 {
			errs = append(errs, fmt.Errorf("--%s must not be negative (0 for no limit), got %d", c.name, c.v))
		}
	}
	switch {
	case math.IsNaN(l.rate) || math.IsInf(l.rate, 0) || l.rate < 0:
		errs = append(errs, fmt.Errorf("--rate must be a number of calls per second, 0 or more (0 turns it off), got %v", l.rate))
	case l.rate > 0 && l.burst < 1:
		errs = append(errs, fmt.Errorf("--burst must be at least 1 with --rate, got %d", l.burst))
	}
	if l.burst < 0 {
		errs = append(errs, errors.New("--burst must not be negative"))
	}
	return errs
}

// limits returns the flags as server limits.
func (l *limitSettings) limits() server.Limits {
	count := func(n int) int {
		if n == 0 {
			return -1 // no limit
		}
		return n
	}
	out := server.Limits{
		MaxParts:                   count(l.maxParts),
		MaxDepth:                   count(l.maxDepth),
		MaxStreams:                 count(l.maxStreams),
		MaxStreamsPerPrincipal:     count(l.maxStreamsPerPrincipal),
		MaxActiveTasksPerPrincipal: count(l.maxTasksPerPrincipal),
		MaxActiveTasks:             count(l.maxTasks),
	}
	if l.rate > 0 {
		out.Rate, out.Burst = l.rate, l.burst
	}
	return out
}

// describe is the banner's summary of the limits a person most often runs
// into: the rate, then streams and running tasks per caller and in all.
func (l *limitSettings) describe() string {
	count := func(n int, what string) string {
		if n == 0 {
			return "unlimited " + what
		}
		return fmt.Sprintf("%d %s", n, what)
	}
	rate := "no rate limit"
	if l.rate > 0 {
		rate = fmt.Sprintf("%s calls/s per caller (burst %d)", strconv.FormatFloat(l.rate, 'f', -1, 64), l.burst)
	}
	return fmt.Sprintf("%s, %s and %s per caller, %s and %s in all", rate,
		count(l.maxStreamsPerPrincipal, "streams"), count(l.maxTasksPerPrincipal, "running tasks"),
		count(l.maxStreams, "streams"), count(l.maxTasks, "running tasks"))
}
