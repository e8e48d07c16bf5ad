//go:build !unix

package looprun

import (
	"os"
	"os/exec"
)

// ownProcessGroup leaves cmd as exec.CommandContext made it: on systems
// without Unix process groups a timeout or Ctrl+C kills the command
// itself, and the processes it started may live on.
func ownProcessGroup(*exec.Cmd, func() bool) {}

// becomeSubreaper does nothing without Unix processes.
func becomeSubreaper() {}

// stopLeftovers does nothing without Unix process groups: the processes
// the command started may outlive it.
func stopLeftovers(*exec.Cmd) {}

// endedBySignal returns "": without Unix signals a command always exits.
func endedBySignal(*os.ProcessState) string { return "" }
