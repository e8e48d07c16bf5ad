package looprun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
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
	c.finish(0)
	return c
}

// The result event of claude -p --output-format json: the outcome, the
// cost, the tokens (cache writes and reads count as input), the turns and
// the session, however the pipe cuts the output.
func TestClaudeJSONResultIsRead(t *testing.T) {
	for _, n := range []int{1, 7, 4096} {
		c := streamed(readFixture(t, "claude-json.json"), n)
		r := c.run
		require.True(t, r.Seen, "pieces of %d", n)
		assert.False(t, r.Failed)
		assert.Equal(t, 7, r.Turns)
		assert.Equal(t, 0, r.Denials)
		assert.True(t, r.HasUsage)
		assert.Equal(t, loopbreaker.Usage{InputTokens: 1834 + 12044 + 210387, OutputTokens: 4520, CostUSD: 0.4821}, r.Usage)
		assert.Equal(t, "3f6c2a10-5d4e-4b7a-9a51-2c8e0d9b7f11", c.run.Session)
	}
}

// stream-json: the permission denials of the result, and its session.
func TestClaudeStreamJSONResultIsRead(t *testing.T) {
	c := streamed(readFixture(t, "claude-stream.jsonl"), 100)
	r := c.run
	require.True(t, r.Seen)
	assert.Equal(t, 2, r.Denials)
	assert.Equal(t, loopbreaker.Usage{InputTokens: 612 + 18240, OutputTokens: 310, CostUSD: 0.0375}, r.Usage)
	assert.Equal(t, "8d1e4c77-0b2f-4e61-a3c9-7f5d2b1e9a04", c.run.Session)
}

// A run cut short before its result still names its session (the init
// event); an error result says what went wrong.
func TestClaudeOutputCutShortAndErrors(t *testing.T) {
	stream := readFixture(t, "claude-stream.jsonl")
	c := streamed(stream[:strings.Index(stream, `{"type":"result"`)], 64)
	assert.True(t, c.run.Seen && c.run.Failed, "Claude Code's, and cut short")
	assert.Equal(t, "8d1e4c77-0b2f-4e61-a3c9-7f5d2b1e9a04", c.run.Session)

	c = streamed(readFixture(t, "claude-stream-limit.jsonl"), 333)
	r := c.run
	assert.True(t, r.Failed)
	assert.Equal(t, "claude: Claude AI usage limit reached|1800003600", r.Fallback)
}

// The json format spread over lines is read as one object; a result
// without a newline at its end is read too.
func TestClaudeResultOverLinesOrWithoutANewline(t *testing.T) {
	pretty := "{\n  \"type\": \"result\",\n  \"is_error\": true,\n  \"subtype\": \"error_during_execution\",\n  \"total_cost_usd\": 0.5,\n  \"session_id\": \"s-1\"\n}\n"
	c := streamed(pretty, 5)
	require.True(t, c.run.Seen)
	assert.True(t, c.run.Failed)
	assert.Equal(t, 0.5, c.run.CostUSD)
	assert.Equal(t, "s-1", c.run.Session)

	c = streamed(`{"type":"result","is_error":false,"total_cost_usd":0.25}`, 9)
	assert.Equal(t, 0.25, c.run.CostUSD)
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
		assert.False(t, c.run.Seen, name)
		assert.Zero(t, c.run.Usage, name)
	}

	c := streamed(`{"type":"result","is_error":"yes","total_cost_usd":"cheap","num_turns":3,"usage":{"output_tokens":7},"permission_denials":{}}`+"\n", 4096)
	r := c.run
	require.True(t, r.Seen)
	assert.False(t, r.Failed, "a string is not a bool")
	assert.Equal(t, 3, r.Turns)
	assert.Equal(t, loopbreaker.Usage{OutputTokens: 7}, r.Usage, "the cost is spoilt, the tokens are not")
	assert.Equal(t, 0, r.Denials)
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
		u := c.run.Usage
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CostUSD < 0 || c.run.Denials < 0 {
			t.Fatalf("%+v", c.run)
		}
		if len(c.line) != 0 {
			t.Fatal("a line is held after finish")
		}
	})
}

// The error of a run, by what ended it and what its output told: a
// timeout, a stall, a signal or timeout(1)'s exit by their names; a clean exit
// that the agent does not call a failure is none; else the agent's own
// error, the one ExtractError finds in the output, the agent's word for
// it, or the exit status, in that order.
func TestTheErrorOfARun(t *testing.T) {
	claude := agent.Run{Seen: true, Failed: true, Fallback: "claude: error_during_execution"}
	for _, tc := range []struct {
		name string
		res  result
		out  outputSeen
		want string // "" for none
	}{
		{"a clean exit", result{}, outputSeen{sample: "Error: this is printed, not failed on"}, ""},
		{"a timeout", result{timedOut: true, exitCode: -1}, outputSeen{}, "timed out after 1m0s"},
		{"a stall", result{stalled: 10 * time.Minute, exitCode: -1}, outputSeen{run: claude, sample: "Error: before it went quiet"}, "no output for 10m0s"},
		{"a signal", result{signal: "signal 9 (SIGKILL)", exitCode: -1}, outputSeen{}, "killed by signal 9 (SIGKILL)"},
		{"timeout(1)", result{exitCode: 124}, outputSeen{}, "timed out (exit 124)"},
		{"an exit status", result{exitCode: 2}, outputSeen{sample: "nothing to see"}, "exit status 2"},
		{"the output's error", result{exitCode: 1}, outputSeen{sample: "Error: Cannot find module 'left-pad'\n"}, "Error: Cannot find module 'left-pad'"},
		{"the agent's word, exit 0", result{}, outputSeen{run: claude}, "claude: error_during_execution"},
		{"the output's error before the agent's word", result{}, outputSeen{run: claude, sample: "Error: Cannot find module 'left-pad'\n"}, "Error: Cannot find module 'left-pad'"},
		{"the agent's own error first", result{exitCode: 1}, outputSeen{run: agent.Run{Seen: true, Failed: true, Err: "--- FAIL: TestLogin"}, sample: "Error: other"}, "--- FAIL: TestLogin"},
		{"an agent's run that passed", result{}, outputSeen{run: agent.Run{Seen: true}, sample: "Error: got past"}, ""},
	} {
		err := runError(tc.res, tc.out, time.Minute)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		assert.EqualError(t, err, tc.want, tc.name)
	}
}
