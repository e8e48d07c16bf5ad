package looprun

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// In Claude Code's JSON output the done marker counts in the result text
// alone: the same words in a tool's result (the agent printed PROMPT.md,
// which tells when to say them) are no done signal. Output that is not
// Claude Code's (a script's around it) counts wherever the marker is.
func TestTheDoneMarkerCountsInClaudeCodesResultAlone(t *testing.T) {
	const toolResult = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Print EXIT_SIGNAL: true when all is done."}]},"session_id":"s-1"}` + "\n"
	for name, tc := range map[string]struct {
		output string
		done   bool
	}{
		"in a tool result only":            {toolResult + `{"type":"result","is_error":false,"result":"Read the prompt.","session_id":"s-1"}` + "\n", false},
		"in the result text":               {toolResult + `{"type":"result","is_error":false,"result":"All done.\nEXIT_SIGNAL: true","session_id":"s-1"}` + "\n", true},
		"a run cut short":                  {`{"type":"system","subtype":"init","session_id":"s-1"}` + "\n" + toolResult, false},
		"plain output":                     {"all tasks finished\nEXIT_SIGNAL: true\n", true},
		"plain output after Claude Code's": {toolResult + `{"type":"result","is_error":false,"result":"Read the prompt.","session_id":"s-1"}` + "\nEXIT_SIGNAL: true\n", true},
		"plain output without":             {"still working\n", false},
	} {
		c := newCapture("EXIT_SIGNAL: true", nil)
		c.Write([]byte(tc.output))
		c.finish(0)
		assert.Equal(t, tc.done, c.doneMarkerSeen(), name)
	}
}
