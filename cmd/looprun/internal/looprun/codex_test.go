package looprun

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The testdata/codex-*.jsonl files are codex exec --json output of Codex
// 0.169.0, as it printed it against a fake model, with the commands' output
// and the messages written for the tests.

// codexCapture writes a fixture to a capture that watches for the done
// marker, in pieces of n bytes, as a pipe delivers it, and finishes it.
func codexCapture(t *testing.T, name string, n int) *capture {
	t.Helper()
	return streamInto(newCapture("EXIT_SIGNAL: true", nil), readFixture(t, name), n)
}

// Codex exits 0 whatever its commands did: a session whose last command,
// the test, failed is a failed run, whose error is the test's failure;
// the thread is the session; the turn's usage is its tokens (the command
// line names the model); the status block is the agent's last message's.
func TestCodexRunWhoseLastCommandFailedFails(t *testing.T) {
	for _, n := range []int{1, 9, 4096} {
		c := codexCapture(t, "codex-stuck.jsonl", n)
		r := c.run
		require.True(t, r.Seen, "pieces of %d", n)
		assert.True(t, r.Failed)
		assert.Equal(t, "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500", r.Err)
		assert.Empty(t, r.LimitText, "a command's failure is no provider's")
		assert.True(t, r.HasUsage)
		assert.False(t, r.HasCost, "Codex reports no cost")
		assert.Equal(t, loopbreaker.Usage{InputTokens: 24000, CacheReadTokens: 18000, OutputTokens: 900}, r.Usage)
		assert.Equal(t, "01a2186f-8fa0-7a32-8b62-94c7db296f17", c.run.Session)
		block, ok := c.statusBlock()
		require.True(t, ok)
		assert.Equal(t, "IN_PROGRESS", block.status)
		assert.Equal(t, "look at the handler's error path", block.recommendation)
		assert.False(t, c.doneMarkerSeen())
	}

	c := codexCapture(t, "codex-stuck.jsonl", 4096)
	err := runError(result{exitCode: 0}, c.observe(false), time.Minute)
	require.Error(t, err, "exit 0, and still a failure")
	assert.Equal(t, "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500", err.Error())
}

// A command that failed and was followed by one that passed is the
// agent's work, not its outcome: the test failed, a grep found nothing,
// the agent fixed the code and the test passed. The done marker in its
// last message is its word; cache writes are counted apart.
func TestCodexRunThatEndsOnAPassingCommandPasses(t *testing.T) {
	c := codexCapture(t, "codex-fixed.jsonl", 64)
	r := c.run
	assert.False(t, r.Failed)
	assert.Empty(t, r.Err)
	assert.NoError(t, runError(result{exitCode: 0}, c.observe(false), time.Minute))
	assert.Equal(t, loopbreaker.Usage{InputTokens: 30000, CacheReadTokens: 20000, CacheWriteTokens: 1000, OutputTokens: 1500}, r.Usage)
	assert.True(t, c.doneMarkerSeen())
}

// A turn that failed (Codex gave up on the model after its retries) is
// the run's error, and the text a provider limit is looked for in: the
// turn's message, not the limits Codex got past while it retried.
func TestCodexFailedTurnIsTheError(t *testing.T) {
	c := codexCapture(t, "codex-429.jsonl", 100)
	r := c.run
	assert.True(t, r.Failed)
	assert.False(t, r.HasUsage)
	want := "exceeded retry limit, last status: 429 Too Many Requests, request id: req_6"
	assert.Equal(t, want, r.Err)
	assert.Equal(t, want, c.limitText())
	err := runError(result{exitCode: 1}, c.observe(false), time.Minute)
	require.Error(t, err)
	assert.Equal(t, want, err.Error())
	l, ok := loopbreaker.ProviderLimitInText(c.limitText(), time.Now())
	require.True(t, ok, "a provider limit")
	assert.Equal(t, loopbreaker.LimitThrottle, l.Kind)
}

// A run that got past a 429 while retrying, and then failed on its last
// command, failed on the command: no provider limit is looked for in the
// output.
func TestCodexLimitsGotPastAreNoLimit(t *testing.T) {
	retried := strings.Split(readFixture(t, "codex-429.jsonl"), "\n")[2]
	stuck := readFixture(t, "codex-stuck.jsonl")
	i := strings.Index(stuck, `{"type":"turn.started"}`) + len(`{"type":"turn.started"}`) + 1
	c := newCapture("", nil)
	c.Write([]byte(stuck[:i] + retried + "\n" + stuck[i:]))
	c.finish(0)
	assert.Contains(t, c.sample(), "429 Too Many Requests", "the retry is in the output")
	assert.Empty(t, c.limitText())
	assert.True(t, c.run.Failed)

	plain := newCapture("", nil)
	plain.Write([]byte("curl: (22) The requested URL returned error: 429\n"))
	plain.finish(0)
	assert.Equal(t, plain.sample(), plain.limitText(), "output that is not Codex's: its end, as before")
}

