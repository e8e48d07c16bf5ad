package claudetest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Claude Code runs against the fake model and nothing else: its one
// request reached the fake, with the prompt, and where the test could
// make a namespace of its own, the loopback is the only interface there.
func TestClaudeCodeTalksToTheFakeModelAlone(t *testing.T) {
	e := Start(t, fakemodel.Script(fakemodel.Say("Hello from the fake model.")))
	cmd := exec.Command(e.Bin, "-p", "say hello", "--output-format", "json")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), `"result":"Hello from the fake model."`)

	turns := e.Model.Turns()
	require.Len(t, turns, 1)
	assert.Contains(t, turns[0].Text(), "say hello")
	assert.Equal(t, "sk-ant-fake-key-for-tests", turns[0].Header.Get("X-Api-Key"))
	assert.Len(t, e.Model.Requests(), 1, "no other request")
	if !e.Offline {
		t.Log("not in a network namespace of its own: the machine's network was reachable")
		return
	}
	ifaces, err := net.Interfaces()
	require.NoError(t, err)
	require.Len(t, ifaces, 1)
	assert.Equal(t, "lo", ifaces[0].Name)
}

// The binary is BinaryEnv's, of the pinned version; one that is not there
// or not the version is not found.
func TestBinaryIsThePinnedVersion(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\necho '1.0.0 (Claude Code)'\n"), 0o755))
	pinned := filepath.Join(dir, "claude-pinned")
	require.NoError(t, os.WriteFile(pinned, []byte("#!/bin/sh\necho '"+Version+" (Claude Code)'\n"), 0o755))

	for name, tc := range map[string]struct {
		env, path string
		found     string
	}{
		"the variable's":                  {env: pinned, found: pinned},
		"the variable's, another version": {env: other},
		"the variable's, not there":       {env: filepath.Join(dir, "nothing")},
		"on the PATH, another version":    {path: dir},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(BinaryEnv, tc.env)
			t.Setenv("PATH", tc.path)
			got, err := Binary()
			if tc.found != "" {
				require.NoError(t, err)
				assert.Equal(t, tc.found, got)
				return
			}
			assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
			assert.True(t, strings.Contains(err.Error(), "claude"), "%v", err)
		})
	}
}
