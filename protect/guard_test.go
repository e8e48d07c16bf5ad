package protect

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newProject makes a directory tree with files (path → content; a path
// ending in / is a directory) and returns its root.
func newProject(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return root
}

// aProject is a loop's project: its plan, its agents' manual, specs and
// memory, and a file that is not protected.
func aProject(t testing.TB) string {
	return newProject(t, map[string]string{
		"IMPLEMENTATION_PLAN.md": "# Plan\n- [x] parser\n- [ ] printer\n",
		"CLAUDE.md":              "# Operating manual\nRun go test ./... before every commit.\n",
		"AGENTS.md":              "# Agents\nreviewer: reads every diff\n",
		"specs/parser.md":        "The parser reads Go 1.23.\n",
		"specs/printer.md":       "The printer keeps comments.\n",
		"memory/learnings.md":    "go vet catches the shadowed err.\n",
		"main.go":                "package main\n",
	})
}

func newTestGuard(t testing.TB, root string, cfg Config) *Guard {
	t.Helper()
	g, err := New(root, cfg)
	require.NoError(t, err)
	require.NoError(t, g.Refresh())
	return g
}

func readFile(t testing.TB, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	require.NoError(t, err)
	return string(data)
}

func removeAll(t testing.TB, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.RemoveAll(filepath.Join(root, filepath.FromSlash(p))))
	}
}

func writeFile(t testing.TB, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
}

// The first story: the agent deletes CLAUDE.md in its second
// iteration. The breaker holds the circuit open at once with its own
// reason, CLAUDE.md is back byte for byte, no cooldown ends the hold, and
// a person's Resume does.
// The third story: plans are meant to be updated. An agent that
// edits IMPLEMENTATION_PLAN.md (and adds a spec) every iteration keeps
// running; emptying it is a loss, and it comes back.
// A read-only file must not even change; the change is a loss, but the
// changed file is not written over: a person decides which one is right.
// A directory deleted whole comes back with its files, and the reason
// says so in one line, not one per file.
func TestDeletedDirectoryComesBackWithItsFiles(t *testing.T) {
	root := aProject(t)
	writeFile(t, root, "specs/api/v1.md", "GET /v1\n")
	g := newTestGuard(t, root, Config{})
	removeAll(t, root, "specs")

	err := g.Restore()
	var lost *IntegrityError
	require.ErrorAs(t, err, &lost)
	assert.ErrorIs(t, err, ErrProtected)
	assert.Equal(t, []Loss{
		{Path: "specs/", What: LossDeleted, From: "copy"},
		{Path: "specs/api/", What: LossDeleted, From: "copy"},
		{Path: "specs/api/v1.md", What: LossDeleted, From: "copy"},
		{Path: "specs/parser.md", What: LossDeleted, From: "copy"},
		{Path: "specs/printer.md", What: LossDeleted, From: "copy"},
	}, lost.Lost)
	assert.Equal(t, "protect: protected files lost: specs/ deleted with the 3 files in it, restored", err.Error())
	assert.Equal(t, "GET /v1\n", readFile(t, root, "specs/api/v1.md"))
	assert.NoError(t, g.Verify(), "all back")
}

// Verify reports and changes nothing; Restore puts back; LastLoss says
// what the last of them found.
func TestVerifyReportsAndRestorePutsBack(t *testing.T) {
	root := aProject(t)
	g := newTestGuard(t, root, Config{})
	assert.Nil(t, g.LastLoss())
	removeAll(t, root, "memory/learnings.md")

	err := g.Verify()
	require.ErrorIs(t, err, ErrProtected)
	assert.Equal(t, "protect: protected files lost: memory/learnings.md deleted", err.Error())
	assert.NoFileExists(t, filepath.Join(root, "memory/learnings.md"), "Verify restores nothing")
	assert.Equal(t, &IntegrityError{Lost: []Loss{{Path: "memory/learnings.md", What: LossDeleted}}}, g.LastLoss())

	require.ErrorIs(t, g.Restore(), ErrProtected)
	assert.Equal(t, "go vet catches the shadowed err.\n", readFile(t, root, "memory/learnings.md"))
	assert.Equal(t, "copy", g.LastLoss().Lost[0].From)
	assert.NoError(t, g.Verify())
	assert.Nil(t, g.LastLoss())
}

// A pattern protects the files it matched when the Guard last took
// stock; a file that appears later is protected from the next refresh on.
func TestPatternProtectsWhatItMatchedAtTheLastRefresh(t *testing.T) {
	root := aProject(t)
	g := newTestGuard(t, root, Config{Protected: []string{"specs/*.md"}})

	writeFile(t, root, "specs/draft.md", "draft\n")
	removeAll(t, root, "specs/draft.md")
	assert.NoError(t, g.Verify(), "appeared and went between two refreshes: never protected")

	writeFile(t, root, "specs/draft.md", "draft\n")
	require.NoError(t, g.Refresh())
	removeAll(t, root, "specs/draft.md", "memory")
	assert.EqualError(t, g.Verify(), "protect: protected files lost: specs/draft.md deleted", "memory/ is not protected here")
}