// A status block and the done marker in a command's output (the agent
// printed a file that holds them) are not the agent's word.
func TestCodexCommandOutputIsNotTheAgentsWord(t *testing.T) {
	c := codexCapture(t, "codex-block-in-output.jsonl", 50)
	_, ok := c.statusBlock()
	assert.False(t, ok)
	assert.False(t, c.doneMarkerSeen())
	assert.False(t, c.run.Failed)
}

// Without -check, a command line that runs Codex or Claude Code (behind
// a wrapper too) draws a warning at start: either can exit 0 with its
// work failing. With -check, or another command, none.
func TestAgentsThatExitZeroOnFailureAskForACheck(t *testing.T) {
	for _, tc := range []struct {
		argv  []string
		check string
		agent string
	}{
		{[]string{"codex", "exec", "--json", "-"}, "", "Codex"},
		{[]string{"npx", "@openai/codex", "exec"}, "", "Codex"},
		{[]string{"/usr/local/bin/claude", "-p"}, "", "Claude Code"},
		{[]string{"timeout", "30m", "claude", "-p"}, "", "Claude Code"},
		{[]string{"codex", "exec"}, "go test ./...", ""},
		{[]string{"./agent.sh", "ask claude"}, "", ""},
		{nil, "", ""},
	} {
		advice := checkAdvice(tc.argv, tc.check)
		if tc.agent == "" {
			assert.Empty(t, advice, "%v", tc.argv)
			continue
		}
		assert.True(t, strings.HasPrefix(advice, tc.agent+" can exit 0 with its work failing"), "%v: %q", tc.argv, advice)
		assert.Contains(t, advice, "-check")
	}

	dir := t.TempDir()
	writeScript(t, filepath.Join(dir, "codex"), "echo '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'\n")
	out, code := runBin(t, dir, filepath.Join(dir, "n"), "", "-dir", dir, "-max-iterations", "1", "--", "./codex", "exec")
	assert.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "\nwarning: Codex can exit 0 with its work failing")
	assert.Contains(t, out, "the status block (RALPH_STATUS), Codex's JSON events (codex exec --json),", "the banner names what it reads")
	out, _ = runBin(t, dir, filepath.Join(dir, "n"), "", "-dir", dir, "-max-iterations", "1", "-check", "true", "--", "./codex", "exec")
	assert.NotContains(t, out, "warning: Codex")
}

// FuzzCodexOutput: any output, cut anywhere, is read without a panic;
// the usage it gives is never negative, and a failed run always says why.
func FuzzCodexOutput(f *testing.F) {
	for _, name := range []string{"codex-stuck.jsonl", "codex-fixed.jsonl", "codex-429.jsonl", "codex-block-in-output.jsonl"} {
		f.Add(readFixture(f, name), 17)
	}
	f.Add(`{"type":"turn.completed","usage":{"input_tokens":-4,"cached_input_tokens":-1,"output_tokens":-9}}`+"\n"+
		`{"type":"turn.failed","error":{"message":"  "}}`+"\n"+`{"type":"item.completed","item":{"type":"command_execution","exit_code":null,"status":"failed"}}`, 5)
	f.Fuzz(func(t *testing.T, text string, n int) {
		c := streamInto(newCapture("EXIT_SIGNAL: true", nil), text, max(1, n%4096))
		r := c.run
		u := r.Usage
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
			t.Fatalf("%+v", r)
		}
		if c.ran == agent.Codex && r.Failed && r.Err == "" {
			t.Fatalf("a failed run that says no error: %+v", r)
		}
	})
}

// A run that passed on its last command shows the error the agent got
// past (the test's failure, not the grep that found nothing), which
// counts toward the same error; a claim of done is read in the agent's
// last message alone.
func TestCodexRunThatPassedShowsTheErrorItGotPast(t *testing.T) {
	c := codexCapture(t, "codex-fixed.jsonl", 64)
	assert.Equal(t, "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500", c.outputError())
	assert.Equal(t, "Fixed the login handler; the tests pass. EXIT_SIGNAL: true", c.claimText())

	c = codexCapture(t, "codex-stuck.jsonl", 64)
	assert.Empty(t, c.outputError(), "a failed run: its error is the iteration's")

	claim := strings.Replace(readFixture(t, "codex-block-in-output.jsonl"), "I read the status file; the work goes on.", "All tasks complete.", 1)
	c = streamInto(newCapture("", nil), claim, 50)
	assert.True(t, claimsDone(c.claimText()))
	c = codexCapture(t, "codex-block-in-output.jsonl", 50)
	assert.False(t, claimsDone(c.claimText()))
	c = streamInto(newCapture("", nil), strings.Replace(readFixture(t, "codex-block-in-output.jsonl"), "STATUS: COMPLETE", "STATUS: COMPLETE: all done", 1), 50)
	assert.False(t, claimsDone(c.claimText()), "a command's output is not the agent's word")

	plain := streamInto(newCapture("", nil), "step 3\nError: Cannot find module 'left-pad'\n", 8)
	assert.Equal(t, "Error: Cannot find module 'left-pad'", plain.outputError(), "another command: its output, as before")
	assert.Equal(t, plain.sample(), plain.claimText())
}
