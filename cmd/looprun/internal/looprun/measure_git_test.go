package looprun

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitTree reads a repository with no commit yet, a directory inside a
// repository, and tells a directory outside git; the commit it reads is
// HEAD's once there is one, and the first commit's files count as changed.
func TestGitTreeWithAndWithoutACommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed") // .ci/run installs it
	}
	gitIn := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	_, ok := gitTree(t.TempDir())
	assert.False(t, ok, "outside git")

	top := t.TempDir()
	gitIn(top, "init", "-q")
	sub := filepath.Join(top, "svc")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "main.go"), []byte("package main\n"), 0o644))

	before, ok := gitTree(sub)
	require.True(t, ok, "a repository with no commit yet is a repository")
	assert.Empty(t, before.head)
	assert.Equal(t, "svc/", before.prefix)
	assert.Contains(t, before.dirty, "svc/main.go")

	gitIn(top, "add", ".")
	gitIn(top, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "first")
	after, ok := gitTree(sub)
	require.True(t, ok)
	assert.Equal(t, gitIn(top, "rev-parse", "HEAD"), after.head+"\n")
	assert.Empty(t, after.dirty)
	assert.Equal(t, 1, changedFiles(sub, before, after), "the first commit's file")
}
