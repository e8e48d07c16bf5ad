package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkerProcessesStopTogether builds the example and looprun (a tool
// of this module), and runs them against a redis-server of their own:
// three worker processes and a looprun, one breaker.
func TestWorkerProcessesStopTogether(t *testing.T) {
	sock := redistest.Start(t)
	dir := t.TempDir()
	bin, looprun := filepath.Join(dir, "fleet"), filepath.Join(dir, "looprun")
	for pkg, out := range map[string]string{".": bin, "github.com/loopbreaker/loopbreaker/cmd/looprun": looprun} {
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Stderr = os.Stderr
		require.NoError(t, build.Run())
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-redis", "unix://"+sock, "-workers", "3", "-looprun", looprun)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())

	// Which signal opens the circuit depends on how the processes
	// interleave (a late worker's first successes break a run of
	// failures): the failures in a row, or the same error five times. Every
	// worker and the looprun stop on the one that did.
	text := out.String()
	_, reason, ok := strings.Cut(text, `fleet "example": OPEN, `)
	require.True(t, ok, text)
	_, reason, _ = strings.Cut(reason, "across the fleet: ")
	reason = strings.TrimSpace(reason)
	require.True(t, reason == "3 consecutive failures (threshold: 3)" || reason == "Same error repeated 5 times (threshold: 5)", text)
	stopped := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, ": stopped before iteration") {
			stopped++
			assert.True(t, strings.HasSuffix(line, ": "+reason), line)
		}
	}
	assert.Equal(t, 3, stopped, text)
	assert.Contains(t, text, "looprun: stopped: "+reason, "looprun stopped with the fleet")
}
