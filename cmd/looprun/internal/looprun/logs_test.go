package looprun

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeLogs makes logs of loop in dir for the iterations from first to
// last, each size bytes (sparse: nothing is written), the later ones
// newer, a minute apart.
func writeLogs(t *testing.T, dir, loop string, first, last int, size int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	start := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	for i := first; i <= last; i++ {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.log", loop, i))
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		require.NoError(t, os.Truncate(path, size))
		at := start.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(path, at, at))
	}
}

// names lists the files in dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var list []string
	for _, e := range entries {
		list = append(list, e.Name())
	}
	sort.Strings(list)
	return list
}

// A loop keeps its newest 100 logs; the logs of other loops and other
// files are left alone.
func TestPruneKeepsTheNewestHundredLogs(t *testing.T) {
	dir := t.TempDir()
	writeLogs(t, dir, "loop", 1, 105, 10)
	writeLogs(t, dir, "loop-x", 1, 3, 10) // another loop, whose name starts the same
	require.NoError(t, os.WriteFile(filepath.Join(dir, "loop-notes.log"), nil, 0o600))

	require.NoError(t, iterationLogs{dir: dir, loop: "loop"}.prune())
	left := names(t, dir)
	assert.Len(t, left, 100+3+1)
	for i := 1; i <= 5; i++ {
		assert.NotContains(t, left, fmt.Sprintf("loop-%d.log", i))
	}
	for _, name := range []string{"loop-6.log", "loop-105.log", "loop-x-1.log", "loop-notes.log"} {
		assert.Contains(t, left, name)
	}
}

// A loop keeps only as many of its newest logs as hold 64 MiB together.
func TestPruneKeepsTheNewestLogsThatHold64MiB(t *testing.T) {
	dir := t.TempDir()
	writeLogs(t, dir, "loop", 1, 20, 5<<20) // 12 of 5 MiB make 60 MiB
	require.NoError(t, iterationLogs{dir: dir, loop: "loop"}.prune())
	left := names(t, dir)
	assert.Len(t, left, 12)
	assert.NotContains(t, left, "loop-8.log")
	assert.Contains(t, left, "loop-9.log")
}

// After -reset the iterations count from 1 again: the newest log is the
// one written last, not the one of the highest iteration.
func TestPruneKeepsTheLogsWrittenLast(t *testing.T) {
	dir := t.TempDir()
	writeLogs(t, dir, "loop", 1, 150, 10)
	// Iterations 1 and 2 of the new start, written after all the others.
	later := time.Date(2026, 1, 20, 9, 0, 0, 0, time.UTC)
	for _, name := range []string{"loop-1.log", "loop-2.log"} {
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), later, later))
	}
	require.NoError(t, iterationLogs{dir: dir, loop: "loop"}.prune())
	left := names(t, dir)
	assert.Len(t, left, 100)
	assert.Contains(t, left, "loop-1.log")
	assert.Contains(t, left, "loop-2.log")
	assert.NotContains(t, left, "loop-52.log")
	assert.Contains(t, left, "loop-53.log")
}

// No logs yet: nothing to prune.
func TestPruneWithoutLogsDoesNothing(t *testing.T) {
	assert.NoError(t, iterationLogs{dir: filepath.Join(t.TempDir(), "logs"), loop: "loop"}.prune())
}
