package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines Gemini CLI 0.61.0 printed against the fake Gemini API, with
// --output-format stream-json (timestamps kept, ids shortened).
const (
	geminiInit       = `{"type":"init","timestamp":"2026-12-01T22:49:00.196Z","session_id":"fa1424ab-bd80-46cc-bdce-2336ff250af1","model":"gemini-2.5-flash"}`
	geminiUser       = `{"type":"message","timestamp":"2026-12-01T22:49:00.197Z","role":"user","content":"run the failing command"}`
	geminiToolUse    = `{"type":"tool_use","timestamp":"2026-12-01T22:49:00.357Z","tool_name":"run_shell_command","tool_id":"run_shell_command__1","parameters":{"command":"sh login_test.sh"}}`
	geminiToolResult = `{"type":"tool_result","timestamp":"2026-12-01T22:49:00.550Z","tool_id":"run_shell_command__1","status":"success","output":"--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500"}`
	geminiSay1       = `{"type":"message","timestamp":"2026-12-01T22:49:00.597Z","role":"assistant","content":"All done.\nEXIT_SIGNAL: t","delta":true}`
	geminiSay2       = `{"type":"message","timestamp":"2026-12-01T22:49:00.599Z","role":"assistant","content":"rue","delta":true}`
	geminiResult     = `{"type":"result","timestamp":"2026-12-01T23:00:50.729Z","status":"success","stats":{"total_tokens":3100,"input_tokens":2800,"output_tokens":200,"cached":800,"input":2000,"duration_ms":1288,"tool_calls":1,"models":{"gemini-2.5-flash":{"total_tokens":3100,"input_tokens":2800,"output_tokens":200,"cached":800,"input":2000}}}}`
	geminiDaily      = `{"type":"result","timestamp":"2026-12-01T23:37:25.636Z","status":"error","error":{"type":"unknown","message":"[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later."},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}`
	geminiStopped    = `{"type":"tool_result","timestamp":"2026-12-02T00:10:00.496Z","tool_id":"run_shell_command__1","status":"error","output":"Agent execution stopped by hook: looprun ended the run: Same action failed 3 times in a row.","error":{"type":"stop_execution","message":"Agent execution stopped by hook: looprun ended the run: Same action failed 3 times in a row."}}`
	geminiRefused    = `{"type":"tool_result","timestamp":"2026-12-01T22:58:18.211Z","tool_id":"run_shell_command__1","status":"error","output":"Tool execution blocked: R.","error":{"type":"policy_violation","message":"Tool execution blocked: R."}}`
)

