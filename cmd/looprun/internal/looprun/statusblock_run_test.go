package looprun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockScript is a shell function that prints a status block: block
// STATUS WORK_TYPE EXIT_SIGNAL FILES_MODIFIED TASKS [APPROACH].
const blockScript = `block() {
echo "---RALPH_STATUS---"
echo "STATUS: $1"
echo "TASKS_COMPLETED_THIS_LOOP: $5"
echo "FILES_MODIFIED: $4"
echo "TESTS_STATUS: PASSING"
echo "WORK_TYPE: $2"
echo "EXIT_SIGNAL: $3"
[ -n "$6" ] && echo "APPROACH: $6"
echo "RECOMMENDATION: carry on"
echo "---END_RALPH_STATUS---"
}
`

// The block says whether the agent is done: an agent that quotes its
// prompt ("set EXIT_SIGNAL: true when ...") but says EXIT_SIGNAL: false
// in its block goes on, until two blocks in a row say true.
func TestTheStatusBlockSaysWhenTheAgentIsDone(t *testing.T) {
	r := newRepo(t, blockScript+`echo "step $n" > "work_$n.txt"
echo "The prompt says to print EXIT_SIGNAL: true when all is done; it is not yet."
if [ $n -ge 3 ]; then block COMPLETE IMPLEMENTATION true 1 1; else block IN_PROGRESS IMPLEMENTATION false 1 1; fi
`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 4, r.runs(t), "not done at the second, when the marker alone would have said so")
	assert.Contains(t, out, "agent: COMPLETE, tasks done 1, files modified 1, tests PASSING, IMPLEMENTATION, exit signal true; next: carry on")
}

// Blocks that say the iteration only ran the tests, changing nothing,
// complete the loop after three, as ralph-claude-code's test-only exit.
func TestTestingBlocksThatChangeNothingComplete(t *testing.T) {
	r := newRepo(t, blockScript+`if [ $n -le 2 ]; then echo "step $n" > "work_$n.txt"; block IN_PROGRESS IMPLEMENTATION false 1 1; exit 0; fi
echo "All tests pass; nothing to implement."
block IN_PROGRESS TESTING false 0 0
`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: 3 iterations in a row only ran tests (threshold: 3)")
	assert.Equal(t, 5, r.runs(t))
}

// Blocks that say the agent keeps debugging the tests open the circuit on
// the test-fix loop, though every iteration changes files and passes.
func TestDebuggingBlocksOpenTheTestFixLoop(t *testing.T) {
	r := newRepo(t, blockScript+`echo "attempt $n" > fix.txt
block IN_PROGRESS DEBUGGING false 1 0
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "12")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "Test-fix loop: 5 of the last 5 iterations only fixed tests")
	assert.Equal(t, 5, r.runs(t))
}

// Blocks whose APPROACH goes back and forth between two ways, resolving
// nothing, open the circuit on the circular approach.
func TestAlternatingApproachesOpenACircle(t *testing.T) {
	r := newRepo(t, blockScript+`echo "attempt $n" > cache.txt
if [ $((n % 2)) -eq 0 ]; then way="add a cache"; else way="remove the cache"; fi
block IN_PROGRESS IMPLEMENTATION false 1 0 "$way"
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "12")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "Circular approach: 2 approaches alternating over the last 6 iterations without progress")
	assert.Equal(t, 6, r.runs(t))
}

// An iteration that changes no file but says it completed a task has made
// progress: the no-progress signal stays quiet.
func TestATaskCompletedIsProgressWithoutChangedFiles(t *testing.T) {
	r := newRepo(t, blockScript+`echo "Closed the ticket in the tracker."
block IN_PROGRESS IMPLEMENTATION false 0 1
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "5")
	assert.Equal(t, exitLimit, code, out)
	assert.Regexp(t, `(?m)^\s+5\s+\S+\s+CLOSED\s+ok\s+0\s+-/0\s+\+2\s+LOW\s+0\s+0\s+0\s`, out, "a task (+5) and no file changed (-3)")
}

// Outside git the block's FILES_MODIFIED tells the files changed: the
// same output with files modified is progress, with none it is not.
func TestOutsideGitTheBlockCountsTheFiles(t *testing.T) {
	for _, tc := range []struct {
		files string
		code  int
	}{{"2", exitLimit}, {"0", exitTripped}} {
		dir := t.TempDir()
		counter := filepath.Join(t.TempDir(), "n")
		writeScript(t, filepath.Join(dir, "agent.sh"), blockScript+"block IN_PROGRESS IMPLEMENTATION false "+tc.files+" 0\n")
		out, code := runBin(t, dir, counter, "", "-dir", dir, "-interactive", "no", "-max-iterations", "5", "--", "./agent.sh")
		assert.Equal(t, tc.code, code, out)
	}
}

// The plan's first open item names the task an iteration works on: three
// failures in a row on it stop the loop, naming it, before the
// consecutive failures do.
func TestThePlansNextItemIsTheTask(t *testing.T) {
	r := newRepo(t, `echo "Error: TypeError: session is undefined (attempt $n)" >&2
exit 1
`)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "fix_plan.md"), []byte("- [x] login\n- [ ] logout: clear the session\n- [ ] signup\n"), 0o644))
	out, code := r.looprun(t, "", "-interactive", "no", "-plan", "fix_plan.md")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "----- iteration 1: logout: clear the session")
	assert.Contains(t, out, `task "logout: clear the session"`)
}

// In Claude Code's JSON output the block is in the result text: read
// there, it completes the loop.
func TestTheBlockInClaudesResultCompletes(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"Done.\\n---RALPH_STATUS---\\nSTATUS: COMPLETE\\nEXIT_SIGNAL: true\\n---END_RALPH_STATUS---\\n","session_id":"s-1"}\n'
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-done-marker", "")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 2, r.runs(t))
}
