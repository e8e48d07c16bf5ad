package pinned

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errNotFound = errors.New("agent 2.0.0 not found")

// agent is a pinned release of a made-up agent whose --version says
// "agent 2.0.0".
var agent = Binary{
	Command: "agent", Env: "PINNED_TEST_AGENT", Install: "npm install agent@2.0.0", NotFound: errNotFound,
	Is: func(v string) bool { return v == "agent 2.0.0" },
}

// The binary is Env's, of the pinned release, else the PATH's when it is
// the release; one that is not there, or another release, is not found.
func TestTheBinaryIsThePinnedRelease(t *testing.T) {
	dir := t.TempDir()
	script := func(name, says string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\necho '"+says+"'\n"), 0o755))
		return path
	}
	pinned := script("agent-pinned", "agent 2.0.0")
	other := script("agent-other", "agent 1.9.9")
	onPath := t.TempDir()
	require.NoError(t, os.Symlink(pinned, filepath.Join(onPath, "agent")))
	otherOnPath := t.TempDir()
	require.NoError(t, os.Symlink(other, filepath.Join(otherOnPath, "agent")))

	for name, tc := range map[string]struct {
		env, path string
		found     string
	}{
		"the variable's":                  {env: pinned, found: pinned},
		"the variable's, another release": {env: other, path: onPath},
		"the variable's, not there":       {env: filepath.Join(dir, "nothing")},
		"on the PATH":                     {path: onPath, found: filepath.Join(onPath, "agent")},
		"on the PATH, another release":    {path: otherOnPath},
		"nowhere":                         {path: t.TempDir()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(agent.Env, tc.env)
			t.Setenv("PATH", tc.path)
			got, err := agent.Find()
			if tc.found != "" {
				require.NoError(t, err)
				assert.Equal(t, tc.found, got)
				return
			}
			assert.ErrorIs(t, err, errNotFound)
			assert.True(t, strings.Contains(err.Error(), "agent"), "%v", err)
		})
	}
}

// Without the binary a test is skipped with the install command, and
// under CI it fails.
func TestRequireSkipsOrFails(t *testing.T) {
	t.Setenv(agent.Env, "")
	t.Setenv("PATH", t.TempDir())
	t.Setenv(RequireEnv, "")
	skipped := &recorder{TB: t}
	func() {
		defer func() { recover() }() // SkipNow and FailNow end the goroutine; the recorder panics instead
		agent.Require(skipped)
	}()
	assert.Contains(t, skipped.skipped, "to run the tests against it: npm install agent@2.0.0")

	t.Setenv(RequireEnv, "1")
	failed := &recorder{TB: t}
	func() {
		defer func() { recover() }()
		agent.Require(failed)
	}()
	assert.Contains(t, failed.failed, ".ci/run installs it")
}

// recorder is a testing.TB that records a skip or a failure instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	panic("skipped")
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic("failed")
}
