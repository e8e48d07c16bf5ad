package looprun

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ralph-claude-code's own example of a block, at the end of an agent's
// answer.
const inProgressOutput = `Implemented the login handler and its tests.

---RALPH_STATUS---
STATUS: IN_PROGRESS
TASKS_COMPLETED_THIS_LOOP: 2
FILES_MODIFIED: 5
TESTS_STATUS: PASSING
WORK_TYPE: IMPLEMENTATION
EXIT_SIGNAL: false
RECOMMENDATION: Continue with next priority task from fix_plan.md
---END_RALPH_STATUS---
`

func TestStatusBlockIsRead(t *testing.T) {
	b, ok := parseStatusBlock(inProgressOutput)
	require.True(t, ok)
	assert.Equal(t, statusBlock{
		status: "IN_PROGRESS", tasksCompleted: 2, hasTasks: true, filesModified: 5, hasFiles: true,
		testsStatus: "PASSING", workType: "IMPLEMENTATION", hasExitSignal: true,
		recommendation: "Continue with next priority task from fix_plan.md",
	}, b)
	assert.False(t, b.done())
	assert.Equal(t, loopbreaker.WorkImplementation, b.work(5))
}

// What each block says of the iteration: done, and the kind of work.
func TestStatusBlockFieldsMeanWhatRalphMeans(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block string
		files int
		done  bool
		work  loopbreaker.WorkKind
	}{
		{"exit signal", "EXIT_SIGNAL: true\nWORK_TYPE: DOCUMENTATION", 1, true, loopbreaker.WorkOther},
		{"complete without an exit signal is done", "STATUS: COMPLETE", 0, true, loopbreaker.WorkUnlabelled},
		{"an explicit false wins over complete", "STATUS: COMPLETE\nEXIT_SIGNAL: false", 0, false, loopbreaker.WorkUnlabelled},
		{"testing that changed nothing only ran the tests", "WORK_TYPE: TESTING\nFILES_MODIFIED: 0", 0, false, loopbreaker.WorkTestsOnly},
		{"testing that changed files worked on the tests", "WORK_TYPE: TESTING", 2, false, loopbreaker.WorkTestFix},
		{"debugging fixes tests", "WORK_TYPE: DEBUGGING\nTESTS_STATUS: FAILING", 1, false, loopbreaker.WorkTestFix},
		{"refactoring is other work", "WORK_TYPE: refactoring", 3, false, loopbreaker.WorkOther},
		{"lower case keys and values", "exit_signal: True\nwork_type: implementation", 1, true, loopbreaker.WorkImplementation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := parseStatusBlock("---RALPH_STATUS---\n" + tc.block + "\n---END_RALPH_STATUS---\n")
			require.True(t, ok)
			assert.Equal(t, tc.done, b.done())
			assert.Equal(t, tc.work, b.work(tc.files))
		})
	}
}

// The colon form some prompts use: "RALPH_STATUS:" and the fields
// indented under it, ending at the first line that is not one.
func TestStatusBlockInTheColonForm(t *testing.T) {
	b, ok := parseStatusBlock("Done for now.\nRALPH_STATUS:\n  STATUS: COMPLETE\n  TASKS_COMPLETED_THIS_LOOP: 1\n  EXIT_SIGNAL: true\nThat is all.\n")
	require.True(t, ok)
	assert.True(t, b.done())
	assert.Equal(t, 1, b.tasksCompleted)

	_, ok = parseStatusBlock("RALPH_STATUS: is what the prompt asks for\n")
	assert.False(t, ok, "a mention in prose is no block")
	_, ok = parseStatusBlock("RALPH_STATUS:\nEXIT_SIGNAL: true\n")
	assert.False(t, ok, "the colon form's fields are indented")
}

