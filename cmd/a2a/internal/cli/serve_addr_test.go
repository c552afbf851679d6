package cli

import (
	"os"
	"strings"
	"testing"
)

// TestServeWildcardAddr: an --addr on every interface needs --public-url,
// on the command line or in the config file; any other address does not.
// Nothing listens: the check is made on the settings.
func TestServeWildcardAddr(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	for _, tc := range []struct {
		args []string
		want string // the error, "" for none
	}{
		{[]string{"--addr", ":8082"}, "--addr :8082 listens on every interface, and without --public-url the agent card would advertise http://[::]:8082, " +
			"which remote clients cannot use: give --public-url with the URL they reach this server at, such as --public-url http://" + host + ":8082"},
		{[]string{"--addr", "0.0.0.0:8082"}, "would advertise http://0.0.0.0:8082,"},
		{[]string{"--addr", "[::]:8082"}, "would advertise http://[::]:8082,"},
		{[]string{"--addr", ":8443", "--tls-self-signed"}, "would advertise https://[::]:8443, which remote clients cannot use: give --public-url with the URL they reach this server at, such as --public-url https://"},
		{[]string{"--config", writeConfig(t, `{"addr": ":8082"}`)}, "--addr :8082 listens on every interface"},
		{[]string{"--addr", ":8082", "--public-url", "http://agents.example:8082"}, ""},
		{[]string{"--config", writeConfig(t, `{"addr": ":8082", "public-url": "http://agents.example:8082"}`)}, ""},
		{[]string{"--addr", "127.0.0.1:8082"}, ""},
		{[]string{"--addr", "[::1]:8082"}, ""},
		{[]string{"--addr", "localhost:8082"}, ""},
		{[]string{"--addr", "agents.example:8082"}, ""},
	} {
		var stderr syncBuffer
		cfg, code := parseServeArgs(append(tc.args, "--store", "memory"), &stderr)
		switch {
		case tc.want == "" && cfg == nil:
			t.Errorf("%q: exit %d: %s", tc.args, code, stderr.String())
		case tc.want != "" && (cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tc.want)):
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), ExitUsage, tc.want)
		}
	}
}
