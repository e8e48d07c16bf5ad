package agent

import (
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subscriber's Claude Code says the usage windows after each response,
// in a rate_limit_event (of the shape 2.1.328 prints against the fake model):
// the run's windows are the last event's, and the event is Claude Code's
// line, which no other reader gets.
func TestAClaudeCodeRunsWindowsAreItsLastRateLimitEvents(t *testing.T) {
	event := func(used string) []byte {
		return []byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1796181210,"rateLimitType":"five_hour","isUsingOverage":false,"unifiedWindows":{"five_hour":{"utilization":` + used + `,"resetsAt":1796181210,"status":"allowed"},"seven_day":{"utilization":0.4,"resetsAt":1796526810,"status":"allowed"}}},"uuid":"5a7c2f4e-1b3d-4e8f-9a6b-2c1d0e9f8a7b","session_id":"726e3515-5514-44c7-bd15-a31ab97ff964"}`)
	}
	out := ClaudeCode.NewOutput()
	assert.True(t, out.Line(event("0.42")))
	assert.True(t, out.Line(event("0.85")))
	assert.True(t, out.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"726e3515-5514-44c7-bd15-a31ab97ff964","total_cost_usd":0.01}`)))
	run := out.Finish(nil, 0)
	require.Len(t, run.Windows, 2)
	assert.Equal(t, loopbreaker.Window{Length: 5 * time.Hour, Used: 85, Reset: time.Unix(1796181210, 0), Source: "Claude Code"}, run.Windows[0])
	assert.Equal(t, loopbreaker.Window{Length: 7 * 24 * time.Hour, Used: 40, Reset: time.Unix(1796526810, 0), Source: "Claude Code"}, run.Windows[1])

	apiKey := ClaudeCode.NewOutput() // on an API key, Claude Code says none
	apiKey.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s"}`))
	assert.Nil(t, apiKey.Finish(nil, 0).Windows)
}
