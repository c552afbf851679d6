package deployer

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// Realm is the realm of the deployer's bearer challenge (capture 18 #1).
const Realm = "deployer"

// Principal is the principal [NewServer]'s token authenticates as; the
// tasks it creates belong to it.
const Principal = "deployer-client"

// NewServer wires one deployer for a server at baseURL (such as
// "http://localhost:41243", no trailing path): a new [Agent] whose approval
// links start with baseURL, a [server.Handler] with the public [Card] and
// the [ExtendedCard], and one http.Handler that serves
//
//   - the public card at /.well-known/agent-card.json, without
//     authentication;
//   - the JSON-RPC binding at /a2a/jsonrpc and the HTTP+JSON binding under
//     /a2a/rest/, behind [auth.Bearer] with token: any request without it
//     gets 401 before an A2A method runs (every other path does too);
//   - the operator's approvals at /approve/{taskId} ([Agent.ApprovalHandler]),
//     which, like the kit's, checks no credentials.
//
// opts are applied after the extended card option. The caller closes the
// returned Handler, which also ends deploys waiting for approval (they stay
// in auth-required in the store).
func NewServer(baseURL, token string, opts ...server.Option) (http.Handler, *server.Handler, error) {
	if token == "" {
		return nil, nil, errors.New("deployer: empty bearer token")
	}
	return newServer(baseURL, map[string]string{token: Principal}, &Agent{}, opts...)
}

// newServer is NewServer with the agent and token table given.
func newServer(baseURL string, tokens map[string]string, agent *Agent, opts ...server.Option) (http.Handler, *server.Handler, error) {
	base := strings.TrimRight(baseURL, "/")
	if base == "" {
		return nil, nil, errors.New("deployer: empty base URL")
	}
	agent.BaseURL = base
	in := a2ahttp.Interfaces(base)
	jsonrpcURL, restURL := in[0].URL, in[1].URL
	extended := ExtendedCard(jsonrpcURL, restURL)
	opts = append([]server.Option{server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
		return extended, nil
	})}, opts...)
	h, err := server.NewHandler(Card(jsonrpcURL, restURL), agent, opts...)
	if err != nil {
		return nil, nil, err
	}
	a2aMux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		h.Close(context.Background())
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(server.WellKnownCardPath, a2aMux)
	mux.Handle(ApprovePath, agent.ApprovalHandler())
	mux.Handle("/", auth.Bearer(tokens, a2aMux, auth.WithRealm(Realm)))
	return mux, h, nil
}
