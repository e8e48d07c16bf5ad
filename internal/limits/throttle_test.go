package limits

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A short rate or capacity throttle is told apart from a usage window, so
// that a caller without a reset time waits the one out for minutes and the
// other for an hour.
func TestThrottlesAreToldFromUsageLimits(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		throttle bool
	}{
		{"Claude Code's usage limit", "You've hit your limit", false},
		{"Claude Code's session limit with a reset", "You've hit your session limit · resets 5pm (Europe/Vilnius)", false},
		{"Claude usage limit reached", "Claude usage limit reached. Your limit will reset at 7pm (Asia/Tokyo).", false},
		{"Claude Code's request rejected", "API Error: Request rejected (429) · this may be a temporary capacity issue", true},
		{"Claude Code's repeated 529", "API Error: Repeated 529 Overloaded errors · check status.claude.com", true},
		{"Claude Code's server throttle", "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited", true},
		{"Anthropic rate_limit_error", `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"x"}}`, true},
		{"Anthropic overloaded_error", `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, true},
		{"OpenAI rate_limit_exceeded", openAIRateLimit, true},
		{"Gemini RESOURCE_EXHAUSTED", geminiExhausted, true},
		{"gRPC ResourceExhausted", "rpc error: code = ResourceExhausted desc = Quota exceeded", true},
		{"Codex usage_limit_reached", `{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}`, false},
		{"a result event with api_error_status 429", `{"type":"result","is_error":true,"api_error_status":429,"result":"API Error"}`, true},
		{"a rejected rate_limit_event", `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","rateLimitType":"five_hour"}}`, false},
		{"a usage limit outranks a throttle, both without a reset", "You've hit your limit\nAPI Error: Request rejected (429)", false},
		{"a usage limit outranks a throttle before it", "API Error: Request rejected (429)\nYou've hit your limit", false},
		{"a day named on a line above a 429 is the work's (a notes folder)", "failed embedding: 5 Daily Notes/2022-11-14-Mon.md\nplugin:smart-connections:721 Error: Request failed, status 429", true},
		{"a day named after a 429 is its window", "Error: Request failed, status 429\nLimit: requests per day", false},
		{"a day named on a 429's own line is its window", "Error: Request failed, status 429 (daily quota)", false},
		{"a day on the 429's line below letters that lower-case shorter", "\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\nDaily quota. Error: Request failed, status 429", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := FromText(tc.in, now)
			require.Equal(t, Wait, l.Kind, l.Why)
			assert.Equal(t, tc.throttle, l.Throttle, l.Why)
		})
	}

	assert.False(t, FromText("Your usage allocation has been disabled by your admin", now).Throttle, "a stop is no throttle")
	assert.False(t, FromText("all tests passed", now).Throttle)
}

// An HTTP 429 or 529 whose body says nothing is a throttle; one whose body
// names a usage limit is what the body says.
func TestHTTPThrottles(t *testing.T) {
	assert.True(t, FromHTTP(http.StatusTooManyRequests, nil, nil, now).Throttle)
	assert.True(t, FromHTTP(529, nil, []byte("upstream overloaded"), now).Throttle)
	assert.True(t, FromHTTP(http.StatusTooManyRequests, nil, []byte(anthropicRateLimit), now).Throttle)
	codex := `{"type":"error","error":{"type":"usage_limit_reached","resets_in_seconds":600}}`
	assert.False(t, FromHTTP(http.StatusTooManyRequests, nil, []byte(codex), now).Throttle)
	assert.False(t, FromHTTP(http.StatusPaymentRequired, nil, nil, now).Throttle, "a stop")
}

func TestHostPatternsMayBeThrottles(t *testing.T) {
	p := Pattern{Match: mustRE(`proxy: slow down`), Kind: Wait, Throttle: true}
	assert.True(t, FromText("proxy: slow down", now, p).Throttle)
	p.Kind = Stop
	assert.False(t, FromText("proxy: slow down", now, p).Throttle, "a stop is no throttle")
}