// Paths a host changes itself (its logs) are left out, and so are the
// Guard's own copies.
func TestExcludedPathsAreNotChecked(t *testing.T) {
	root := aProject(t)
	writeFile(t, root, ".loopbreaker/loop.json", "{}")
	writeFile(t, root, ".loopbreaker/logs/loop-1.log", "output")
	g := newTestGuard(t, root, Config{Exclude: []string{".loopbreaker/logs/"}})
	assert.FileExists(t, filepath.Join(root, ".loopbreaker/protected/CLAUDE.md"), "the copies")

	removeAll(t, root, ".loopbreaker/logs/loop-1.log", ".loopbreaker/protected")
	assert.NoError(t, g.Verify())
	removeAll(t, root, ".loopbreaker/loop.json")
	assert.EqualError(t, g.Verify(), "protect: protected files lost: .loopbreaker/loop.json deleted")
}

// git clean -fdx takes the state directory, and the copies in it, with
// everything else untracked: the copies kept in memory bring it all back.
func TestRestoreDoesNotNeedTheBackupDirectory(t *testing.T) {
	root := aProject(t)
	writeFile(t, root, ".loopbreaker/loop.json", `{"version":1}`)
	g := newTestGuard(t, root, Config{})
	removeAll(t, root, ".loopbreaker", "CLAUDE.md", "specs")

	err := g.Restore()
	assert.EqualError(t, err, "protect: protected files lost: .loopbreaker/ deleted with the 1 file in it, restored; "+
		"CLAUDE.md deleted, restored from its copy; specs/ deleted with the 2 files in it, restored")
	assert.Equal(t, `{"version":1}`, readFile(t, root, ".loopbreaker/loop.json"))
	assert.Equal(t, "The parser reads Go 1.23.\n", readFile(t, root, "specs/parser.md"))

	require.NoError(t, g.Refresh())
	assert.Equal(t, readFile(t, root, "CLAUDE.md"), readFile(t, root, ".loopbreaker/protected/CLAUDE.md"), "the copies are written again")
}

// The backup directory holds a copy of each protected file, for its owner
// only, and nothing else: the copy of a file no longer protected, or one
// an earlier run left, goes.
func TestBackupDirectoryMirrorsTheProtectedFiles(t *testing.T) {
	root := aProject(t)
	writeFile(t, root, ".loopbreaker/protected/old-run/stale.md", "stale")
	g := newTestGuard(t, root, Config{})
	backup := filepath.Join(root, ".loopbreaker", "protected")
	var copies []string
	require.NoError(t, filepath.WalkDir(backup, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() {
			rel, _ := filepath.Rel(backup, p)
			copies = append(copies, filepath.ToSlash(rel))
		}
		return nil
	}))
	assert.ElementsMatch(t, []string{"IMPLEMENTATION_PLAN.md", "AGENTS.md", "CLAUDE.md", "specs/parser.md", "specs/printer.md", "memory/learnings.md"}, copies)
	info, err := os.Stat(filepath.Join(backup, "CLAUDE.md"))
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
	}

	writeFile(t, root, "CLAUDE.md", "# Operating manual, v2\n")
	removeAll(t, root, "memory")
	require.NoError(t, g.Refresh()) // a person removed memory/ and resumed
	assert.Equal(t, "# Operating manual, v2\n", readFile(t, root, ".loopbreaker/protected/CLAUDE.md"))
	assert.NoFileExists(t, filepath.Join(backup, "memory/learnings.md"))
}

// The copies are bounded: files are copied in the order of the protected
// paths until the next would pass the bound. A file without a copy comes
// back from git when git held exactly its content; otherwise the reason
// says why it did not come back.
func TestFileWithoutACopyComesBackFromGitOrIsReportedLost(t *testing.T) {
	requireGit(t)
	root := aProject(t)
	big := strings.Repeat("a large generated spec\n", 100) // 2300 bytes
	writeFile(t, root, "specs/generated.md", big)
	writeFile(t, root, "memory/big-notes.md", big)
	gitInit(t, root)
	gitRun(t, root, "add", "specs", "CLAUDE.md")
	gitRun(t, root, "commit", "-qm", "specs")
	g := newTestGuard(t, root, Config{MaxBackupBytes: 1024})

	removeAll(t, root, "specs/generated.md", "memory/big-notes.md", "CLAUDE.md")
	err := g.Restore()
	assert.EqualError(t, err, "protect: protected files lost: CLAUDE.md deleted, restored from its copy; "+
		"memory/big-notes.md deleted: not restored: it had no copy (the copies may take 1 KiB in all), and git held no commit of it as it was; "+
		"specs/generated.md deleted, restored from git")
	assert.Equal(t, big, readFile(t, root, "specs/generated.md"))
	assert.NoFileExists(t, filepath.Join(root, "memory/big-notes.md"))
}

