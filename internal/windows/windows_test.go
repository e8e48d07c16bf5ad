package windows

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The resets of the lines below, as Claude Code 2.1.328 and Codex 0.169.0
// wrote them against the fake model APIs.
var (
	reset5h = time.Unix(1796181210, 0)
	reset7d = time.Unix(1796267610, 0)
)

// The headers of a subscription's response, as Claude Code reads them and
// as the Codex backend sends its own.
func TestFromHeader(t *testing.T) {
	cases := []struct {
		name string
		h    http.Header
		want []loopbreaker.Window
	}{
		{"Anthropic's 5-hour and weekly windows", http.Header{
			"Anthropic-Ratelimit-Unified-Status":               {"allowed"},
			"Anthropic-Ratelimit-Unified-Representative-Claim": {"five_hour"},
			"Anthropic-Ratelimit-Unified-5h-Utilization":       {"0.42"},
			"Anthropic-Ratelimit-Unified-5h-Reset":             {"1796181210"},
			"Anthropic-Ratelimit-Unified-7d-Utilization":       {"0.91"},
			"Anthropic-Ratelimit-Unified-7d-Reset":             {"1796267610"},
		}, []loopbreaker.Window{
			{Length: FiveHours, Used: 42, Reset: reset5h, Source: "api.anthropic.com"},
			{Length: Week, Used: 91, Reset: reset7d, Source: "api.anthropic.com"},
		}},
		{"a 429 at the limit", http.Header{
			"Anthropic-Ratelimit-Unified-Status":         {"rejected"},
			"Anthropic-Ratelimit-Unified-5h-Utilization": {"1.0"},
			"Anthropic-Ratelimit-Unified-5h-Reset":       {"1796181210"},
		}, []loopbreaker.Window{{Length: FiveHours, Used: 100, Reset: reset5h, Source: "api.anthropic.com"}}},
		{"a reset in RFC 3339", http.Header{
			"Anthropic-Ratelimit-Unified-5h-Utilization": {" 0.5 "},
			"Anthropic-Ratelimit-Unified-5h-Reset":       {"2026-12-02T03:13:30Z"},
		}, []loopbreaker.Window{{Length: FiveHours, Used: 50, Reset: time.Date(2026, 12, 2, 3, 13, 30, 0, time.UTC), Source: "api.anthropic.com"}}},
		{"no reset", http.Header{"Anthropic-Ratelimit-Unified-7d-Utilization": {"0.3"}},
			[]loopbreaker.Window{{Length: Week, Used: 30, Source: "api.anthropic.com"}}},
		{"a reset that is no time", http.Header{
			"Anthropic-Ratelimit-Unified-7d-Utilization": {"0.3"},
			"Anthropic-Ratelimit-Unified-7d-Reset":       {"soon"},
		}, []loopbreaker.Window{{Length: Week, Used: 30, Source: "api.anthropic.com"}}},
		{"the Codex backend's windows", http.Header{
			"X-Codex-Primary-Used-Percent":     {"42.5"},
			"X-Codex-Primary-Window-Minutes":   {"300"},
			"X-Codex-Primary-Reset-At":         {"1796181210"},
			"X-Codex-Secondary-Used-Percent":   {"91"},
			"X-Codex-Secondary-Window-Minutes": {"10080"},
			"X-Codex-Secondary-Reset-At":       {"1796267610"},
		}, []loopbreaker.Window{
			{Length: FiveHours, Used: 42.5, Reset: reset5h, Source: "api.anthropic.com"},
			{Length: Week, Used: 91, Reset: reset7d, Source: "api.anthropic.com"},
		}},
		{"a length too long for a time.Duration is no length", http.Header{
			"X-Codex-Primary-Used-Percent":   {"10"},
			"X-Codex-Primary-Window-Minutes": {"2147483647"},
		}, []loopbreaker.Window{{Used: 10, Source: "api.anthropic.com"}}},
		{"a status without a share is no window", http.Header{
			"Anthropic-Ratelimit-Unified-Status":   {"rejected"},
			"Anthropic-Ratelimit-Unified-5h-Reset": {"1796181210"},
		}, nil},
		{"shares that are no shares", http.Header{
			"Anthropic-Ratelimit-Unified-5h-Utilization": {"-0.1"},
			"Anthropic-Ratelimit-Unified-7d-Utilization": {"NaN"},
			"X-Codex-Primary-Used-Percent":               {"+Inf"},
			"X-Codex-Secondary-Used-Percent":             {"lots"},
		}, nil},
		{"the standard rate-limit headers are no window", http.Header{
			"Anthropic-Ratelimit-Requests-Remaining": {"49"},
			"X-Ratelimit-Remaining-Tokens":           {"29873"},
		}, nil},
		{"no headers", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, FromHeader(tc.h, "api.anthropic.com"))
		})
	}
}

