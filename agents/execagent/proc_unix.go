//go:build unix

package execagent

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup runs the program as the leader of a new process group and
// makes cancellation kill the whole group, so that the children of a shell
// die with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// killGroup kills what is left of the program's process group once the
// program has been waited for. The group id stays taken while any process
// is in the group; when none is, the kill finds nothing (unless the pid
// space wrapped around and a new group leader took the id in between, a
// window of microseconds).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.ProcessState != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// signalOf names the signal that ended the process, or "".
func signalOf(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
