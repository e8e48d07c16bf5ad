package looprun

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockOf reads text as the capture does, written in pieces of n bytes.
func blockOf(text string, n int) (statusBlock, bool) {
	var s statusReader
	for len(text) > 0 {
		k := min(n, len(text))
		s.Write([]byte(text[:k]))
		text = text[k:]
	}
	s.finish()
	return s.block()
}

const doneBlock = "---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---\n"

// A block inside a code fence with more text after the fence is the agent
// showing the format, not its report; a fenced block that ends the answer
// is its report, as an unfenced one is.
func TestAFencedBlockFollowedByProseIsAnExample(t *testing.T) {
	example := "I will end each answer with a block like this:\n\n```\n" + doneBlock + "```\n\nI am not done yet: two tasks remain.\n"
	for _, tc := range []struct {
		name string
		text string
		done bool // the block read says done
		seen bool // a block was read at all
	}{
		{"an example, then prose", example, false, false},
		{"an example with a language, then prose", "```text\n" + doneBlock + "```\nStill working on the parser.\n", false, false},
		{"an example, then a real block that is not done", example + "\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---\n", false, true},
		{"an example, then a real done block", example + "\n" + doneBlock, true, true},
		{"a real block, then an example with prose: the real one stands", "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n---END_RALPH_STATUS---\n" + example, false, true},
		{"a fenced report that ends the answer", "All tasks are done.\n\n```\n" + doneBlock + "```\n", true, true},
		{"a fenced report, then only blank lines", "```\n" + doneBlock + "```\n\n  \n", true, true},
		{"a fenced report cut before its fence ends", "```\n" + doneBlock, true, true},
		{"the colon form as an example", "```\nRALPH_STATUS:\n  STATUS: COMPLETE\n  EXIT_SIGNAL: true\n```\nNot done: the tests fail.\n", false, false},
		{"an unfenced block followed by prose still counts", doneBlock + "Thanks for reading.\n", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{1, 5, 64, 1 << 16} {
				b, ok := blockOf(tc.text, n)
				require.Equal(t, tc.seen, ok, "pieces of %d", n)
				assert.Equal(t, tc.done, ok && b.done(), "pieces of %d", n)
			}
			b, ok := parseStatusBlock(tc.text)
			assert.Equal(t, tc.done, ok && b.done(), "Claude Code's result text is read the same")
		})
	}
}

// End to end: an agent that quotes the format, done and all, then says it
// is not done, is not taken at its example's word.
func TestLooprunDoesNotEndOnAQuotedStatusBlock(t *testing.T) {
	r := newRepo(t, "printf 'Here is the format:\\n\\n```\\n---RALPH_STATUS---\\nSTATUS: COMPLETE\\nEXIT_SIGNAL: true\\n---END_RALPH_STATUS---\\n```\\n\\nI am not done yet: two tasks remain.\\n'\necho work > \"file_$n.txt\"")
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "4")
	assert.Equal(t, exitLimit, code, out)
	assert.Equal(t, 4, r.runs(t), "no done signal: the loop ran to -max-iterations")
}

// In Claude Code's result text too: the example's EXIT_SIGNAL is no done
// marker, while a fenced report that ends the text is a block that says
// done.
func TestAClaudeResultQuotingTheFormatIsNotDone(t *testing.T) {
	result := func(text string) string {
		b, err := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "session_id": "0f9a"})
		require.NoError(t, err)
		return string(b) + "\n"
	}
	c := newCapture("EXIT_SIGNAL: true", nil)
	c.Write([]byte(result("Format:\n```\n" + doneBlock + "```\nNot done yet: two tasks remain.")))
	c.finish(0)
	require.True(t, c.run.Seen)
	_, hasBlock := c.statusBlock()
	assert.False(t, hasBlock)
	assert.True(t, c.doneMarkerSeen(), "the marker's text is there")
	assert.True(t, c.exampleSeen(), "inside an example")

	c = newCapture("EXIT_SIGNAL: true", nil)
	c.Write([]byte(result("All done.\n```\n" + doneBlock + "```")))
	c.finish(0)
	b, hasBlock := c.statusBlock()
	require.True(t, hasBlock)
	assert.True(t, b.done())
	assert.False(t, c.exampleSeen())
}