// Claude Code's rate_limit_event, as 2.1.328 prints it for a subscriber
// (CLAUDE_CODE_OAUTH_TOKEN), and the older shape without unifiedWindows.
func TestFromClaudeCode(t *testing.T) {
	cases := []struct {
		name, line string
		want       []loopbreaker.Window
	}{
		{"allowed, both windows",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1796181210,"rateLimitType":"five_hour","isUsingOverage":false,"unifiedWindows":{"five_hour":{"utilization":0.42,"resetsAt":1796181210,"status":"allowed"},"seven_day":{"utilization":0.91,"resetsAt":1796267610,"status":"allowed"}}},"uuid":"1dd3f8e7","session_id":"a1381995"}`,
			[]loopbreaker.Window{
				{Length: FiveHours, Used: 42, Reset: reset5h, Source: ClaudeCode},
				{Length: Week, Used: 91, Reset: reset7d, Source: ClaudeCode},
			}},
		{"a warning for the week",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796267610,"rateLimitType":"seven_day","utilization":0.91,"isUsingOverage":false,"surpassedThreshold":0.9,"unifiedWindows":{"five_hour":{"utilization":0.42,"resetsAt":1796181210,"status":"allowed"},"seven_day":{"utilization":0.91,"resetsAt":1796267610,"status":"allowed_warning","surpassedThreshold":0.9}}},"uuid":"55f6cd1a","session_id":"0a76015a"}`,
			[]loopbreaker.Window{
				{Length: FiveHours, Used: 42, Reset: reset5h, Source: ClaudeCode},
				{Length: Week, Used: 91, Reset: reset7d, Source: ClaudeCode},
			}},
		{"no unifiedWindows: the event's own type",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1769709600,"rateLimitType":"five_hour","utilization":0.93,"isUsingOverage":false},"session_id":"5b0c7e2a"}`,
			[]loopbreaker.Window{{Length: FiveHours, Used: 93, Reset: time.Unix(1769709600, 0), Source: ClaudeCode}}},
		{"a rejection without a share",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1769709600,"rateLimitType":"five_hour","isUsingOverage":false}}`, nil},
		{"a type with no window of ours",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","rateLimitType":"overage","utilization":0.5}}`, nil},
		{"a tool result that quotes one",
			`{"type":"user","message":{"content":[{"type":"tool_result","content":"{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"utilization\":0.99,\"rateLimitType\":\"five_hour\"}}"}]}}`, nil},
		{"an assistant's text", `{"type":"assistant","message":{"content":[{"type":"text","text":"rate_limit_event"}]}}`, nil},
		{"a field of another type", `{"type":"rate_limit_event","rate_limit_info":{"unifiedWindows":{"five_hour":{"utilization":"0.5"}}}}`, nil},
		{"plain text", `rate_limit_event`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, ok := FromClaudeCode([]byte(tc.line))
			assert.Equal(t, tc.want, ws)
			assert.Equal(t, tc.want != nil, ok)
		})
	}
}

// Codex's token_count event in its rollout, as 0.169.0 writes it from the
// x-codex headers, and as older releases did (resets_in_seconds).
func TestFromCodex(t *testing.T) {
	cases := []struct {
		name, line string
		want       []loopbreaker.Window
	}{
		{"both windows",
			`{"timestamp":"2026-12-02T00:13:47.876Z","ordinal":12,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100,"total_tokens":1100},"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":42.5,"window_minutes":300,"resets_at":1796181210},"secondary":{"used_percent":91.0,"window_minutes":10080,"resets_at":1796267610},"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}`,
			[]loopbreaker.Window{
				{Length: FiveHours, Used: 42.5, Reset: reset5h, Source: Codex},
				{Length: Week, Used: 91, Reset: reset7d, Source: Codex},
			}},
		{"resets in seconds, from the line's time",
			`{"timestamp":"2025-11-18T21:55:53.328Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":7.0,"window_minutes":300,"resets_in_seconds":600}}}}`,
			[]loopbreaker.Window{{Length: FiveHours, Used: 7, Reset: time.Date(2025, 11, 18, 22, 5, 53, 328e6, time.UTC), Source: Codex}}},
		{"no rate limits", `{"timestamp":"2026-12-02T00:13:47.876Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":null}}`, nil},
		{"a length and a wait too long for a time.Duration, on a line stamped in year 1",
			`{"timestamp":"0001-01-01T00:00:01Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":7,"window_minutes":2147483647,"resets_in_seconds":9223372036}}}}`,
			[]loopbreaker.Window{{Used: 7, Source: Codex}}},
		{"a wait that lands before 1970",
			`{"timestamp":"0001-01-01T00:00:01Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":7,"resets_in_seconds":60}}}}`,
			[]loopbreaker.Window{{Used: 7, Source: Codex}}},
		{"a window without a share", `{"type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"window_minutes":300}}}}`, nil},
		{"a response item that quotes one",
			`{"type":"response_item","payload":{"type":"function_call_output","output":"\"token_count\" \"rate_limits\""}}`, nil},
		{"no JSON", `"token_count" "rate_limits"`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, ok := FromCodex([]byte(tc.line))
			assert.Equal(t, tc.want, ws)
			assert.Equal(t, tc.want != nil, ok)
		})
	}
}

