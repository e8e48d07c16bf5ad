package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hook inputs as Claude Code 2.1.328 sent them to a hook that logged its
// stdin, in -p mode against the fake model (paths shortened).
const (
	realPostToolUse        = `{"session_id":"726e3515-5514-44c7-bd15-a31ab97ff964","transcript_path":"/home/t/.claude/projects/-tmp-p/726e3515-5514-44c7-bd15-a31ab97ff964.jsonl","cwd":"/tmp/p","prompt_id":"c94e5489-5042-4943-8d9c-99abac7a336e","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo hi","description":"Run echo hi"},"tool_response":{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"toolu_fake000001_0","duration_ms":30}`
	realPostToolUseFailure = `{"session_id":"726e3515-5514-44c7-bd15-a31ab97ff964","transcript_path":"/home/t/.claude/projects/-tmp-p/726e3515-5514-44c7-bd15-a31ab97ff964.jsonl","cwd":"/tmp/p","prompt_id":"c94e5489-5042-4943-8d9c-99abac7a336e","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"echo 'some out'; echo bad >&2; exit 3","description":"Run echo 'some out'; echo bad >&2; exit 3"},"tool_use_id":"toolu_fake000002_0","error":"Exit code 3\nsome out\nbad","is_interrupt":false,"duration_ms":11}`
	realStop               = `{"session_id":"376de5f9-6c0b-441b-aabd-473a1e143119","transcript_path":"/home/t/.claude/projects/-tmp-p/376de5f9-6c0b-441b-aabd-473a1e143119.jsonl","cwd":"/tmp/p","prompt_id":"eaf4d801-80ae-4043-af4d-b1002dab925e","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"second","background_tasks":[],"session_crons":[]}`
	realSessionEnd         = `{"session_id":"ff392af7-50c0-494d-9983-c65acc34c070","transcript_path":"/home/t/.claude/projects/-tmp-p/ff392af7-50c0-494d-9983-c65acc34c070.jsonl","cwd":"/tmp/p","prompt_id":"7baf1522-2bd2-420a-a86a-8784e3acd9da","hook_event_name":"SessionEnd","reason":"other"}`
)

func TestClaudeCodeInputIsReadAsItComes(t *testing.T) {
	ev, err := decodeClaude([]byte(realPostToolUse))
	require.NoError(t, err)
	assert.Equal(t, PostToolUse, ev.Name)
	assert.Equal(t, "726e3515-5514-44c7-bd15-a31ab97ff964", ev.SessionID)
	assert.Equal(t, "/tmp/p", ev.Cwd)
	assert.Equal(t, "/home/t/.claude/projects/-tmp-p/726e3515-5514-44c7-bd15-a31ab97ff964.jsonl", ev.TranscriptPath)
	assert.Equal(t, "Bash", ev.Tool)
	assert.JSONEq(t, `{"command":"echo hi","description":"Run echo hi"}`, string(ev.Input))
	assert.Equal(t, "hi\n", Observation(ev.Tool, ev.Response), "Bash's output and error output")

	ev, err = decodeClaude([]byte(realPostToolUseFailure))
	require.NoError(t, err)
	assert.Equal(t, PostToolUseFailure, ev.Name)
	assert.Equal(t, "Exit code 3\nsome out\nbad", ev.Error)
	assert.False(t, ev.Interrupted)

	ev, err = decodeClaude([]byte(realStop))
	require.NoError(t, err)
	assert.Equal(t, Stop, ev.Name)
	assert.Equal(t, "second", ev.LastMessage)
	assert.True(t, ev.StopHookActive)

	ev, err = decodeClaude([]byte(realSessionEnd))
	require.NoError(t, err)
	assert.Equal(t, SessionEnd, ev.Name)
}

func TestClaudeCodeInputThatIsNoEventIsAnError(t *testing.T) {
	for _, in := range []string{``, `not json`, `[]`, `{"session_id":"s"}`, `{"hook_event_name":7}`} {
		_, err := decodeClaude([]byte(in))
		assert.Error(t, err, in)
	}
}

