// Package pinned finds the pinned release of an agent's binary that the
// tests run against (Claude Code, Codex): through an environment variable
// that gives its path, else on the PATH, and only when the binary says it
// is that release. Without it a test is skipped, saying how to install
// it, or fails under CI.
package pinned

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireEnv names the environment variable that makes a missing binary a
// failure rather than a skip: .ci/run sets it.
const RequireEnv = "LOOPBREAKER_CI"

// Binary is a pinned release of an agent's command-line binary.
type Binary struct {
	Command string // its name on the PATH: claude, codex
	Env     string // the environment variable that gives its path
	Install string // the command that installs it, for a skip's message
	// Is reports whether what the binary says of its version is the
	// pinned release's.
	Is func(version string) bool
	// Version returns what the binary at path says of its version; nil:
	// what path --version prints, trimmed.
	Version func(path string) (string, error)
	// NotFound is the error that Find's errors wrap.
	NotFound error
}

// Find returns the path of the binary: Env's, which must be the release,
// else Command on the PATH when it is the release. The error wraps
// NotFound when there is neither.
func (b Binary) Find() (string, error) {
	if path := os.Getenv(b.Env); path != "" {
		if v, err := b.version(path); err != nil || !b.Is(v) {
			return "", fmt.Errorf("%w: %s=%s: %q, %v", b.NotFound, b.Env, path, v, err)
		}
		return path, nil
	}
	path, err := exec.LookPath(b.Command)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not set, and there is no %s on the PATH", b.NotFound, b.Env, b.Command)
	}
	if v, err := b.version(path); err != nil || !b.Is(v) {
		return "", fmt.Errorf("%w: the %s on the PATH (%s) says %q, %v", b.NotFound, b.Command, path, v, err)
	}
	return path, nil
}

func (b Binary) version(path string) (string, error) {
	if b.Version != nil {
		return b.Version(path)
	}
	out, err := exec.Command(path, "--version").Output()
	return string(bytes.TrimSpace(out)), err
}

// Require returns the binary's path (see Find). Without it the test is
// skipped, saying how to install it, or fails under CI (RequireEnv set).
func (b Binary) Require(t testing.TB) string {
	t.Helper()
	path, err := b.Find()
	switch {
	case err == nil:
		return path
	case os.Getenv(RequireEnv) != "":
		t.Fatalf("%v; .ci/run installs it", err)
	default:
		t.Skipf("%v; to run the tests against it: %s", err, b.Install)
	}
	return ""
}
