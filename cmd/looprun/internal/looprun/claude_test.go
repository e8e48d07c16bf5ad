package looprun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readFixture reads a file of testdata/: Claude Code's JSON output, written
// by hand from its documented format.
func readFixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(data)
}

// streamed writes text to a capture in pieces of n bytes, as a pipe
// delivers it, and finishes it.
func streamed(text string, n int) *capture { return streamInto(newCapture("", nil), text, n) }

// streamInto writes text to c in pieces of n bytes, finishes it and
// returns it.
func streamInto(c *capture, text string, n int) *capture {
	for len(text) > 0 {
		k := min(n, len(text))
		c.Write([]byte(text[:k]))
		text = text[k:]
	}
	c.finish()
	return c
}

// The result event of claude -p --output-format json: the outcome, the
// cost, the tokens (cache writes and reads count as input), the turns and
// the session, however the pipe cuts the output.
func TestClaudeJSONResultIsRead(t *testing.T) {
	for _, n := range []int{1, 7, 4096} {
		c := streamed(readFixture(t, "claude-json.json"), n)
		r := c.claude.result
		require.True(t, r.seen, "pieces of %d", n)
		assert.False(t, r.isError)
		assert.Equal(t, "success", r.subtype)
		assert.Equal(t, 7, r.turns)
		assert.Equal(t, 0, r.denials)
		assert.True(t, r.hasUsage)
		assert.Equal(t, loopbreaker.Usage{InputTokens: 1834 + 12044 + 210387, OutputTokens: 4520, CostUSD: 0.4821}, r.usage)
		assert.Equal(t, "3f6c2a10-5d4e-4b7a-9a51-2c8e0d9b7f11", c.claude.session)
	}
}

// stream-json: the permission denials of the result, and its session.
func TestClaudeStreamJSONResultIsRead(t *testing.T) {
	c := streamed(readFixture(t, "claude-stream.jsonl"), 100)
	r := c.claude.result
	require.True(t, r.seen)
	assert.Equal(t, 2, r.denials)
	assert.Equal(t, loopbreaker.Usage{InputTokens: 612 + 18240, OutputTokens: 310, CostUSD: 0.0375}, r.usage)
	assert.Equal(t, "8d1e4c77-0b2f-4e61-a3c9-7f5d2b1e9a04", c.claude.session)
}

// A run cut short before its result still names its session (the init
// event); an error result says what went wrong.
func TestClaudeOutputCutShortAndErrors(t *testing.T) {
	stream := readFixture(t, "claude-stream.jsonl")
	c := streamed(stream[:strings.Index(stream, `{"type":"result"`)], 64)
	assert.False(t, c.claude.result.seen)
	assert.Equal(t, "8d1e4c77-0b2f-4e61-a3c9-7f5d2b1e9a04", c.claude.session)

	c = streamed(readFixture(t, "claude-stream-limit.jsonl"), 333)
	r := c.claude.result
	assert.True(t, r.isError)
	assert.Equal(t, "Claude AI usage limit reached|1800003600", r.text)
}

// The json format spread over lines is read as one object; a result
// without a newline at its end is read too.
func TestClaudeResultOverLinesOrWithoutANewline(t *testing.T) {
	pretty := "{\n  \"type\": \"result\",\n  \"is_error\": true,\n  \"subtype\": \"error_during_execution\",\n  \"total_cost_usd\": 0.5,\n  \"session_id\": \"s-1\"\n}\n"
	c := streamed(pretty, 5)
	require.True(t, c.claude.result.seen)
	assert.True(t, c.claude.result.isError)
	assert.Equal(t, 0.5, c.claude.result.usage.CostUSD)
	assert.Equal(t, "s-1", c.claude.session)

	c = streamed(`{"type":"result","is_error":false,"total_cost_usd":0.25}`, 9)
	assert.Equal(t, 0.25, c.claude.result.usage.CostUSD)
}

// What is not Claude Code's result is passed over: plain text, other
// events, a result line longer than maxJSONLine, fields of the wrong type
// (which spoil only themselves).
func TestWhatIsNotAClaudeResultIsPassedOver(t *testing.T) {
	for name, text := range map[string]string{
		"plain text":        "ok  \texample.com/app\t0.012s\nPASS\n",
		"an assistant line": `{"type":"assistant","message":{"content":[{"type":"text","text":"{\"type\":\"result\",\"total_cost_usd\":9}"}]}}` + "\n",
		"a user line":       `{"type":"user","message":{"content":[{"type":"tool_result","content":"\"result\""}]}}` + "\n",
		"broken JSON":       `{"type":"result","total_cost_usd":` + "\n",
		"too long a line":   `{"type":"result","total_cost_usd":1,"result":"` + strings.Repeat("x", maxJSONLine) + `"}` + "\n" + "done\n",
	} {
		c := streamed(text, 4096)
		assert.False(t, c.claude.result.seen, name)
		assert.Zero(t, c.claude.result.usage, name)
	}

	c := streamed(`{"type":"result","is_error":"yes","total_cost_usd":"cheap","num_turns":3,"usage":{"output_tokens":7},"permission_denials":{}}`+"\n", 4096)
	r := c.claude.result
	require.True(t, r.seen)
	assert.False(t, r.isError, "a string is not a bool")
	assert.Equal(t, 3, r.turns)
	assert.Equal(t, loopbreaker.Usage{OutputTokens: 7}, r.usage, "the cost is spoilt, the tokens are not")
	assert.Equal(t, 0, r.denials)
}

// Token counts near the largest int saturate instead of wrapping.
func TestClaudeTokenCountsSaturate(t *testing.T) {
	assert.Equal(t, 6, sumTokens(1, 2, 3))
	assert.Equal(t, 3, sumTokens(-5, 3), "a negative count counts as zero")
	assert.Equal(t, int(^uint(0)>>1), sumTokens(int(^uint(0)>>1), 5))
}

// FuzzClaudeOutput: any output, cut anywhere, is read without a panic, and
// what it gives is never negative.
func FuzzClaudeOutput(f *testing.F) {
	for _, name := range []string{"claude-json.json", "claude-stream.jsonl", "claude-stream-limit.jsonl", "claude-stream-quoted-limit.jsonl"} {
		f.Add(readFixture(f, name), 17)
	}
	f.Add(`{"type":"result","total_cost_usd":-2,"usage":{"input_tokens":-4,"output_tokens":-1}}`, 3)
	f.Fuzz(func(t *testing.T, text string, n int) {
		c := streamed(text, max(1, n%4096))
		u := c.claude.result.usage
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CostUSD < 0 || c.claude.result.denials < 0 {
			t.Fatalf("%+v", c.claude.result)
		}
		if len(c.claude.line) != 0 {
			t.Fatal("a line is held after finish")
		}
	})
}

// An error result with nothing ExtractError recognises is the error the
// result event names: its text, or else its subtype.
func TestIterationErrorOfAnErrorResult(t *testing.T) {
	c := newCapture("", nil)
	c.claude.result = claudeResult{seen: true, isError: true, subtype: "error_during_execution", text: "API Error: 500 Internal server error"}
	assert.EqualError(t, iterationError(result{}, c, time.Minute), "claude: API Error: 500 Internal server error")
	c.claude.result.text = ""
	assert.EqualError(t, iterationError(result{}, c, time.Minute), "claude: error_during_execution")
	c.claude.result.isError = false
	assert.NoError(t, iterationError(result{}, c, time.Minute), "a clean exit, and no error result")
	assert.EqualError(t, iterationError(result{exitCode: 2}, c, time.Minute), "exit status 2")
}