// geminiTranscript writes a transcript of session under home in which the
// shell command of tool id exited with code, and returns home.
func geminiTranscript(t *testing.T, session, id string, code int) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini", "tmp", "p", "chats")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	exit := ""
	if code != 0 {
		exit = `\nExit Code: ` + strconv.Itoa(code)
	}
	lines := `{"sessionId":"` + session + `","projectHash":"28d6","startTime":"2026-12-01T22:49:00.189Z","kind":"main"}` + "\n" +
		`{"id":"376141ac","timestamp":"2026-12-01T22:49:00.555Z","type":"user","content":[{"functionResponse":{"id":"` + id +
		`","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: --- FAIL: TestLogin` + exit + `\nProcess Group PGID: 15409\n</untrusted_context>"}}}]}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "session-2026-12-01T22-49-"+session[:8]+".jsonl"), []byte(lines), 0o600))
	return home
}

// readGemini reads lines as Gemini CLI's output, its transcript under
// home, and returns the run.
func readGemini(home string, lines ...string) Run {
	g := &geminiOutput{home: home}
	for _, l := range strings.Split(strings.Join(lines, "\n"), "\n") {
		g.Line([]byte(l))
	}
	return g.Finish(nil, 0)
}

// What Gemini CLI's stream-json tells looprun of a run, line by line.
func TestGeminiStreamTellsTheRun(t *testing.T) {
	const session = "fa1424ab-bd80-46cc-bdce-2336ff250af1"
	failed := geminiTranscript(t, session, "run_shell_command__1", 1)
	passed := geminiTranscript(t, session, "run_shell_command__1", 0)
	for _, tc := range []struct {
		name  string
		home  string
		lines []string
		check func(t *testing.T, r Run)
	}{
		{"a session whose last command exited 1", failed, []string{geminiInit, geminiUser, geminiToolUse, geminiToolResult, geminiSay1, geminiSay2, geminiResult}, func(t *testing.T, r Run) {
			assert.True(t, r.Seen && r.Told)
			assert.True(t, r.Failed, "the transcript says it exited 1, the stream success")
			assert.Equal(t, "--- FAIL: TestLogin (0.00s)\n    login_test.go:12: want 200, got 500", r.Err)
			assert.Equal(t, session, r.Session)
			assert.Equal(t, "All done.\nEXIT_SIGNAL: true", r.Words, "the last message, its pieces joined")
			assert.Equal(t, loopbreaker.Usage{Model: "gemini-2.5-flash", InputTokens: 2800, CacheReadTokens: 800, OutputTokens: 300}, r.Usage,
				"the thinking is the rest of the total, and counts as output")
			assert.True(t, r.HasUsage)
			assert.False(t, r.HasCost, "no cost: the breaker prices the tokens")
		}},
		{"the same, the command passed", passed, []string{geminiInit, geminiToolUse, geminiToolResult, geminiResult}, func(t *testing.T, r Run) {
			assert.False(t, r.Failed)
			assert.Empty(t, r.Noticed, "a command that passed got past no error")
		}},
		{"no transcript to tell the exit code", t.TempDir(), []string{geminiInit, geminiToolUse, geminiToolResult, geminiResult}, func(t *testing.T, r Run) {
			assert.False(t, r.Failed)
		}},
		{"the words are those after the last tool call", failed, []string{geminiInit, geminiSay1, geminiToolUse, geminiRefused, geminiResult}, func(t *testing.T, r Run) {
			assert.Empty(t, r.Words)
			assert.Equal(t, 1, r.Denials, "the refused call")
			assert.False(t, r.Failed, "a refused command did not run")
		}},
		{"a quota it gave up on", failed, []string{geminiInit, geminiUser, geminiDaily}, func(t *testing.T, r Run) {
			assert.True(t, r.Failed)
			assert.Contains(t, r.Err, "You have exhausted your daily quota on this model.")
			assert.Equal(t, r.Err, r.LimitText)
		}},
		{"a session a hook ended", failed, []string{geminiInit, geminiToolUse, geminiStopped, geminiResult}, func(t *testing.T, r Run) {
			assert.True(t, r.Failed && r.HookEnded)
			assert.Equal(t, "looprun ended the run: Same action failed 3 times in a row.", r.HookReason)
			assert.Equal(t, r.HookReason, r.Err)
		}},
		{"a stream cut before its result", failed, []string{geminiInit, geminiUser}, func(t *testing.T, r Run) {
			assert.True(t, r.Failed)
			assert.Equal(t, "gemini: the output ended before its result event: the run was cut short", r.Err)
		}},
		{"another command's output", failed, []string{"ok  \texample.com/app", `{"type":"result","subtype":"success","is_error":false}`}, func(t *testing.T, r Run) {
			assert.False(t, r.Seen, "Claude Code's result is no Gemini CLI's")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, readGemini(tc.home, tc.lines...)) })
	}
}

// The json format: one object over lines, on stdout with the response
// and the stats, or on stderr after Gemini CLI's report, with the error.
func TestGeminiJSONObjectTellsTheRun(t *testing.T) {
	ok := "{\n  \"session_id\": \"f0afb8e5-82ff-4e0e-bc76-a05d34cae0e5\",\n  \"response\": \"All done.\",\n  \"stats\": {\n    \"models\": {\n      \"gemini-2.5-flash\": {\n" +
		"        \"api\": {\"totalRequests\": 2},\n        \"tokens\": {\"input\": 2000, \"prompt\": 2800, \"candidates\": 200, \"total\": 3100, \"cached\": 800, \"thoughts\": 100, \"tool\": 0}\n      }\n    }\n  }\n}"
	r := readGemini("", ok)
	assert.True(t, r.Seen && !r.Failed)
	assert.Equal(t, "f0afb8e5-82ff-4e0e-bc76-a05d34cae0e5", r.Session)
	assert.Equal(t, "All done.", r.Words)
	assert.Equal(t, loopbreaker.Usage{Model: "gemini-2.5-flash", InputTokens: 2800, CacheReadTokens: 800, OutputTokens: 300}, r.Usage)

	failed := "Error when talking to Gemini API Full report available at: /tmp/gemini-client-error.json TerminalQuotaError: You have exhausted your daily quota on this model.\n" +
		"  cause: {\n    code: 429,\n  },\n  status: 429\n}\n" +
		"{\n  \"session_id\": \"626df2c4-67d3-4a21-8870-9646c021c65d\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"You have exhausted your daily quota on this model.\",\n    \"code\": 429\n  }\n}"
	r = readGemini("", failed)
	assert.True(t, r.Seen && r.Failed)
	assert.Equal(t, "You have exhausted your daily quota on this model.", r.Err)
	assert.Equal(t, "626df2c4-67d3-4a21-8870-9646c021c65d", r.Session)

	assert.False(t, readGemini("", "{\n  \"a\": 1\n}").Seen, "an object that is not Gemini CLI's")
}

// Hook inputs as Gemini CLI 0.61.0 sent them to a hook that logged its
// stdin (paths shortened).
const (
	geminiBeforeTool = `{"session_id":"6b88029d","transcript_path":"/h/.gemini/tmp/p/chats/session-2026-12-01T22-57-6b88029d.jsonl","cwd":"/tmp/p","hook_event_name":"BeforeTool","timestamp":"2026-12-01T22:57:18.043Z","tool_name":"run_shell_command","tool_input":{"command":"echo hi; exit 1"}}`
	geminiAfterTool  = `{"session_id":"6b88029d","transcript_path":"/h/t.jsonl","cwd":"/tmp/p","hook_event_name":"AfterTool","timestamp":"2026-12-01T22:57:18.470Z","tool_name":"run_shell_command","tool_input":{"command":"echo hi; exit 1"},"tool_response":{"llmContent":"<untrusted_context>\nOutput: hi\nExit Code: 1\nProcess Group PGID: 3385\n</untrusted_context>","returnDisplay":"hi"}}`
	geminiAfterOK    = `{"session_id":"6b88029d","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"echo ok"},"tool_response":{"llmContent":"<untrusted_context>\nOutput: ok\nProcess Group PGID: 15201\n</untrusted_context>","returnDisplay":"ok"}}`
	geminiAfterError = `{"session_id":"6b88029d","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"file_path":"nope.txt"},"tool_response":{"llmContent":"Could not read file because no file was found at the specified path.","returnDisplay":"File not found.","error":{"message":"File not found: /tmp/p/nope.txt","type":"file_not_found"}}}`
	geminiAfterAgent = `{"session_id":"6b88029d","hook_event_name":"AfterAgent","prompt":"x","prompt_response":"All done.","stop_hook_active":false}`
)

