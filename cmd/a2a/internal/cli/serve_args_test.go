package cli

import "io"

// parseServeArgs is parseServe for the tests of serve's settings, which
// never ask for help.
func parseServeArgs(args []string, stderr io.Writer) (*serveConfig, int) {
	return parseServe(args, io.Discard, stderr)
}