// Each answer in the form Claude Code acts on, as the tests against the
// real binary verify.
func TestAnswersAreWrittenAsClaudeCodeReadsThem(t *testing.T) {
	for _, tc := range []struct {
		event string
		a     Answer
		want  string // "" for no output at all
	}{
		{PreToolUse, Answer{}, ``},
		{PreToolUse, Answer{Deny: "no"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{PreToolUse, Answer{Deny: "no", End: "over"},
			`{"continue":false,"stopReason":"over","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{PostToolUse, Answer{Block: "tripped"}, `{"decision":"block","reason":"tripped"}`},
		{PostToolUseFailure, Answer{Context: "careful"},
			`{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"careful"}}`},
		{PostToolUse, Answer{End: "spent"}, `{"continue":false,"stopReason":"spent"}`},
		{Stop, Answer{Block: "go on", Notice: "turn 2"}, `{"systemMessage":"turn 2","decision":"block","reason":"go on"}`},
		{Stop, Answer{Notice: "done"}, `{"systemMessage":"done"}`},
		{UserPromptSubmit, Answer{Notice: "closed"}, `{"systemMessage":"closed"}`},
	} {
		out, code := encodeClaude(&Event{Name: tc.event}, tc.a)
		assert.Equal(t, 0, code)
		if tc.want == "" {
			assert.Empty(t, out, "%s %+v", tc.event, tc.a)
			continue
		}
		assert.JSONEq(t, tc.want, string(out), "%s %+v", tc.event, tc.a)
	}
}

// Lines of Claude Code 2.1.328's transcript (testdata/claude-transcript.jsonl),
// as it wrote them (cut to the fields that matter, cache tokens added): a
// model's message, a tool call of the same message, and a tool's result.
var realAssistantLine, realToolUseLine, realToolResultLine = transcriptLine(0), transcriptLine(1), transcriptLine(2)

// transcriptLine returns line i of testdata/claude-transcript.jsonl.
func transcriptLine(i int) string {
	data, err := os.ReadFile(filepath.Join("testdata", "claude-transcript.jsonl"))
	if err != nil {
		panic(err)
	}
	return strings.Split(string(data), "\n")[i]
}

func TestTranscriptLineOfAModelMessageTellsItsUsage(t *testing.T) {
	m, ok := claudeMessage([]byte(realAssistantLine))
	require.True(t, ok)
	assert.Equal(t, "msg_fake000001", m.ID)
	assert.Equal(t, loopbreaker.Usage{Model: "claude-opus-5-5", InputTokens: 1500, OutputTokens: 100, CacheReadTokens: 300, CacheWriteTokens: 200}, m.Usage,
		"cache writes and reads count as input, each apart too")
	assert.Empty(t, m.Calls)

	m, ok = claudeMessage([]byte(realToolUseLine))
	require.True(t, ok)
	assert.Equal(t, []string{"toolu_fake000001_1"}, m.Calls, "the line's tool call")

	_, ok = claudeMessage([]byte(realToolResultLine))
	assert.False(t, ok, "a tool's result that mentions the words is no message")
	_, ok = claudeMessage([]byte(`{"type":"assistant","message":{"id":"m"}}`))
	assert.False(t, ok, "a message without usage")
}

func TestSettingsFilesOfClaudeCode(t *testing.T) {
	none := func(string) string { return "" }
	assert.Equal(t, "/p/.claude/settings.json", claudeSettings(ProjectSettings, "/p", "/home/a", none))
	assert.Equal(t, "/p/.claude/settings.local.json", claudeSettings(LocalSettings, "/p", "/home/a", none))
	assert.Equal(t, "/home/a/.claude/settings.json", claudeSettings(UserSettings, "/p", "/home/a", none))
	configDir := func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return "/etc/claude-a"
		}
		return ""
	}
	assert.Equal(t, "/etc/claude-a/settings.json", claudeSettings(UserSettings, "/p", "/home/a", configDir))
}

func FuzzDecodeClaude(f *testing.F) {
	for _, s := range []string{realPostToolUse, realPostToolUseFailure, realStop, realSessionEnd, `{}`, `{"hook_event_name":"X"}`,
		realStopFailure, realPermissionDenied, realPostCompact, realSubagentBash, realSubagentStop} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := decodeClaude(data)
		if err != nil {
			return
		}
		require.NotEmpty(t, ev.Name)
		out, _ := encodeClaude(&ev, Answer{Deny: ev.Error, Block: ev.LastMessage, Context: ev.Tool, End: ev.Cwd})
		if len(out) > 0 {
			require.True(t, json.Valid(out), "%s", out)
		}
	})
}

func FuzzClaudeMessage(f *testing.F) {
	f.Add([]byte(realAssistantLine))
	f.Add([]byte(realToolResultLine))
	f.Add([]byte(realToolUseLine))
	f.Add([]byte(`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"Nothing in src/ yet."}],"usage":{"input_tokens":10,"output_tokens":2}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, ok := claudeMessage(line)
		if ok {
			require.True(t, json.Valid(line), "only a whole JSON line is a message")
		}
		require.True(t, m.Words == "" || strings.TrimSpace(m.Words) != "", "words are words, or none: %q", m.Words)
	})
}
