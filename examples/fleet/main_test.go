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

	text := out.String()
	assert.Equal(t, 3, strings.Count(text, ": stopped before iteration"), text)
	assert.Contains(t, text, "looprun: stopped: 3 consecutive failures (threshold: 3)", "looprun stopped with the fleet")
	assert.Equal(t, 5, strings.Count(text, "consecutive failures (threshold: 3)"), text)
	assert.Contains(t, text, `fleet "example": OPEN`)
}