// A file comes back from git as a checkout writes it: with the work
// tree's line endings, not the blob's.
func TestFileFromGitComesBackAsTheWorkTreeHadIt(t *testing.T) {
	requireGit(t)
	root := newProject(t, map[string]string{".gitattributes": "*.md text eol=crlf\n"})
	gitInit(t, root)
	writeFile(t, root, "CLAUDE.md", "line one\r\nline two\r\n")
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-qm", "manual")
	g := newTestGuard(t, root, Config{MaxBackupBytes: -1})
	removeAll(t, root, "CLAUDE.md")
	assert.EqualError(t, g.Restore(), "protect: protected files lost: CLAUDE.md deleted, restored from git")
	assert.Equal(t, "line one\r\nline two\r\n", readFile(t, root, "CLAUDE.md"))
}

// A file changed since its last commit does not come back from git: git
// holds another content than the one lost.
func TestChangedTrackedFileDoesNotComeBackFromAnOlderCommit(t *testing.T) {
	requireGit(t)
	root := aProject(t)
	gitInit(t, root)
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-qm", "start")
	writeFile(t, root, "IMPLEMENTATION_PLAN.md", "# Plan\n- [x] parser\n- [x] printer\n")
	g := newTestGuard(t, root, Config{MaxBackupBytes: -1})
	removeAll(t, root, "IMPLEMENTATION_PLAN.md", "AGENTS.md")

	err := g.Restore()
	assert.EqualError(t, err, "protect: protected files lost: AGENTS.md deleted, restored from git; "+
		"IMPLEMENTATION_PLAN.md deleted: not restored: no copies are kept (MaxBackupBytes is negative), and git held no commit of it as it was")
	assert.NoDirExists(t, filepath.Join(root, ".loopbreaker/protected"), "no copies, no backup directory")
}

// A Guard never writes over what exists: a directory where a file was is
// reported, and left.
func TestSomethingInAFilesPlaceIsNotWrittenOver(t *testing.T) {
	root := aProject(t)
	g := newTestGuard(t, root, Config{})
	removeAll(t, root, "AGENTS.md")
	require.NoError(t, os.Mkdir(filepath.Join(root, "AGENTS.md"), 0o755))
	assert.EqualError(t, g.Restore(), "protect: protected files lost: AGENTS.md replaced: not restored: something is there, and a Guard never writes over it")
	assert.DirExists(t, filepath.Join(root, "AGENTS.md"))
}

// A link is protected as a link (CLAUDE.md is often a link to AGENTS.md):
// it comes back pointing where it pointed.
func TestLinkComesBackAsALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links need privileges on Windows")
	}
	root := aProject(t)
	removeAll(t, root, "CLAUDE.md")
	require.NoError(t, os.Symlink("AGENTS.md", filepath.Join(root, "CLAUDE.md")))
	g := newTestGuard(t, root, Config{})
	removeAll(t, root, "CLAUDE.md")
	assert.EqualError(t, g.Restore(), "protect: protected files lost: CLAUDE.md deleted, restored from its copy")
	target, err := os.Readlink(filepath.Join(root, "CLAUDE.md"))
	require.NoError(t, err)
	assert.Equal(t, "AGENTS.md", target)
}

// A path that cannot be looked at is a loss: the Guard cannot vouch for
// it, and does not write there.
func TestUnreadableProtectedPathIsALoss(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no links or permissions of this kind on Windows")
	}
	root := aProject(t)
	g := newTestGuard(t, root, Config{})
	// specs/ made a link to itself: nothing under it can be looked at.
	removeAll(t, root, "specs")
	require.NoError(t, os.Symlink("specs", filepath.Join(root, "specs")))
	assert.EqualError(t, g.Restore(), "protect: protected files lost: specs/ replaced: not restored: something is there, and a Guard never writes over it; "+
		"specs/parser.md unreadable: cannot be looked at: too many levels of symbolic links; "+
		"specs/printer.md unreadable: cannot be looked at: too many levels of symbolic links")
	removeAll(t, root, "specs")

	if os.Geteuid() == 0 {
		return // permissions do not bind root
	}
	require.NoError(t, g.Restore())
	require.NoError(t, os.Chmod(filepath.Join(root, "memory"), 0o000))
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "memory"), 0o755) })
	assert.EqualError(t, g.Verify(), "protect: protected files lost: memory/learnings.md unreadable: cannot be looked at: permission denied")
}

