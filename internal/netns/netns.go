// Package netns keeps a test that runs a real agent off the network: on
// Linux, where the test may make a network namespace (as root: CI runs as
// root), the test's thread and every process it starts live in a
// namespace of their own whose only interface is the loopback, as under
// unshare -n.
package netns

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// Isolate moves the calling goroutine's thread into a new network
// namespace and brings its loopback interface up; it reports whether it
// did. The thread stays locked to the goroutine and ends with it, so no
// other goroutine ever runs in the namespace; processes started from the
// goroutine start in it, and so does a server it starts listening (the
// listening socket is the namespace's). It does nothing off Linux, or
// where the namespace cannot be made (no privilege), or without ip(8),
// and says so in the test's log.
//
// Call it on the test's goroutine, before the test starts a fake model,
// and start the agent from that goroutine.
func Isolate(t testing.TB) bool {
	t.Helper()
	if runtime.GOOS != "linux" {
		return false
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Log("netns: no ip(8) to bring a namespace's loopback up: running in the machine's network")
		return false
	}
	runtime.LockOSThread()
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread() // the thread is as it was
		t.Logf("netns: no network namespace (%v): running in the machine's network", err)
		return false
	}
	// From here the thread is the namespace's: it stays locked, and the
	// runtime ends it when the test's goroutine ends.
	if out, err := exec.Command(ip, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("netns: bringing the namespace's loopback up: %v: %s", err, out)
	}
	return true
}