// Gemini CLI's hook input is read in looprun's words: an AfterTool whose
// command exited non-zero, or whose tool failed, is a failure, and a
// shell command's output is its text without the process group's id.
func TestGeminiHookInputIsReadInLooprunsWords(t *testing.T) {
	ev, err := decodeGemini([]byte(geminiBeforeTool))
	require.NoError(t, err)
	assert.Equal(t, PreToolUse, ev.Name)
	assert.Equal(t, "6b88029d", ev.SessionID)
	assert.Equal(t, "run_shell_command", ev.Tool)
	assert.JSONEq(t, `{"command":"echo hi; exit 1"}`, string(ev.Input))
	assert.Equal(t, "/tmp/p", ev.Cwd)

	ev, err = decodeGemini([]byte(geminiAfterTool))
	require.NoError(t, err)
	assert.Equal(t, PostToolUseFailure, ev.Name)
	assert.Equal(t, "Output: hi\nExit Code: 1", ev.Error)

	ev, err = decodeGemini([]byte(geminiAfterOK))
	require.NoError(t, err)
	assert.Equal(t, PostToolUse, ev.Name)
	assert.Equal(t, "Output: ok", Observation(ev.Tool, ev.Response), "the same each call")

	ev, err = decodeGemini([]byte(geminiAfterError))
	require.NoError(t, err)
	assert.Equal(t, PostToolUseFailure, ev.Name)
	assert.Equal(t, "File not found: /tmp/p/nope.txt", ev.Error)

	ev, err = decodeGemini([]byte(geminiAfterAgent))
	require.NoError(t, err)
	assert.Equal(t, Stop, ev.Name)
	assert.Equal(t, "All done.", ev.LastMessage)

	for _, in := range []string{``, `[]`, `{"session_id":"s"}`} {
		_, err := decodeGemini([]byte(in))
		assert.Error(t, err, in)
	}
	assert.Equal(t, PreToolUse, Gemini.Hooks.Word("BeforeTool"))
	assert.Equal(t, "AfterTool", Gemini.Hooks.Own(PostToolUseFailure))
	assert.Equal(t, []string{"BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd"}, Gemini.Hooks.Installed(false))
}

