package limits

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A limit message counts where it leads its line: after decoration, a
// label that ends in a colon, or the opening quote of a JSON message
// field; not where prose or a log quotes it.
func TestAMessageCountsWhereItLeadsItsLine(t *testing.T) {
	runTextCases(t, []textCase{
		{"after a debug log's prefix", "[DEBUG] Output: You've hit your limit · resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"in a subagent's failure line", `⏺ Agent "Build system" failed: Agent terminated early due to an API error: API Error: 529 Overloaded. This is a server-side issue`, Wait, ""},
		{"after a label and a status", "API Error: 400 This organization has been disabled.", Stop, ""},
		{"in a JSON message field", `{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 32000 tokens, but can only afford 27342."}}`, Stop, ""},
		{"after a notice's sign", "ℹ⚡ You have reached your daily gemini-2.5-pro quota limit.", Wait, ""},
		{"quoted by a log", `[26-02-02 15:15:18] error: detected "You've hit your limit" in claude output`, None, ""},
		{"quoted by prose after a colon", `It appears you've encountered the message: "🖐 You've hit your usage limit. Upgrade to Pro"`, None, ""},
		{"after a test's source location", "integration_test.go:173: Rate limit exceeded. Please try again later.", None, ""},
		{"mid-sentence", "Cannot create shell session: session limit reached and all 0 existing sessions have active commands", None, ""},
	})
}

// A generic sign of a limit (a 429, "rate limit exceeded", an error code)
// gives way to the words of a look-alike in the same message.
func TestGenericSignsGiveWayToLookalikes(t *testing.T) {
	runTextCases(t, []textCase{
		{"a request larger than the per-minute budget", `RateLimitError: Error code: 429 - {'error': {'message': 'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 30601.', 'type': 'tokens', 'param': None, 'code': 'rate_limit_exceeded'}}`, None, ""},
		{"npm's registry", "npm ERR! code E429\nnpm ERR! 429 Too Many Requests - GET https://registry.npmjs.org/aws4", None, ""},
		{"a documented error code", "| 429 - You exceeded your current quota, please check your plan and billing details | Cause: You have run out of credits. Solution: Buy more credits. |", None, ""},
		{"an error code named in prose", `An Anthropic 529 response with "type": "overloaded_error" means the API is short of capacity.`, None, ""},
		{"the same code in an error body", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Wait, ""},
		{"a strong message beside a look-alike's words", "You've hit your limit · resets 5pm (Europe/Vilnius)\nprompt is too long: 210883 tokens > 199999 maximum", Wait, "2026-01-29T17:00:00+02:00"},
	})
}

// A throttle's quota decides how long it lasts: a day's is a usage window,
// a quota of zero never lifts.
func TestAQuotasWindowDecidesItsKind(t *testing.T) {
	daily := FromText(`429 {"error":{"message":"Rate limit exceeded: free-models-per-day-high-balance.","type":"rate_limit_error","code":"429"}}`, now)
	require.Equal(t, Wait, daily.Kind)
	assert.False(t, daily.Throttle, "a quota of a day: %s", daily.Why)

	minute := FromText(`google.api_core.exceptions.ResourceExhausted: 429 Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model with base model: gemini-pro.`, now)
	require.Equal(t, Wait, minute.Kind)
	assert.True(t, minute.Throttle, "a quota of a minute: %s", minute.Why)

	zero := FromText(`{"error":{"message":"* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-3.1-pro\nPlease retry in 11.6s.","status":"RESOURCE_EXHAUSTED"}}`, now)
	assert.Equal(t, Stop, zero.Kind, "a quota of zero: %s", zero.Why)
}

// A client's own retry ("Retrying in 4 seconds") stands for the reset of
// a throttle, never of a usage window: a day's quota does not lift in 26
// seconds.
func TestAClientsRetryResetsOnlyAThrottle(t *testing.T) {
	throttle := FromText(`API Error (529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}) · Retrying in 4 seconds… (attempt 4/10)`, now)
	require.Equal(t, Wait, throttle.Kind)
	assert.Equal(t, now.Add(4*time.Second), throttle.Reset)

	daily := FromText("429 {\"error\":{\"message\":\"Rate limit exceeded: free-models-per-day-high-balance.\",\"type\":\"rate_limit_error\"}}\n     Retrying in 26 seconds… (attempt 5/10)", now)
	require.Equal(t, Wait, daily.Kind)
	assert.True(t, daily.Reset.IsZero(), "no reset: %v", daily.Reset)

	none := FromText("API Error (Connection error.) · Retrying in 1 seconds… (attempt 1/10)\n    ⎿  TypeError (fetch failed)", now)
	assert.Equal(t, None, none.Kind, "a retry alone is no limit")
}

// Resets as the tools and APIs of the field write them.
func TestResetsAsTheFieldWritesThem(t *testing.T) {
	runTextCases(t, []textCase{
		{"Azure's retry after", "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-02-01 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 60 seconds.", Wait, "2026-01-29T16:30:33+02:00"},
		{"Gemini's retry in", `{"error":{"code":429,"message":"You exceeded your current quota.\nPlease retry in 15.0s.","status":"RESOURCE_EXHAUSTED"}}`, Wait, "2026-01-29T16:29:48+02:00"},
		{"Gemini Code Assist's reset after", "[Backend Error] You have exhausted your capacity on this model. Your quota will reset after 4h28m20s. (HTTP 429)", Wait, "2026-01-29T20:57:53+02:00"},
		{"Copilot's wait", "Sorry, your request was rate-limited. Please wait 17 seconds before trying again.", Wait, "2026-01-29T16:29:50+02:00"},
		{"a zone written as an offset", "Usage limit reached for gemini-3-flash-preview. Access resets at 10:57 PM GMT-3.", Wait, "2026-01-29T22:57:00-03:00"},
		{"a Portuguese date", "You've hit your usage limit. Upgrade your plan to continue, or try again at 10 de fev. de 2026, 11:52.", Wait, "2026-02-10T11:52:00+02:00"},
		{"a client's retry after a throttle", "litellm.RateLimitError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}\nRetry in 0.7 seconds.", Wait, "2026-01-29T16:29:33+02:00"},
	})
}

// Recognition runs on every failed iteration: finding that an error, or a
// long output, holds no limit allocates nothing.
func TestFindingNoLimitAllocatesNothing(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("TypeError: Cannot read properties of undefined (reading 'id')\n")
	for sb.Len() < 1<<20 {
		sb.WriteString("    at UserController.show (/home/dev/app/src/controllers/user.ts:42:15)\n")
	}
	err := errors.New(sb.String()[:1<<10])
	long := sb.String()

	assert.Zero(t, testing.AllocsPerRun(20, func() { FromError(err, now) }), "a 1 KB error")
	assert.Zero(t, testing.AllocsPerRun(5, func() { FromText(long, now) }), "a 1 MB output")
}

// A 402 is a stop where a client prints it for the model's API, not where
// prose names the status or a package registry answers with it.
func TestAPaymentRequiredStopsWhereAClientPrintsIt(t *testing.T) {
	runTextCases(t, []textCase{
		{"a client's line", "HTTP 402 Payment Required from https://api.deepseek.com/chat/completions", Stop, ""},
		{"after a label", "Error: 402 Payment Required", Stop, ""},
		{"named in prose", "The gateway answers 402 Payment Required when the balance is empty.", None, ""},
		{"npm's registry", "npm error 402 Payment Required - PUT https://registry.npmjs.org/@scope%2fpkg - You must sign up for private packages", None, ""},
	})
}

// Claude Code's older banner, "Limit reached · resets ...", is a usage
// limit with its reset; "limit reached" alone is not.
func TestTheOlderBannerIsAUsageLimit(t *testing.T) {
	runTextCases(t, []textCase{
		{"with a time and a zone", "Limit reached · resets 6am (Europe/Oslo)", Wait, "2026-01-30T06:00:00+01:00"},
		{"with a duration", "Limit reached · resets in 2h 30m", Wait, "2026-01-29T18:59:33+02:00"},
		{"without its separator", "Limit reached, retrying the upload", None, ""},
	})
}
