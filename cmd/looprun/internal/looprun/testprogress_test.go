package looprun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countsCheck is a -check that prints, for the agent's run $n, the counts
// of the line of its case: "1) 40 passed, 0 failed" prints "40 passed, 0
// failed" after the first run.
func countsCheck(cases string) string {
	return `n=$(cat "$COUNTER"); case $n in ` + cases + ` esac`
}

// The check's test counts reach the breaker: passing tests that fall and
// failures that rise three iterations in a row are superkit's two trend
// warnings, shown before the next iteration; the table shows the counts.
func TestCheckCountsWarnOfDecliningTestsAndRisingErrors(t *testing.T) {
	r := newRepo(t, `echo "step $n" > work.txt
`)
	check := countsCheck(`1) echo "40 passed, 0 failed";; 2) echo "38 passed, 2 failed";; 3) echo "35 passed, 5 failed";; *) echo "31 passed, 9 failed";;`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5", "-check", check)
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+ok\s+1\s+38/2\s`, out)
	assert.Contains(t, out, "warning: Passing tests fell in 3 measured iterations in a row, from 40 to 31 (threshold: 3)")
	assert.Contains(t, out, "warning: Errors rose in 3 measured iterations in a row, from 0 to 9 (threshold: 3)")
}

// Passing tests that rise are progress, as superkit and the Nity Loop
// count them: an agent that changes no file but makes one more test pass
// each iteration is not stuck, and each such test scores 3 points.
func TestRisingPassingTestsAreProgress(t *testing.T) {
	r := newRepo(t, "echo working\n")
	check := countsCheck(`1) echo "1 passed, 4 failed";; 2) echo "2 passed, 3 failed";; 3) echo "3 passed, 2 failed";; *) echo "4 passed, 1 failed";;`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "4", "-check", check)
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+4\s+\S+\s+CLOSED\s+ok\s+0\s+4/1\s+0\s+LOW\s+0\s+0\s+0\s`, out,
		"a newly passing test (+3) outweighs no file changed (-3), and is progress")
	assert.NotContains(t, out, "No progress")
}

// The counts a loop last saw carry over a restart, and over an iteration
// that tells none (its command failed, so no check ran): the breaker does
// not see the tests fall to 0 and all of them pass again.
func TestTestCountsCarryOverARestart(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 2 ]; then echo "Error: flaky network" >&2; exit 1; fi
echo working
`)
	check := countsCheck(`*) echo "38 passed, 2 failed";;`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "1", "-check", check)
	require.Equal(t, exitLimit, code, out)

	out, code = r.looprun(t, "", "-interactive", "no", "-max-iterations", "2", "-no-progress", "5", "-check", check)
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+FAIL\s+0\s+-\s`, out, "no check ran: no counts told")
	assert.Regexp(t, `(?m)^\s+3\s+\S+\s+CLOSED\s+ok\s+0\s+38/2\s+-3\s+\S+\s+0\s+1\s+3\s`, out,
		"38 passing, as before the restart: no progress, the third in a row")
	assert.NotContains(t, out, "Passing tests fell")
}

// Without a check, the status block's TESTS_STATUS tells the tests: its
// counts when it has them, and FAILING alone as one failure.
func TestTheStatusBlockTellsTheTests(t *testing.T) {
	r := newRepo(t, `echo "step $n" > work.txt
echo "---RALPH_STATUS---"
if [ $n -eq 1 ]; then echo "TESTS_STATUS: FAILING (40 passed, 2 failed)"; else echo "TESTS_STATUS: FAILING"; fi
echo "EXIT_SIGNAL: false"
echo "---END_RALPH_STATUS---"
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "2")
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+ok\s+1\s+40/2\s`, out)
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+ok\s+1\s+-/1\s`, out)
}

// An iteration that puts back a file the last one changed (git checkout,
// git restore), or commits a git revert, reverted changes.
func TestRevertsAreSeenInGit(t *testing.T) {
	r := newRepo(t, "true\n")
	readme := filepath.Join(r.dir, "README.md")
	require.NoError(t, os.WriteFile(readme, []byte("# changed\n"), 0o644))
	before, ok := gitTree(r.dir)
	require.True(t, ok)
	r.git(t, "checkout", "--", "README.md")
	after, _ := gitTree(r.dir)
	assert.True(t, reverted(r.dir, before, after), "checked out again")

	require.NoError(t, os.WriteFile(readme, []byte("# changed again\n"), 0o644))
	before, _ = gitTree(r.dir)
	r.git(t, "commit", "-qam", "change")
	after, _ = gitTree(r.dir)
	assert.False(t, reverted(r.dir, before, after), "committed, not reverted")

	before = after
	r.git(t, "revert", "--no-edit", "HEAD")
	after, _ = gitTree(r.dir)
	assert.True(t, reverted(r.dir, before, after), "git revert")
}
