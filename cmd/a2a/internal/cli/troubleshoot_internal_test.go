package cli

import (
	"net/url"
	"testing"
)

func TestBaseURLHint(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/a2a/jsonrpc":                                     "give the agent's base URL, such as http://h:1",
		"http://h:1/a2a/rest/":                                       "give the agent's base URL, such as http://h:1",
		"https://h/agents/x/a2a/jsonrpc":                             "give the agent's base URL, such as https://h/agents/x",
		"https://h/agents/x/a2a/jsonrpc/.well-known/agent-card.json": "give the agent's base URL, such as https://h/agents/x",
		"http://h:1/docs/index.html":                                 "give the agent's base URL, such as http://h:1",
		"http://h:1/":                                                "give the agent's base URL, the one its card is published under (BASE/.well-known/agent-card.json)",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := baseURLHint(u); got != want {
			t.Errorf("baseURLHint(%s) = %q, want %q", in, got, want)
		}
	}
}