// A backup directory that cannot be written is an error of Refresh; the
// copies in memory still restore.
func TestUnwritableBackupDirectoryIsAnErrorButCopiesStayInMemory(t *testing.T) {
	root := aProject(t)
	writeFile(t, root, "not-a-dir", "a file where the backup directory should be")
	g, err := New(root, Config{BackupDir: "not-a-dir/copies"})
	require.NoError(t, err)
	assert.ErrorContains(t, g.Refresh(), "copying protected files to "+filepath.Join(root, "not-a-dir", "copies")+": not-a-dir is not a folder")
	removeAll(t, root, "CLAUDE.md")
	assert.EqualError(t, g.Restore(), "protect: protected files lost: CLAUDE.md deleted, restored from its copy")
}

// A long loss is listed up to ten lines, then counted.
func TestLongLossIsCapped(t *testing.T) {
	files := map[string]string{}
	for _, c := range "abcdefghijkl" {
		files["notes/"+string(c)+".md"] = "note"
	}
	root := newProject(t, files)
	g := newTestGuard(t, root, Config{Protected: []string{"notes/*.md"}, MaxBackupBytes: -1})
	removeAll(t, root, "notes")
	err := g.Verify()
	require.ErrorIs(t, err, ErrProtected)
	assert.True(t, strings.HasSuffix(err.Error(), "notes/j.md deleted; and 2 more"), err.Error())
}

func TestInvalidConfigNamesTheField(t *testing.T) {
	root := aProject(t)
	outside := t.TempDir()
	_, err := New(root, Config{
		Protected: []string{"specs/", "../elsewhere", filepath.Join(outside, "x")},
		ReadOnly:  []string{"[unclosed"},
		Exclude:   []string{"."},
		BackupDir: "..",
	})
	require.ErrorIs(t, err, loopbreaker.ErrInvalidConfig)
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *loopbreaker.ConfigError
		require.ErrorAs(t, e, &ce)
		fields = append(fields, ce.Field)
	}
	assert.Equal(t, []string{"protect.Config.Protected[1]", "protect.Config.Protected[2]", "protect.Config.ReadOnly[0]", "protect.Config.Exclude[0]", "protect.Config.BackupDir"}, fields)

	_, err = New(root, Config{BackupDir: root})
	assert.ErrorContains(t, err, "protect.Config.BackupDir")

	_, err = New(filepath.Join(root, "main.go"), Config{})
	assert.ErrorContains(t, err, "is not a directory")
	_, err = New(filepath.Join(root, "missing"), Config{})
	assert.ErrorIs(t, err, fs.ErrNotExist)

	g, err := New(root, Config{Protected: []string{filepath.Join(root, "CLAUDE.md")}})
	require.NoError(t, err, "an absolute path inside the root")
	removeAll(t, root, "CLAUDE.md")
	assert.EqualError(t, g.Verify(), "protect: protected files lost: CLAUDE.md deleted")
}

// Nil protects the defaults; an empty list protects nothing (but the
// read-only paths).
func TestDefaultAndEmptyProtectedLists(t *testing.T) {
	assert.Equal(t, []string{".loopbreaker/", ".ralphrc", "IMPLEMENTATION_PLAN.md", "AGENTS.md", "specs/", ".claude/", "CLAUDE.md", "memory/"}, DefaultPaths())
	root := aProject(t)
	g := newTestGuard(t, root, Config{Protected: []string{}, ReadOnly: []string{"AGENTS.md"}})
	removeAll(t, root, "CLAUDE.md", "specs")
	assert.NoError(t, g.Verify())
	removeAll(t, root, "AGENTS.md")
	assert.Error(t, g.Verify())
}

// A hold for lost files survives a restart: the snapshot keeps it, and the
// restored breaker still refuses, whatever the clock.
// A loss found with another stop in the same iteration: the hold wins,
// and the history records it after the trip. A completed loop is complete
// no more.
// A person who deletes a protected file on purpose and resumes is taken
// at their word: the next iteration is compared with what they left.
// A neutral iteration (cancelled) is verified too: the agent ran.
// Many goroutines recording, resuming and verifying at once: the race
// detector finds nothing, and the files stay intact.
func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func gitInit(t testing.TB, root string) {
	t.Helper()
	gitRun(t, root, "init", "-q")
	gitRun(t, root, "config", "user.email", "guard@example.com")
	gitRun(t, root, "config", "user.name", "guard test")
	gitRun(t, root, "config", "commit.gpgsign", "false")
}

func gitRun(t testing.TB, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}