// The last whole block wins: a block the prompt shows as an example, or
// an earlier one, is not what the agent said last. The template's
// "false | true" is no value.
func TestTheLastStatusBlockWins(t *testing.T) {
	text := "---RALPH_STATUS---\nSTATUS: IN_PROGRESS | COMPLETE | BLOCKED\nEXIT_SIGNAL: false | true\n---END_RALPH_STATUS---\n" +
		"working...\n" + inProgressOutput + "\n---RALPH_STATUS---\nEXIT_SIGNAL: true\nTASK: logout\nAPPROACH: rewrite the session store\n---END_RALPH_STATUS---\n"
	b, ok := parseStatusBlock(text)
	require.True(t, ok)
	assert.True(t, b.done())
	assert.Equal(t, "logout", b.task)
	assert.Equal(t, "rewrite the session store", b.approach)
	assert.False(t, b.hasTasks, "fields of earlier blocks do not carry over")

	b, ok = parseStatusBlock("---RALPH_STATUS---\nSTATUS: IN_PROGRESS | COMPLETE | BLOCKED\nEXIT_SIGNAL: false | true\n---END_RALPH_STATUS---\n")
	require.True(t, ok)
	assert.False(t, b.done(), "the template's placeholders say nothing")
}

// A block the output ends in, without its end line, has still been said;
// one that goes on for ever, or whose lines are huge, is no block.
func TestUnfinishedAndRunawayBlocks(t *testing.T) {
	b, ok := parseStatusBlock("---RALPH_STATUS---\nSTATUS: BLOCKED\nEXIT_SIGNAL: false")
	require.True(t, ok)
	assert.Equal(t, "BLOCKED", b.status)

	_, ok = parseStatusBlock("---RALPH_STATUS---\n" + strings.Repeat("STATUS: COMPLETE\n", maxStatusLines+1) + "---END_RALPH_STATUS---\n")
	assert.False(t, ok)

	b, ok = parseStatusBlock("---RALPH_STATUS---\nRECOMMENDATION: " + strings.Repeat("x", 1000) + "\nTASKS_COMPLETED_THIS_LOOP: 99999999999\n---END_RALPH_STATUS---\n")
	require.True(t, ok)
	assert.Len(t, b.recommendation, maxStatusText+len("..."), "text fields are clipped")
	assert.Equal(t, 1_000_000, b.tasksCompleted, "numbers are bounded")
}

// In Claude Code's JSON output the block is the result text's lines: it is
// read from the result event.
func TestStatusBlockInClaudesResult(t *testing.T) {
	result, err := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": inProgressOutput})
	require.NoError(t, err)
	c := newCapture("", nil)
	writeInPieces(c, append(result, '\n'), 7, 100)
	c.finish(0)
	b, ok := c.statusBlock()
	require.True(t, ok)
	assert.Equal(t, 2, b.tasksCompleted)
}

// Whatever the output and however the writes cut it, the reader finds the
// same block as in one write, and never panics.
func FuzzStatusReader(f *testing.F) {
	f.Add([]byte(inProgressOutput), uint16(3), uint16(40))
	f.Add([]byte("RALPH_STATUS:\n  EXIT_SIGNAL: true\n  STATUS: COMPLETE\nx"), uint16(20), uint16(21))
	f.Add([]byte("---RALPH_STATUS---\r\nTASK: \xff\xfe\r\n---END_RALPH_STATUS---"), uint16(1), uint16(2))
	f.Add([]byte("x\n```\n---RALPH_STATUS---\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---\n```\nmore\n"), uint16(3), uint16(60))
	f.Fuzz(func(t *testing.T, data []byte, cut1, cut2 uint16) {
		var whole statusReader
		whole.Write(data)
		whole.finish()
		a, c := int(cut1)%(len(data)+1), int(cut2)%(len(data)+1)
		if a > c {
			a, c = c, a
		}
		var pieces statusReader
		pieces.Write(data[:a])
		pieces.Write(data[a:c])
		pieces.Write(data[c:])
		pieces.finish()
		b1, ok1 := whole.block()
		b2, ok2 := pieces.block()
		if ok1 != ok2 || b1 != b2 || whole.example != pieces.example {
			t.Fatalf("cut at %d and %d: %+v %v, in one write %+v %v", a, c, b2, ok2, b1, ok1)
		}
		if len(b1.task) > maxStatusText+3 || b1.tasksCompleted > 1_000_000 || b1.tasksCompleted < 0 {
			t.Fatalf("unbounded: %+v", b1)
		}
	})
}
