package codextest

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

// Codex runs against the fake model and nothing else: its one request
// reached the fake, with the prompt, the model and the key that is no
// key, and Codex printed the model's answer as its JSON events say it;
// where the test could make a namespace of its own, the loopback is the
// only interface there.
func TestCodexTalksToTheFakeModelAlone(t *testing.T) {
	e := Start(t, fakemodel.Script(fakemodel.Say("Hello from the fake model.")))
	cmd := exec.Command(e.Bin, "exec", "--json", "--skip-git-repo-check", "say hello")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), `"type":"agent_message","text":"Hello from the fake model."}`)
	assert.Contains(t, string(out), `"type":"turn.completed"`)

	turns := e.Model.Turns()
	require.Len(t, turns, 1)
	assert.Equal(t, "say hello", turns[0].Last().Text())
	assert.Equal(t, Model, turns[0].Model)
	assert.True(t, turns[0].Stream)
	assert.Contains(t, turns[0].Tools, "exec_command")
	assert.Contains(t, turns[0].Tools, "apply_patch", "Codex knows the model, and offers its tools")
	assert.Equal(t, "Bearer "+Key, turns[0].Header.Get("Authorization"))
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
	other := filepath.Join(dir, "codex")
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\necho 'codex-cli 0.1.0'\n"), 0o755))
	pinned := filepath.Join(dir, "codex-pinned")
	require.NoError(t, os.WriteFile(pinned, []byte("#!/bin/sh\necho 'codex-cli "+Version+"'\n"), 0o755))
	longer := filepath.Join(dir, "codex-longer")
	require.NoError(t, os.WriteFile(longer, []byte("#!/bin/sh\necho 'codex-cli "+Version+"0'\n"), 0o755))

	for name, tc := range map[string]struct {
		env, path string
		found     string
	}{
		"the variable's":                  {env: pinned, found: pinned},
		"the variable's, another version": {env: other},
		"the variable's, a longer number": {env: longer},
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
			assert.True(t, strings.Contains(err.Error(), "codex"), "%v", err)
		})
	}
}
