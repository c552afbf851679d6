package deployer

import (
	"context"
	"errors"
	"fmt"
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
//     authentication, signed with an ES256 key made for this server
//     ([NewSigner]);
//   - that key's public half as a JWK set at [JWKSPath], without
//     authentication, which the signature names as its jku;
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
	return NewServerWithSigner(baseURL, token, nil, opts...)
}

// NewServerWithSigner is [NewServer] with the card signed by signer; nil
// means a new ES256 key, as NewServer. The JWK set at [JWKSPath] is
// served when signer has a public key (not for HS256, such as
// [DemoSigner]).
func NewServerWithSigner(baseURL, token string, signer *auth.CardSigner, opts ...server.Option) (http.Handler, *server.Handler, error) {
	if token == "" {
		return nil, nil, errors.New("deployer: empty bearer token")
	}
	return newServer(baseURL, map[string]string{token: Principal}, &Agent{}, signer, opts...)
}

// newServer is NewServerWithSigner with the agent and token table given.
func newServer(baseURL string, tokens map[string]string, agent *Agent, signer *auth.CardSigner, opts ...server.Option) (http.Handler, *server.Handler, error) {
	base := strings.TrimRight(baseURL, "/")
	if base == "" {
		return nil, nil, errors.New("deployer: empty base URL")
	}
	if signer == nil {
		var err error
		if signer, err = NewSigner(base + JWKSPath); err != nil {
			return nil, nil, err
		}
	}
	var jwks []byte
	if signer.Alg() != auth.CardHS256 {
		var err error
		if jwks, err = signer.JWKS(); err != nil {
			return nil, nil, fmt.Errorf("deployer: %w", err)
		}
	}
	agent.BaseURL = base
	in := a2ahttp.Interfaces(base)
	jsonrpcURL, restURL := in[0].URL, in[1].URL
	card, err := Card(jsonrpcURL, restURL, signer)
	if err != nil {
		return nil, nil, err
	}
	extended := ExtendedCard(jsonrpcURL, restURL)
	opts = append([]server.Option{server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
		return extended, nil
	})}, opts...)
	h, err := server.NewHandler(card, agent, opts...)
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
	if jwks != nil {
		mux.Handle(JWKSPath, auth.JWKSHandler(jwks))
	}
	mux.Handle("/", auth.Bearer(tokens, a2aMux, auth.WithRealm(Realm)))
	return mux, h, nil
}