// Each answer in the form Gemini CLI acts on, as the tests against the
// real program verify.
func TestAnswersAreWrittenAsGeminiCLIReadsThem(t *testing.T) {
	for _, tc := range []struct {
		event string
		a     Answer
		want  string
	}{
		{PreToolUse, Answer{}, ``},
		{PreToolUse, Answer{Deny: "R"}, `{"decision":"deny","reason":"R"}`},
		{PreToolUse, Answer{Deny: "R", End: "E"}, `{"continue":false,"stopReason":"E","decision":"deny","reason":"R"}`},
		{PostToolUseFailure, Answer{Block: "B"}, `{"decision":"deny","reason":"B"}`},
		{PostToolUse, Answer{Block: "B", Context: "C"}, `{"decision":"deny","reason":"B\n\nC"}`},
		{PostToolUse, Answer{Context: "C"}, `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"C"}}`},
		{PostToolUse, Answer{End: "E"}, `{"continue":false,"stopReason":"E"}`},
		{Stop, Answer{Block: "the prompt", Notice: "turn 2"}, `{"systemMessage":"turn 2","decision":"deny","reason":"the prompt"}`},
		{UserPromptSubmit, Answer{Notice: "closed"}, `{"systemMessage":"closed"}`},
	} {
		out, code := encodeGemini(&Event{Name: tc.event}, tc.a)
		assert.Equal(t, 0, code)
		if tc.want == "" {
			assert.Empty(t, out)
			continue
		}
		assert.JSONEq(t, tc.want, string(out), "%s %+v", tc.event, tc.a)
	}
}

// A line of Gemini CLI's transcript for a model's message tells its
// usage: its input with the cached tokens, its output with the thinking.
func TestGeminiTranscriptLineTellsAMessagesUsage(t *testing.T) {
	m, ok := geminiMessage([]byte(`{"id":"8f71c613","timestamp":"2026-12-01T23:00:55.254Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":1400,"output":100,"cached":400,"thoughts":50,"tool":0,"total":1550},"model":"gemini-2.5-flash"}`))
	require.True(t, ok)
	assert.Equal(t, Message{ID: "8f71c613", Usage: loopbreaker.Usage{Model: "gemini-2.5-flash", InputTokens: 1400, CacheReadTokens: 400, OutputTokens: 150}}, m)
	_, ok = geminiMessage([]byte(`{"id":"1","type":"user","content":[{"text":"gemini \"tokens\""}]}`))
	assert.False(t, ok)
	assert.Equal(t, "/p/.gemini/settings.json", geminiSettings(ProjectSettings, "/p", "/h", func(string) string { return "" }))
	assert.Equal(t, "/g/.gemini/settings.json", geminiSettings(UserSettings, "/p", "/h", func(string) string { return "/g" }))
	assert.Empty(t, geminiSettings(LocalSettings, "/p", "/h", func(string) string { return "" }))
}

// FuzzGeminiOutput: any output is read without a panic; the usage is
// never negative, and a failed run always says why.
func FuzzGeminiOutput(f *testing.F) {
	f.Add(strings.Join([]string{geminiInit, geminiToolUse, geminiToolResult, geminiSay1, geminiResult}, "\n"))
	f.Add(strings.Join([]string{geminiInit, geminiStopped, geminiDaily}, "\n"))
	f.Add("{\n\"session_id\":\"s\",\n\"error\":{}\n}")
	f.Fuzz(func(t *testing.T, text string) {
		r := readGemini("", text)
		u := r.Usage
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 {
			t.Fatalf("%+v", r)
		}
		if r.Failed && strings.TrimSpace(r.Err) == "" {
			t.Fatalf("a failed run that says no error: %+v", r)
		}
	})
}
