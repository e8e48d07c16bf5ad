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

// The testdata/codex-*.jsonl files are codex exec --json output of Codex
// 0.169.0, as it printed it against a fake model, with the commands' output
// and the messages written for the tests.

// codexCapture writes a fixture to a capture that watches for the done
// marker, in pieces of n bytes, as a pipe delivers it, and finishes it;
// the model is what the runner found on the command line.
func codexCapture(t *testing.T, name string, n int) *capture {
	t.Helper()
	c := newCapture("EXIT_SIGNAL: true", nil)
	c.claude.codex.model = "gpt-5.5"
	return streamInto(c, readFixture(t, name), n)
}

// Codex exits 0 whatever its commands did: a session whose last command,
// the test, failed is a failed run, whose error is the test's failure;
// the thread is the session; the turn's usage names the model, for the
// breaker to price; the status block is the agent's last message's.
func TestCodexRunWhoseLastCommandFailedFails(t *testing.T) {
	for _, n := range []int{1, 9, 4096} {
		c := codexCapture(t, "codex-stuck.jsonl", n)
		r := c.claude.result
		require.True(t, r.seen, "pieces of %d", n)
		assert.True(t, r.isError)
		assert.Equal(t, "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500", r.errText)
		assert.Empty(t, r.limitText, "a command's failure is no provider's")
		assert.True(t, r.hasUsage)
		assert.False(t, r.hasCost, "Codex reports no cost")
		assert.Equal(t, loopbreaker.Usage{Model: "gpt-5.5", InputTokens: 24000, CacheReadTokens: 18000, OutputTokens: 900}, r.usage)
		assert.Equal(t, "01a2186f-8fa0-7a32-8b62-94c7db296f17", c.claude.session)
		block, ok := c.statusBlock()
		require.True(t, ok)
		assert.Equal(t, "IN_PROGRESS", block.status)
		assert.Equal(t, "look at the handler's error path", block.recommendation)
		assert.False(t, c.doneMarkerSeen())
	}

	c := codexCapture(t, "codex-stuck.jsonl", 4096)
	err := iterationError(result{exitCode: 0}, c, time.Minute)
	require.Error(t, err, "exit 0, and still a failure")
	assert.Equal(t, "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500", err.Error())
}

// A command that failed and was followed by one that passed is the
// agent's work, not its outcome: the test failed, a grep found nothing,
// the agent fixed the code and the test passed. The done marker in its
// last message is its word; cache writes are counted apart.
func TestCodexRunThatEndsOnAPassingCommandPasses(t *testing.T) {
	c := codexCapture(t, "codex-fixed.jsonl", 64)
	r := c.claude.result
	assert.False(t, r.isError)
	assert.Empty(t, r.errText)
	assert.NoError(t, iterationError(result{exitCode: 0}, c, time.Minute))
	assert.Equal(t, loopbreaker.Usage{Model: "gpt-5.5", InputTokens: 30000, CacheReadTokens: 20000, CacheWriteTokens: 1000, OutputTokens: 1500}, r.usage)
	assert.True(t, c.doneMarkerSeen())
}

// A command that failed with nothing that reads as an error in its
// output fails as its exit code and its command line.
func TestCodexCommandFailureWithoutAnErrorInItsOutput(t *testing.T) {
	code := 2
	assert.Equal(t, "command exited 2: /bin/bash -lc 'make lint'",
		codexCommand{Command: "/bin/bash -lc 'make lint'", ExitCode: &code, Status: "failed"}.failure())
	assert.Equal(t, "command failed: /bin/bash -lc 'x'", codexCommand{Command: "/bin/bash -lc 'x'", Status: "failed"}.failure())
}

// A turn that failed (Codex gave up on the model after its retries) is
// the run's error, and the text a provider limit is looked for in: the
// turn's message, not the limits Codex got past while it retried.
func TestCodexFailedTurnIsTheError(t *testing.T) {
	c := codexCapture(t, "codex-429.jsonl", 100)
	r := c.claude.result
	assert.True(t, r.isError)
	assert.False(t, r.hasUsage)
	want := "exceeded retry limit, last status: 429 Too Many Requests, request id: req_6"
	assert.Equal(t, want, r.errText)
	assert.Equal(t, want, c.limitText())
	err := iterationError(result{exitCode: 1}, c, time.Minute)
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
	c.finish()
	assert.Contains(t, c.sample(), "429 Too Many Requests", "the retry is in the output")
	assert.Empty(t, c.limitText())
	assert.True(t, c.claude.result.isError)

	plain := newCapture("", nil)
	plain.Write([]byte("curl: (22) The requested URL returned error: 429\n"))
	plain.finish()
	assert.Equal(t, plain.sample(), plain.limitText(), "output that is not Codex's: its end, as before")
}

