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
	cut := streamed(stream[:strings.Index(stream, `{"type":"result"`)], 64)
	require.False(t, cut.claude.result.seen)
	assert.EqualError(t, iterationError(result{}, cut, time.Minute), "claude: the output ended before its result event: the run was cut short")
	assert.EqualError(t, iterationError(result{exitCode: 143}, cut, time.Minute), "claude: the output ended before its result event (exit status 143)")

	whole := streamed(stream, 64)
	assert.NoError(t, iterationError(result{}, whole, time.Minute), "the whole stream, its result a success")
	plain := streamed("all good\n", 64)
	assert.NoError(t, iterationError(result{}, plain, time.Minute), "output that is no Claude Code's is judged by its exit status")
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
