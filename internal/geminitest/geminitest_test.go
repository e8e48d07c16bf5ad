package geminitest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Gemini CLI runs against the fake model and nothing else: its one
// request reached the fake, streamed, with the prompt, the model and the
// key that is no key, the shell tool offered (--approval-mode yolo), and
// Gemini CLI printed the model's answer as its
// stream-json says it, and kept the session's transcript under HOME;
// where the test could make a namespace of its own, the loopback is the
// only interface there.
func TestGeminiCLITalksToTheFakeModelAlone(t *testing.T) {
	e := Start(t, fakemodel.Script(fakemodel.Say("Hello from the fake model.")), nil)
	cmd := exec.Command(e.Bin, "-p", "say hello", "-m", Model, "--approval-mode", "yolo", "--output-format", "stream-json")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), `"role":"assistant","content":"Hello from the fake mode","delta":true}`, "the text, in the pieces it came in")
	assert.Contains(t, string(out), `"type":"result"`)

	turns := e.Model.Turns()
	require.Len(t, turns, 1)
	assert.Equal(t, "say hello", turns[0].Last().Content[len(turns[0].Last().Content)-1].Text)
	assert.Equal(t, Model, turns[0].Model)
	assert.True(t, turns[0].Stream)
	assert.Contains(t, turns[0].Tools, "run_shell_command", "offered with --approval-mode yolo")
	assert.Equal(t, Key, turns[0].Header.Get("X-Goog-Api-Key"))
	assert.Len(t, e.Model.Requests(), 1, "no other request")
	assert.Len(t, Transcripts(e.Home), 1)
	if !e.Offline {
		t.Log("not in a network namespace of its own: the machine's network was reachable")
		return
	}
	ifaces, err := net.Interfaces()
	require.NoError(t, err)
	require.Len(t, ifaces, 1)
	assert.Equal(t, "lo", ifaces[0].Name)
}

// The release is read from the package beside the program: the pinned
// version of @google/gemini-cli, and nothing else.
func TestTheReleaseIsThePinnedOne(t *testing.T) {
	assert.True(t, release.Is(Version))
	assert.False(t, release.Is(Version+"0"))

	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@google", "gemini-cli")
	require.NoError(t, os.MkdirAll(filepath.Join(pkg, "bundle"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "bundle", "gemini.js"), []byte("#!/usr/bin/env node\n"), 0o755))
	bin := filepath.Join(dir, "gemini")
	require.NoError(t, os.Symlink(filepath.Join(pkg, "bundle", "gemini.js"), bin))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@google/gemini-cli","version":"0.61.0"}`), 0o644))
	v, err := version(bin)
	require.NoError(t, err)
	assert.Equal(t, "0.61.0", v)
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"left-pad","version":"0.61.0"}`), 0o644))
	_, err = version(bin)
	assert.Error(t, err, "another package's program")
}
