package limits

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

const (
	anthropicRateLimit  = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."},"request_id":"req_011"}`
	anthropicOverload   = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	anthropicCredit     = `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	dashScopeLoop       = `{"error":{"code":"invalid_parameter_error","message":"<400> InternalError.Algo.InvalidParameter: Repetitive tool calls detected in the conversation history. The same tool call with identical name and arguments has been repeated across multiple consecutive rounds."}}`
	openAIInvalidPrompt = `{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.","type":"invalid_request_error","param":null,"code":"invalid_prompt"}}`
	openAIRateLimit     = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	openAIQuota         = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	geminiExhausted     = `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`
)

func TestFromHTTP(t *testing.T) {
	cases := []struct {
		name   string
		status int
		h      http.Header
		body   string
		kind   Kind
		reset  string
		why    string
	}{
		{"429 with Retry-After in seconds", 429, header("Retry-After", "30"), anthropicRateLimit,
			Wait, "2026-01-29T16:30:03+02:00", "HTTP 429: This request would exceed your account's rate limit (resets 2026-01-29 16:30 Europe/Vilnius)"},
		{"429 with Retry-After as an HTTP date", 429, header("Retry-After", "Thu, 29 Jan 2026 15:00:00 GMT"), "",
			Wait, "2026-01-29T15:00:00Z", "HTTP 429 Too Many Requests (resets 2026-01-29 15:00 UTC)"},
		{"429 with a Retry-After date already past", 429, header("Retry-After", "Thu, 29 Jan 2026 14:00:00 GMT"), "",
			Wait, "2026-01-29T16:29:33+02:00", ""},
		{"429 with retry-after-ms", 429, header("Retry-After-Ms", "1500"), openAIRateLimit,
			Wait, "2026-01-29T16:29:34+02:00", ""},
		{"429 without headers: the body's time", 429, nil, openAIRateLimit,
			Wait, "2026-01-29T16:29:33+02:00", "HTTP 429: Rate limit reached for gpt-4o in organization (resets 2026-01-29 16:29 Europe/Vilnius)"},
		{"429 with a malformed Retry-After", 429, header("Retry-After", "soon"), "",
			Wait, "", "HTTP 429 Too Many Requests"},
		{"429 insufficient_quota is a stop", 429, header("Retry-After", "20"), openAIQuota,
			Stop, "", "HTTP 429: API error insufficient_quota"},
		{"529 overloaded", 529, header("Retry-After", "10"), anthropicOverload,
			Wait, "2026-01-29T16:29:43+02:00", "HTTP 529: API error overloaded_error (resets 2026-01-29 16:29 Europe/Vilnius)"},
		{"529 without a body", 529, nil, "",
			Wait, "", "HTTP 529 Overloaded"},
		{"Gemini 429", 429, nil, geminiExhausted,
			Wait, "", "HTTP 429: API error RESOURCE_EXHAUSTED"},
		{"400 credit balance", 400, nil, anthropicCredit,
			Stop, "", "HTTP 400: Your credit balance is too low to access the Anthropic API"},
		{"402 payment required", 402, nil, `{"error":{"message":"Insufficient credits"}}`,
			Stop, "", "HTTP 402: Insufficient credits"},
		{"402 payment required, a body of no known words", 402, nil, `{"error":{"message":"Pay up"}}`,
			Stop, "", "HTTP 402 Payment Required"},
		{"Anthropic windows: the exhausted one's reset", 429, header(
			"Retry-After", "5",
			"Anthropic-Ratelimit-Requests-Remaining", "12",
			"Anthropic-Ratelimit-Requests-Reset", "2026-01-29T14:40:00Z",
			"Anthropic-Ratelimit-Tokens-Remaining", "0",
			"Anthropic-Ratelimit-Tokens-Reset", "2026-01-29T14:31:00Z",
			"Anthropic-Ratelimit-Output-Tokens-Remaining", "0",
			"Anthropic-Ratelimit-Output-Tokens-Reset", "2026-01-29T14:30:30Z"), anthropicRateLimit,
			Wait, "2026-01-29T14:31:00Z", ""},
		{"Anthropic subscription window rejected", 429, header(
			"Retry-After", "300",
			"Anthropic-Ratelimit-Unified-Status", "rejected",
			"Anthropic-Ratelimit-Unified-Reset", "1769709600"), anthropicRateLimit,
			Wait, "2026-01-29T20:00:00+02:00", ""},
		{"Anthropic subscription window allowed: Retry-After decides", 429, header(
			"Retry-After", "300",
			"Anthropic-Ratelimit-Unified-Status", "allowed",
			"Anthropic-Ratelimit-Unified-Reset", "1769709600"), anthropicRateLimit,
			Wait, "2026-01-29T16:34:33+02:00", ""},
		{"OpenAI windows", 429, header(
			"X-Ratelimit-Remaining-Requests", "0",
			"X-Ratelimit-Reset-Requests", "6m0s",
			"X-Ratelimit-Remaining-Tokens", "1200",
			"X-Ratelimit-Reset-Tokens", "20m"), openAIRateLimit,
			Wait, "2026-01-29T16:35:33+02:00", ""},
		{"500 is an ordinary failure", 500, header("Retry-After", "5"), `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			None, "", ""},
		{"502 is a brief throttle", 502, nil, "<html>Bad Gateway</html>", Wait, "", "HTTP 502 Bad Gateway"},
		{"503 with Retry-After", 503, header("Retry-After", "30"), "upstream connect error",
			Wait, "2026-01-29T16:30:03+02:00", "HTTP 503 Service Unavailable (resets 2026-01-29 16:30 Europe/Vilnius)"},
		{"503, Gemini's overload", 503, nil, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
			Wait, "", "HTTP 503: The model is overloaded"},
		{"504", 504, nil, "", Wait, "", "HTTP 504 Gateway Timeout"},
		{"a 500 refusing repeated tool calls is a loop", 500, nil, dashScopeLoop, Loop, "", "HTTP 500: Repetitive tool calls detected in the conversation"},
		{"a 400 refusing repeated tool calls is a loop", 400, nil, dashScopeLoop, Loop, "", ""},
		{"a 503 refusing repeated tool calls is a loop", 503, header("Retry-After", "30"), dashScopeLoop, Loop, "", ""},
		{"a 400 refusing the prompt under the usage policy is a stop", 400, nil, openAIInvalidPrompt, Stop, "", ""},
		{"200", 200, nil, `{"id":"msg_01","type":"message"}`, None, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := FromHTTP(tc.status, tc.h, []byte(tc.body), now)
			assert.Equal(t, tc.kind, l.Kind, l.Why)
			got := ""
			if !l.Reset.IsZero() {
				got = l.Reset.Format(time.RFC3339)
			}
			assert.Equal(t, tc.reset, got, "reset")
			if tc.why != "" {
				assert.Equal(t, tc.why, l.Why)
			}
		})
	}
}

// Header values that would overflow a time.Duration, or lie beyond
// MaxAhead, are not believed.
func TestFromHTTPIgnoresAbsurdHeaders(t *testing.T) {
	for _, v := range []string{"99999999999999999999", "1e300", "-5", "NaN", "+Inf"} {
		l := FromHTTP(429, header("Retry-After", v, "Retry-After-Ms", v), nil, now)
		assert.Equal(t, Wait, l.Kind, v)
		assert.True(t, l.Reset.IsZero(), "Retry-After %q gave %v", v, l.Reset)
	}
	l := FromHTTP(429, header("Retry-After", "3100000"), nil, now) // 36 days
	assert.True(t, l.Reset.IsZero(), "a Retry-After beyond MaxAhead gave %v", l.Reset)
}
