package looprun

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Claude Code's stream-json that stops before its result event (the
// process killed, the stream cut) is no success, whatever the exit status
// said: the run never said it finished.
func TestAClaudeStreamCutBeforeItsResultIsAFailure(t *testing.T) {
	stream := readFixture(t, "claude-stream.jsonl")
	head := stream[:strings.Index(stream, `{"type":"result"`)]
	cut := streamed(head, 64)
	require.True(t, cut.run.Seen, "Claude Code's output")
	assert.EqualError(t, runError(result{}, cut.observe(false), time.Minute), "claude: the output ended before its result event: the run was cut short")
	killed := newCapture("", nil)
	killed.Write([]byte(head))
	killed.finish(143)
	assert.EqualError(t, runError(result{exitCode: 143}, killed.observe(false), time.Minute), "claude: the output ended before its result event (exit status 143)")

	whole := streamed(stream, 64)
	assert.NoError(t, runError(result{}, whole.observe(false), time.Minute), "the whole stream, its result a success")
	plain := streamed("all good\n", 64)
	assert.NoError(t, runError(result{}, plain.observe(false), time.Minute), "output that is no Claude Code's is judged by its exit status")
}

// End to end: an agent whose stream-json stops after its init event fails
// each iteration, and three such runs open the circuit.
func TestLooprunCountsACutClaudeStreamAsAFailure(t *testing.T) {
	r := newRepo(t, `echo '{"type":"system","subtype":"init","session_id":"5b7e1c2a-0d9f-4a4e-8f31-6c2d9e0b1a77","tools":["Bash"]}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Working on it"}]},"session_id":"5b7e1c2a-0d9f-4a4e-8f31-6c2d9e0b1a77"}'`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
	assert.Contains(t, out, "claude: the output ended before its result event")
}
