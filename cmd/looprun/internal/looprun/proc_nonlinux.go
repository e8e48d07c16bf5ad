//go:build unix && !linux

package looprun

import "os/exec"

// becomeSubreaper does nothing: looprun adopts the processes its commands
// leave on Linux alone (FreeBSD's procctl PROC_REAP_ACQUIRE would do the
// same, and is not used; macOS has nothing like it). A process that
// leaves the command's process group outlives the command.
func becomeSubreaper() {}

// stopLeftovers kills cmd's process group once cmd has ended: the
// processes the command started that are still in it.
func stopLeftovers(cmd *exec.Cmd) { killGroup(cmd) }
