package looprun

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
)

// Lines the real agents printed when looprun's hook ended their session
// (a model calling the same failing test again and again, the hooks
// installed, against the fake model), cut to the fields that matter.
// Claude Code 2.1.328, claude -p --output-format stream-json --verbose
// (the hook_response events only with --include-hook-events):
const (
	claudeInit = `{"type":"system","subtype":"init","cwd":"/tmp/p","session_id":"e9daada5-a11d-43ac-861d-1665b5b81739","claude_code_version":"2.1.328"}`
	// A hook's answer that lets the run go on: it blocks the tool's
	// result, no more.
	claudeBlockingHook = `{"type":"system","subtype":"hook_response","hook_name":"PostToolUseFailure:Bash","hook_event":"PostToolUseFailure",` +
		`"stdout":"{\"decision\":\"block\",\"reason\":\"loopbreaker stopped your tool calls: Same action failed 3 times in a row\"}\n","stderr":"","exit_code":0,"outcome":"success","session_id":"e9daada5-a11d-43ac-861d-1665b5b81739"}`
	// The answer that ended the run.
	claudeEndingHook = `{"type":"system","subtype":"hook_response","hook_id":"6f659e64-f732-4070-ad7b-e640d8314f2b","hook_name":"PreToolUse:Bash","hook_event":"PreToolUse",` +
		`"output":"{\"continue\":false,\"stopReason\":\"looprun ended the run: Same action failed 3 times in a row (threshold: 3, error ad7cbd02): Bash {\\\"command\\\":\\\"sh login_test.sh\\\"}, and the model went on calling tools after it was refused.\"}\n",` +
		`"stdout":"{\"continue\":false,\"stopReason\":\"looprun ended the run: Same action failed 3 times in a row (threshold: 3, error ad7cbd02): Bash {\\\"command\\\":\\\"sh login_test.sh\\\"}, and the model went on calling tools after it was refused.\",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"loopbreaker refused this call\"}}\n",` +
		`"stderr":"","exit_code":0,"outcome":"success","session_id":"e9daada5-a11d-43ac-861d-1665b5b81739"}`
	// The result: a success, but for its terminal_reason (--output-format
	// json prints this line alone).
	claudeHookStopped = `{"duration_api_ms":94,"stop_reason":"tool_use","session_id":"e9daada5-a11d-43ac-861d-1665b5b81739","total_cost_usd":0.03,` +
		`"usage":{"input_tokens":5000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":500},"permission_denials":[],` +
		`"terminal_reason":"hook_stopped","is_error":false,"num_turns":6,"subtype":"success","api_error_status":null,"result":"","type":"result"}`
	claudeEndingReason = `looprun ended the run: Same action failed 3 times in a row (threshold: 3, error ad7cbd02): Bash {"command":"sh login_test.sh"}, and the model went on calling tools after it was refused.`
)

// Codex 0.169.0, codex exec --json, which exited with 1 (its stderr, in
// the same output under looprun, ends with a log line, no reason):
const (
	codexStarted     = `{"type":"thread.started","thread_id":"01a218e2-743d-7043-8f3b-a9ad0ff1348a"}` + "\n" + `{"type":"turn.started"}`
	codexFailedTest  = `{"type":"item.completed","item":{"id":"item_4","type":"command_execution","command":"/bin/bash -lc 'sh login_test.sh'","aggregated_output":"--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500\n","exit_code":1,"status":"failed"}}`
	codexCancelled   = `2026-11-26T17:23:44.205211Z ERROR codex_core::tools::router: error=tool call cancelled`
	codexTurnEnded   = `{"type":"turn.completed","usage":{"input_tokens":24000,"cached_input_tokens":18000,"output_tokens":900}}`
	loginTestFailure = "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500"
)

// A session a hook ended is a failed run, whichever agent ran it: its
// error is the hook's reason where the output holds it (Claude Code's
// stream with --include-hook-events), else words that say a hook ended
// it, the same each time, so that the same wall twice is the same error.
// A hook that lets the run go on changes nothing.
func TestSessionEndedByAHookIsAFailedRun(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		exitCode int
		err      string // "" for a run that passed
		reason   string // the hook's own words, when the output has them
	}{
		{"claude stream with hook events", []string{claudeInit, claudeBlockingHook, claudeEndingHook, claudeHookStopped}, 0, claudeEndingReason, claudeEndingReason},
		{"claude stream without", []string{claudeInit, claudeHookStopped}, 0, agent.ClaudeHookEnded, ""},
		{"claude json", []string{claudeHookStopped}, 0, agent.ClaudeHookEnded, ""},
		// The same result with another terminal_reason (this one made up).
		{"claude run a hook did not end", []string{claudeInit, claudeBlockingHook,
			strings.Replace(claudeHookStopped, `"terminal_reason":"hook_stopped"`, `"terminal_reason":"completed"`, 1)}, 0, "", ""},
		{"codex interrupted during its turn", []string{codexStarted, codexFailedTest, codexCancelled}, 1, agent.CodexInterrupted, ""},
		{"codex whose turn ended", []string{codexStarted, codexFailedTest, codexTurnEnded}, 0, loginTestFailure, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{1, 7, 4096} {
				c := streamed(strings.Join(tt.lines, "\n")+"\n", n)
				err := runError(result{exitCode: tt.exitCode}, c.observe(false), time.Minute)
				if tt.err == "" {
					assert.NoError(t, err, "pieces of %d", n)
					assert.False(t, c.run.HookEnded)
					continue
				}
				require.Error(t, err, "pieces of %d", n)
				assert.Equal(t, tt.err, err.Error())
				assert.Equal(t, tt.reason, c.run.HookReason)
			}
		})
	}
}

// FuzzHookEnd: any output, cut anywhere, that says a hook ended the run
// is a failed run with an error to show.
func FuzzHookEnd(f *testing.F) {
	f.Add(strings.Join([]string{claudeInit, claudeBlockingHook, claudeEndingHook, claudeHookStopped}, "\n"), 5)
	f.Add(claudeHookStopped, 4096)
	f.Add(strings.Join([]string{codexStarted, codexFailedTest, codexCancelled}, "\n"), 3)
	f.Fuzz(func(t *testing.T, text string, n int) {
		c := streamed(text, max(1, n%4096))
		r := c.run
		if !r.HookEnded {
			return
		}
		err := runError(result{}, c.observe(false), time.Minute)
		if !r.Failed || err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("a hook's end that is no failure: %+v, %v", r, err)
		}
	})
}
