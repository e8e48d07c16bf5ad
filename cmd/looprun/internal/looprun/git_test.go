package looprun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// looprun keeps its state out of git through .git/info/exclude, which is
// no tracked file: an agent that commits everything (git add -A) commits
// no state, no log, no copy of a protected file, and nothing tracked
// changes. A second run adds no second line.
func TestStateIsExcludedFromGit(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
git add -A && git commit -qm "agent's commit $n"
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "2")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "looprun: .loopbreaker/ added to .git/info/exclude")
	files := gitOut(t, r.dir, "ls-files")
	assert.NotContains(t, files, stateDirName)
	assert.Equal(t, "README.md\nagent.sh\nwork_1.txt\nwork_2.txt\n", files)
	assert.Empty(t, gitOut(t, r.dir, "status", "--porcelain", "--untracked-files=all"), "nothing tracked changed, nothing untracked shows")

	out, code = r.looprun(t, "", "-interactive", "no", "-max-iterations", "1")
	require.Equal(t, exitLimit, code, out)
	assert.NotContains(t, out, "added to .git/info/exclude")
	exclude, err := os.ReadFile(filepath.Join(r.dir, ".git", "info", "exclude"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(exclude), "/.loopbreaker/\n"))
}

// With -dir inside a repository, the line is anchored at the directory.
func TestStateOfASubdirectoryIsExcludedThere(t *testing.T) {
	r := newRepo(t, "")
	sub := filepath.Join(r.dir, "service")
	require.NoError(t, os.Mkdir(sub, 0o755))
	writeScript(t, filepath.Join(sub, "agent.sh"), "echo \"step $n\" > work.txt\n")
	out, code := runBin(t, sub, r.counter, "", "-dir", sub, "-interactive", "no", "-max-iterations", "1", "--", "./agent.sh")
	require.Equal(t, exitLimit, code, out)
	exclude, err := os.ReadFile(filepath.Join(r.dir, ".git", "info", "exclude"))
	require.NoError(t, err)
	assert.Contains(t, string(exclude), "\n/service/.loopbreaker/\n")
	assert.Equal(t, "?? service/agent.sh\n?? service/work.txt\n", gitOut(t, r.dir, "status", "--porcelain", "--untracked-files=all"))
}

// -commit commits each successful iteration's changes, with a message
// naming the iteration and its task; an iteration that changed nothing
// makes no empty commit, and one whose check fails makes none.
func TestCommitAfterEachSuccessfulIteration(t *testing.T) {
	r := newRepo(t, `case $n in
1) echo "login" > login.txt ;;
2) echo "nothing this time" ;;
3) echo "broken" > logout.txt ;;
*) echo "logout" > logout.txt ;;
esac
`)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "fix_plan.md"), []byte("- [ ] login\n- [ ] logout\n"), 0o644))
	r.git(t, "add", "fix_plan.md")
	r.git(t, "commit", "-qm", "plan")
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "4", "-commit", "-plan", "fix_plan.md",
		"-check", "! grep -q broken logout.txt 2>/dev/null || { echo 'Error: logout is broken'; exit 1; }")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "nothing to commit")
	assert.Equal(t, "looprun: iteration 4 (login)\nlooprun: iteration 1 (login)\nplan\nstart\n",
		gitOut(t, r.dir, "log", "--format=%s"), "iteration 3 failed its check; iteration 2 changed nothing")
	assert.Equal(t, "logout.txt\n", gitOut(t, r.dir, "show", "--name-only", "--format=", "HEAD"),
		"the fourth commit holds what the third and fourth changed")
	assert.Regexp(t, `committed [0-9a-f]+: looprun: iteration 1 \(login\)`, out)
	assert.Empty(t, gitOut(t, r.dir, "status", "--porcelain"))
}

// A commit that fails (no identity, a hook) is an error on stderr, said
// once however many commits fail alike: the loop goes on.
func TestFailedCommitIsReportedAndTheLoopGoesOn(t *testing.T) {
	r := newRepo(t, "echo \"step $n\" > \"work_$n.txt\"\n")
	hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n"), 0o755))
	cmd := r.command(nil, "-interactive", "no", "-max-iterations", "2", "-commit")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exited(t, cmd, cmd.Run())
	assert.Equal(t, exitLimit, code, stdout.String()+stderr.String())
	assert.Contains(t, stderr.String(), "looprun: commit: git commit: exit status 1: hook says no")
	assert.Equal(t, 1, strings.Count(stderr.String(), "hook says no"), "said once")
	assert.Equal(t, 2, r.runs(t))
}

// Without a git identity every commit fails the same way: -commit says so
// once, not after every iteration, and tries again each time.
func TestMissingGitIdentityIsSaidOnce(t *testing.T) {
	r := newRepo(t, "echo \"step $n\" > \"work_$n.txt\"\n")
	r.git(t, "config", "--unset", "user.email")
	r.git(t, "config", "--unset", "user.name")
	r.git(t, "config", "user.useConfigOnly", "true")
	cmd := r.command([]string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=", "GIT_AUTHOR_EMAIL=", "GIT_COMMITTER_NAME=", "GIT_COMMITTER_EMAIL=", "EMAIL="},
		"-interactive", "no", "-max-iterations", "3", "-commit")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exited(t, cmd, cmd.Run())
	assert.Equal(t, exitLimit, code, stdout.String()+stderr.String())
	assert.Equal(t, 1, strings.Count(stderr.String(), "looprun: commit:"), stderr.String())
	assert.Contains(t, stderr.String(), "(said once; -commit tries again after each successful iteration)")
	assert.Equal(t, 3, r.runs(t))
}
