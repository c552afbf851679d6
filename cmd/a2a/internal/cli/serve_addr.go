package cli

import (
	"fmt"
	"net"
	"os"
)

// checkWildcardAddr refuses an --addr that listens on every interface
// (":8082", "0.0.0.0:8082", "[::]:8082") when no --public-url says where
// clients reach the server. The agent card would otherwise advertise the
// listener's address, http://[::]:8082, which no remote client can use.
//
// It refuses rather than write the host's name (os.Hostname) in the card,
// because serving on every interface is what containers do, and there the
// host's name is the container's id or the pod's name, which the clients
// cannot resolve; on a LAN without DNS it resolves nowhere either. A card
// with a wrong URL fails at each client, far from the operator; refusing
// fails here, at start, and names the fix (the host's name is only offered
// as an example). docs/serve.md, "Listening on every interface".
func (cfg *serveConfig) checkWildcardAddr() error {
	if cfg.publicURL != "" {
		return nil
	}
	host, port, err := net.SplitHostPort(cfg.addr)
	if err != nil {
		return nil // net.Listen says what is wrong with it
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return nil
	}
	scheme := "http"
	if cfg.tlsSettings.on() {
		scheme = "https"
	}
	advertised := host
	if host == "" {
		advertised = "::" // how the listener reports such an address
	}
	example := "HOST"
	if name, err := os.Hostname(); err == nil && name != "" {
		example = name
	}
	return fmt.Errorf("--addr %s listens on every interface, and without --public-url the agent card would advertise %s://%s, "+
		"which remote clients cannot use: give --public-url with the URL they reach this server at, such as --public-url %s://%s",
		cfg.addr, scheme, net.JoinHostPort(advertised, port), scheme, net.JoinHostPort(example, port))
}