// A status block and the done marker in a command's output (the agent
// printed a file that holds them) are not the agent's word.
func TestCodexCommandOutputIsNotTheAgentsWord(t *testing.T) {
	c := codexCapture(t, "codex-block-in-output.jsonl", 50)
	_, ok := c.statusBlock()
	assert.False(t, ok)
	assert.False(t, c.doneMarkerSeen())
	assert.False(t, c.claude.result.isError)
}

// The model Codex runs is read from its command line, else from its
// configuration: -m and --model, -c model=..., the profile's config and
// CODEX_HOME's config.toml (whose top level alone names the model).
func TestCodexModelIsFoundWhereCodexTakesIt(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"),
		[]byte("# mine\nmodel = \"gpt-5.4\" # the default\napproval_policy = \"never\"\n\n[profiles.x]\nmodel = \"o3\"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, "fast.config.toml"), []byte("model = 'gpt-5.4-mini'\n"), 0o600))
	noModel := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(noModel, "config.toml"), []byte("[model_providers.x]\nmodel = \"not this\"\n"), 0o600))
	env := func(codexHome string) func(string) string {
		return func(k string) string {
			switch k {
			case "CODEX_HOME":
				return codexHome
			case "HOME":
				return "/nonexistent"
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		argv []string
		home string
		want string
	}{
		{"-m", []string{"codex", "exec", "--json", "-m", "gpt-5.5", "fix it"}, home, "gpt-5.5"},
		{"--model=", []string{"/opt/bin/codex", "exec", "--model=gpt-5.5"}, home, "gpt-5.5"},
		{"-m joined", []string{"codex", "exec", "-mgpt-5.5"}, home, "gpt-5.5"},
		{"-c model=", []string{"codex", "exec", "-c", `model="gpt-5.2"`}, home, "gpt-5.2"},
		{"-m wins over -c", []string{"codex", "exec", "-c", "model=o3", "-m", "gpt-5.5"}, home, "gpt-5.5"},
		{"a profile", []string{"codex", "exec", "-p", "fast"}, home, "gpt-5.4-mini"},
		{"config.toml", []string{"codex", "exec", "--json", "resume", "{session}", "-"}, home, "gpt-5.4"},
		{"through npx", []string{"npx", "@openai/codex", "exec"}, home, "gpt-5.4"},
		{"a table's model is not the top level's", []string{"codex", "exec"}, noModel, ""},
		{"no config", []string{"codex", "exec"}, t.TempDir(), ""},
		{"not Codex", []string{"claude", "-p", "-m", "x"}, home, ""},
		{"a prompt that names codex is no codex", []string{"./agent.sh", "ask codex -m gpt-5.5"}, home, ""},
	} {
		assert.Equal(t, tc.want, codexModel(tc.argv, env(tc.home)), tc.name)
	}

	user := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(user, ".codex"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(user, ".codex", "config.toml"), []byte("model=\"gpt-5.1-codex\"\n"), 0o600))
	assert.Equal(t, "gpt-5.1-codex", codexModel([]string{"codex", "exec"}, func(k string) string {
		if k == "HOME" {
			return user
		}
		return ""
	}), "without CODEX_HOME, ~/.codex")
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
		r := c.claude.result
		u := r.usage
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
			t.Fatalf("%+v", r)
		}
		if c.claude.codex.seen && r.isError && r.errText == "" {
			t.Fatalf("a failed run that says no error: %+v", r)
		}
	})
}

// FuzzCodexModel: any command line (its arguments split at NUL bytes) is
// read without a panic.
func FuzzCodexModel(f *testing.F) {
	f.Add("codex\x00exec\x00-m\x00gpt-5.5")
	f.Add("codex\x00-c\x00model='o3\x00-p")
	f.Add("codex\x00-m")
	f.Fuzz(func(t *testing.T, line string) {
		_ = codexModel(strings.Split(line, "\x00"), func(string) string { return "" })
		_ = tomlString(line)
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
