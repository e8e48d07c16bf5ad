package protect

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listTree returns the paths under dir, "/"-separated, for a test to see
// that nothing was written there.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	}))
	return paths
}

// A restore writes only inside the root, whatever the agent did to a
// folder above a lost file: a link to a directory outside in its place
// (moved away first, or not), a link to a directory inside the root, a
// file where the folder was. The folder is reported, the files in it are
// not put back, and the outside directory is left as it was.
func TestRestoreNeverWritesThroughAFolderTheAgentReplaced(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
	for _, tc := range []struct {
		name  string
		agent func(t *testing.T, root, outside string)
	}{
		{"specs/ moved away, a link to outside in its place", func(t *testing.T, root, outside string) {
			require.NoError(t, os.Rename(filepath.Join(root, "specs"), filepath.Join(root, "specs.moved")))
			require.NoError(t, os.Symlink(outside, filepath.Join(root, "specs")))
		}},
		{"specs/api/ deleted, a link to outside in its place", func(t *testing.T, root, outside string) {
			removeAll(t, root, "specs/api")
			require.NoError(t, os.Symlink(outside, filepath.Join(root, "specs", "api")))
		}},
		{"specs/ deleted, a link to a folder inside the root in its place", func(t *testing.T, root, outside string) {
			removeAll(t, root, "specs")
			require.NoError(t, os.Symlink("build", filepath.Join(root, "specs")))
		}},
		{"specs/ deleted, a file in its place", func(t *testing.T, root, outside string) {
			removeAll(t, root, "specs")
			writeFile(t, root, "specs", "not a folder")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newProject(t, map[string]string{
				"specs/parser.md": "The parser reads Go 1.23.\n",
				"specs/api/v1.md": "GET /v1/plans\n",
				"CLAUDE.md":       "# Manual\n",
				"build/":          "",
			})
			outside := t.TempDir()
			g := newTestGuard(t, root, Config{})

			tc.agent(t, root, outside)
			err := g.Restore()
			require.ErrorIs(t, err, ErrProtected)
			assert.Empty(t, listTree(t, outside), "nothing written outside the root")
			assert.Empty(t, listTree(t, filepath.Join(root, "build")), "nor through a link inside it")
			loss := g.LastLoss()
			require.NotNil(t, loss)
			for _, l := range loss.Lost {
				assert.Empty(t, l.From, "%s was put back through a replaced folder", l.Path)
			}
			assert.Equal(t, "# Manual\n", readFile(t, root, "CLAUDE.md"))
		})
	}
}

// The loop's state directory replaced by a link to a directory outside:
// the Guard's copies are neither written there nor swept from there.
func TestCopiesNeverGoThroughALinkOutside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
	root := aProject(t)
	writeFile(t, root, ".loopbreaker/loop.json", "{}")
	g := newTestGuard(t, root, Config{})
	outside := t.TempDir()
	writeFile(t, outside, "protected/notes.txt", "someone else's file")

	removeAll(t, root, ".loopbreaker")
	require.NoError(t, os.Symlink(outside, filepath.Join(root, ".loopbreaker")))
	lost, _ := g.AfterIteration()
	require.Positive(t, lost)
	require.Error(t, g.Refresh(), "the copies cannot be written")

	assert.Equal(t, []string{"protected", "protected/notes.txt"}, listTree(t, outside), "nothing written or removed outside the root")
}

// A project with nothing protected yet: no backup directory is made;
// when the plan appears, its copy is written at the next refresh.
func TestTheFirstCopyIsWrittenWhenTheFirstProtectedFileAppears(t *testing.T) {
	root := newProject(t, map[string]string{"main.go": "package main\n"})
	g := newTestGuard(t, root, Config{})
	assert.NoDirExists(t, filepath.Join(root, ".loopbreaker"), "no copies, no backup directory")

	writeFile(t, root, "IMPLEMENTATION_PLAN.md", "- [ ] parser\n")
	lost, _ := g.AfterIteration()
	require.Zero(t, lost)
	assert.Equal(t, "- [ ] parser\n", readFile(t, root, ".loopbreaker/protected/IMPLEMENTATION_PLAN.md"))
}