// checkWindows holds what every window read must be: a share that is a
// number from 0 on, a length and a reset that are not negative, the
// source given.
func checkWindows(t *testing.T, ws []loopbreaker.Window, source string) {
	t.Helper()
	for _, w := range ws {
		require.False(t, math.IsNaN(w.Used) || math.IsInf(w.Used, 0) || w.Used < 0, "%v", w.Used)
		require.GreaterOrEqual(t, w.Length, time.Duration(0))
		require.Equal(t, source, w.Source)
		if !w.Reset.IsZero() {
			require.True(t, w.Reset.After(time.Unix(0, 0)), "%s", w.Reset)
		}
	}
}

func FuzzFromHeader(f *testing.F) {
	f.Add("0.42", "1796181210", "91", "10080", "1796267610")
	f.Add("1.0", "2026-12-02T03:13:30Z", "NaN", "-1", "9999999999999")
	f.Add("", "", "1e308", "300", "1e-9")
	f.Add("0.5", "1796181210", "50", "2147483647", "1796267610") // minutes past a time.Duration
	f.Fuzz(func(t *testing.T, util, reset, used, minutes, resetAt string) {
		h := http.Header{
			"Anthropic-Ratelimit-Unified-5h-Utilization": {util},
			"Anthropic-Ratelimit-Unified-5h-Reset":       {reset},
			"X-Codex-Primary-Used-Percent":               {used},
			"X-Codex-Primary-Window-Minutes":             {minutes},
			"X-Codex-Primary-Reset-At":                   {resetAt},
		}
		ws := FromHeader(h, "host")
		require.LessOrEqual(t, len(ws), 2)
		checkWindows(t, ws, "host")
	})
}

func FuzzFromClaudeCode(f *testing.F) {
	f.Add(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","unifiedWindows":{"five_hour":{"utilization":0.42,"resetsAt":1796181210},"seven_day":{"utilization":0.91,"resetsAt":1796267610}}}}`)
	f.Add(`{"type":"rate_limit_event","rate_limit_info":{"rateLimitType":"seven_day","utilization":1e308,"resetsAt":-5}}`)
	f.Add(`{"type":"rate_limit_event","rate_limit_info":null}`)
	f.Fuzz(func(t *testing.T, line string) {
		ws, ok := FromClaudeCode([]byte(line))
		require.Equal(t, ok, len(ws) > 0)
		require.LessOrEqual(t, len(ws), 2)
		checkWindows(t, ws, ClaudeCode)
	})
}

func FuzzFromCodex(f *testing.F) {
	f.Add(`{"timestamp":"2026-12-02T00:13:47.876Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":42.5,"window_minutes":300,"resets_at":1796181210},"secondary":{"used_percent":91.0,"window_minutes":10080,"resets_at":1796267610}}}}`)
	f.Add(`{"timestamp":"2025-11-18T21:55:53Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":7,"window_minutes":1e300,"resets_in_seconds":1e300}}}}`)
	f.Add(`{"timestamp":"0001-01-01T00:00:01Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":7,"window_minutes":2147483647,"resets_in_seconds":9223372036}}}}`)
	f.Fuzz(func(t *testing.T, line string) {
		ws, ok := FromCodex([]byte(line))
		require.Equal(t, ok, len(ws) > 0)
		require.LessOrEqual(t, len(ws), 2)
		checkWindows(t, ws, Codex)
	})
}
