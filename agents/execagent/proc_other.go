//go:build !unix

package execagent

import (
	"os"
	"os/exec"
)

// setProcessGroup keeps exec's default: cancellation kills the program
// only, not its children.
func setProcessGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {}

func signalOf(st *os.ProcessState) string { return "" }
