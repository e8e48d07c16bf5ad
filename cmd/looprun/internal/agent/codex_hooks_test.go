package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines in the shape of a Codex 0.169.0 rollout, with only the fields the
// hook reads (the tests against the real Codex read whole ones).
const (
	codexUsageLine   = `{"timestamp":"2026-11-26T16:20:01.000Z","type":"token_usage_record","payload":{"response_id":"resp_fake000003","usage":{"input_tokens":60000,"cached_input_tokens":1000,"output_tokens":5000}}}`
	codexFailedLine  = `{"timestamp":"2026-11-26T16:20:02.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_3","type":"command_execution","status":"completed","exit_code":1}}}`
	codexPassedLine  = `{"timestamp":"2026-11-26T16:20:03.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_4","type":"command_execution","status":"completed","exit_code":0}}}`
	codexOutputLine  = `{"timestamp":"2026-11-26T16:20:04.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_5","output":"apply_patch verification failed: Failed to find expected lines"}}`
	codexMessageLine = `{"timestamp":"2026-11-26T16:20:05.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"id":"msg_1","type":"agent_message","text":"Done."}}}`
	codexWindowsLine = `{"timestamp":"2026-11-26T16:20:06.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"output_tokens":20}},"rate_limits":{"limit_id":"codex","primary":{"used_percent":42.5,"window_minutes":300,"resets_at":1796181210}}}}`
)

// The hook reads from a Codex rollout each response's usage, each tool
// call's end and whether it failed, each call's result, and the usage
// windows; nothing else (a token_count's running totals are not usage).
func TestCodexRolloutLinesTheHookReads(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Message
		ok   bool
	}{
		{"a response's usage", codexUsageLine, Message{ID: "resp_fake000003", Usage: loopbreaker.Usage{InputTokens: 60000, OutputTokens: 5000, CacheReadTokens: 1000}}, true},
		{"a command that failed", codexFailedLine, Message{Calls: []string{"call_3"}, Failed: []string{"call_3"}}, true},
		{"a command that passed", codexPassedLine, Message{Calls: []string{"call_4"}}, true},
		{"a call's result", codexOutputLine, Message{Result: &CallResult{ID: "call_5", Text: "apply_patch verification failed: Failed to find expected lines"}}, true},
		{"the usage windows", codexWindowsLine, Message{Windows: []loopbreaker.Window{
			{Length: 300 * time.Minute, Used: 42.5, Reset: time.Unix(1796181210, 0), Source: "Codex"}}}, true},
		{"the agent's message", codexMessageLine, Message{}, false},
		{"not JSON", `"item_completed" at last`, Message{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := codexMessage([]byte(tt.line))
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// Any line is read without a panic; only a whole JSON line is a message,
// and its counts are never negative.
func FuzzCodexMessage(f *testing.F) {
	for _, l := range []string{codexUsageLine, codexFailedLine, codexPassedLine, codexOutputLine, codexMessageLine, codexWindowsLine,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, ok := codexMessage(line)
		if !ok {
			return
		}
		require.True(t, json.Valid(line), "only a whole JSON line is a message")
		u := m.Usage
		require.True(t, u.InputTokens >= 0 && u.OutputTokens >= 0 && u.CacheReadTokens >= 0 && u.CacheWriteTokens >= 0, "%+v", u)
	})
}
