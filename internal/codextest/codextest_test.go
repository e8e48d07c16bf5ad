package codextest

import (
	"net"
	"os/exec"
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

// The release is the one whose --version says exactly "codex-cli
// 0.169.0".
func TestTheReleaseIsThePinnedOne(t *testing.T) {
	assert.True(t, release.Is("codex-cli "+Version))
	assert.False(t, release.Is("codex-cli "+Version+"0"))
	assert.False(t, release.Is("codex-cli 0.1.0"))
}
