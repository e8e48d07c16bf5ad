//go:build unix

package looprun

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own, so that
// stopping it stops everything it started: exec.CommandContext alone kills
// only the command, and its children (a shell's, an agent's tools) would
// live on. When cmd's context ends, interrupted tells why: a person's
// Ctrl+C is passed on to the group as SIGINT, so the agent can stop
// cleanly, and a timeout kills the group. Whatever is still running after
// cmd.Wait returns is killed by stopLeftovers.
//
// A group of its own is also out of the terminal's foreground group: Ctrl+C
// at the terminal reaches looprun alone, and looprun passes it on.
func ownProcessGroup(cmd *exec.Cmd, interrupted func() bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		sig := syscall.SIGKILL
		if interrupted() {
			sig = syscall.SIGINT
		}
		return signalGroup(cmd, sig)
	}
}

// killGroup kills what is left of cmd's process group: the processes
// that ignored the interrupt, or outlived the command. A process that
// left the group (setsid) is not in it.
func killGroup(cmd *exec.Cmd) {
	_ = signalGroup(cmd, syscall.SIGKILL) // nothing left is fine
}

// signalGroup sends sig to cmd's process group; a group that is gone is
// os.ErrProcessDone, as exec.Cmd.Cancel expects.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return os.ErrProcessDone
	}
	// The group's id is the pid of its leader, the command; a negative
	// pid signals the whole group.
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// endedBySignal says which signal ended the process, as "signal 9
// (SIGKILL)"; "" when it exited.
func endedBySignal(ps *os.ProcessState) string {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	sig := ws.Signal()
	if name, ok := signalNames[sig]; ok {
		return fmt.Sprintf("signal %d (%s)", int(sig), name)
	}
	return fmt.Sprintf("signal %d (%s)", int(sig), sig)
}

// signalNames are the names of the signals that commonly end a command.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS",
	syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
}
