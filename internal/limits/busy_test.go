package limits

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A 502, 503 or 504 from the model's API, and its word that it is
// overloaded, are waited out briefly like a throttle: never a failure.
func TestServerBusyIsABriefThrottle(t *testing.T) {
	cases := []struct {
		name, in, reset string
	}{
		{"Claude Code retrying a 503", "  ⎿  API Error (503 upstream connect error or disconnect/reset before headers. reset reason: connection timeout) · Retrying in 5 seconds… (attempt 4/10)", "2026-01-29T16:29:38+02:00"},
		{"Claude Code's 504 through the API's front", "API Error (api.anthropic.com | 504: Gateway time-out) · Retrying in 9 seconds… (attempt 5/10)", "2026-01-29T16:29:42+02:00"},
		{"Claude Code giving up on a 503", "  ⎿  API Error: 503 no healthy upstream", ""},
		{"Claude Code's 502 page", "API Error (502 <html>\n<head><title>502 Bad Gateway</title></head>\n</html>\n) · Retrying in 38 seconds… (attempt 9/10)", "2026-01-29T16:30:11+02:00"},
		{"Codex", "■ unexpected status 502 Bad Gateway: Unknown error, url: http://127.0.0.1:8317/v1/responses", ""},
		{"Codex reconnecting", "• Reconnecting... 4/5 (16m 38s • esc to interrupt)\n  └ Unexpected status 503 Service Unavailable: Service temporarily unavailable", ""},
		{"Gemini's overload", `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, ""},
		{"OpenAI's", "openai.error.ServiceUnavailableError: The server is overloaded or not ready yet.", ""},
		{"OpenAI's code", `{"error":{"code":"server_is_overloaded","message":"Please try again later."}}`, ""},
		{"a client's words for it", "503 server is overloaded.", ""},
		{"a retrying client's last status", `{"type":"api_error","message":"All 3 attempts failed. Last status: 502 Bad Gateway."}`, ""},
		{"a label chain before it", "Error: Error during compaction: API Error: 503 Service Unavailable", ""},
		{"openai-python 0.x", "openai.error.APIError: HTTP code 503 from API (<html>", ""},
		{"openai-python's page", "openai.InternalServerError: <html>\n<head><title>504 Gateway Time-out</title></head>", ""},
		{"httpx's words for a model host's 503", "httpx.HTTPStatusError: Server error '503 Service Unavailable' for url 'https://bedrock-runtime.eu-west-1.amazonaws.com/model/x/converse'", ""},
		{"requests' words for one", "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://api.openai.com/v1/chat/completions", ""},
		{"DeepSeek's", "The server is busy. Please try again later.", ""},
		{"Mistral's rate limit", `ModelHTTPError: status_code: 429, body: {"message":"Requests rate limit exceeded"}`, ""},
		{"Mistral's capacity", `{"object":"error","message":"Service tier capacity exceeded for this model."}`, ""},
		{"requests' 429 from a model's host", "HTTPError: 429 Client Error: Too Many Requests for url: https://router.huggingface.co/v1/chat/completions", ""},
		{"a Gemini client in Dart", "GeminiException => the response has a status code of 502 and RequestOptions.validateStatus was configured to throw", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := FromText(tc.in, now)
			assert.Equal(t, Wait, l.Kind, l.Why)
			assert.True(t, l.Throttle, "a throttle: %s", l.Why)
			got := ""
			if !l.Reset.IsZero() {
				got = l.Reset.Format(time.RFC3339)
			}
			assert.Equal(t, tc.reset, got, "reset")
		})
	}
}

// A refusal under the provider's usage or content policy is a stop: the
// request must change, and no retry changes it.
func TestPolicyRefusalsStopForAPerson(t *testing.T) {
	runTextCases(t, []textCase{
		{"Claude Code", "  ⎿ API Error: Claude Code is unable to respond to this request, which appears to violate our Usage \n    Policy (https://www.anthropic.com/legal/aup). Please double press esc to edit your last message", Stop, ""},
		{"Codex", "■ Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt", Stop, ""},
		{"OpenAI's body", `{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy.","code":"invalid_prompt"}}`, Stop, ""},
		{"Codex's safety classifier", "This content was flagged for possible cybersecurity risk. If this seems wrong, try rephrasing your request.", Stop, ""},
		{"Anthropic's content filter", `API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Output blocked by content filtering policy"}}`, Stop, ""},
		{"Gemini's safety filter", "blocked: candidate: FinishReasonSafety", Stop, ""},
		{"Gemini's block through a client", `{"error": true, "message": "Message is being blocked for reason: PROHIBITED_CONTENT"}`, Stop, ""},
		{"Gemini's block in Python", "google.genai.errors: Request was blocked: BlockedReason.SAFETY", Stop, ""},
		{"a label chain before it", "Transformation error: AIX: Error in response: Invalid prompt: your prompt was flagged as potentially violating our usage policy.", Stop, ""},
		{"Azure's content filter", "Error: (content_filter) The response was filtered due to the prompt triggering Azure OpenAI’s content management policy.", Stop, ""},
		{"Claude Code's safeguards", "Opus 5's safeguards flagged this message. Send feedback with /feedback or learn more", Stop, ""},
		{"Google's SDK", "[GoogleGenerativeAI Error]: Response was blocked due to PROHIBITED_CONTENT", Stop, ""},
		{"a safety filter in Chinese", "错误：您的请求包含不安全内容", Stop, ""},
		{"prose about safeguards", "Our safeguards flagged this message as spam.", None, ""},
		{"prose quoting a refusal", "The docs explain when Claude Code is unable to respond to this request, which appears to violate our Usage Policy.", None, ""},
	})
}

// A provider's refusal of the agent's repeated tool calls is a loop,
// outranking the server error it comes as and any throttle, and outranked
// by a stop.
func TestRepetitiveToolCallRejectionsAreALoop(t *testing.T) {
	runTextCases(t, []textCase{
		{"DashScope through Qwen Code", "✕ [API Error: <400> InternalError.Algo.InvalidParameter: Repetitive tool calls detected in the conversation history. The same tool call with identical name\n     and arguments has been repeated across multiple consecutive rounds.]", Loop, ""},
		{"as a 500", "API error (500) [invalid_request_error]: Repetitive tool calls detected in the conversation history.", Loop, ""},
		{"Gemini CLI's guard", "ℹ A potential loop was detected. This can happen due to repetitive tool calls or other model behavior. The request has been halted.", Loop, ""},
		{"Gemini CLI's guard alone", "A potential loop was detected.", Loop, ""},
		{"an agent's guard", "error: tool loop detected: bash", Loop, ""},
		{"an agent's guard in a log", `level=WARN msg="tool call loop detected" tool=read count=4`, Loop, ""},
		{"a guard's warning", "[WARNING] Repetitive pattern detected. Try a different approach", Loop, ""},
		{"Kimi Code's reminder", "<system-reminder>You are repeating the exact same tool call with identical parameters.</system-reminder>", Loop, ""},
		{"a monitor's verdict", `tool "grep" was invoked in 3 consecutive rounds with identical arguments`, Loop, ""},
		{"prose about one", "We fixed the case where a tool loop detected by the guard was not reported.", None, ""},
		{"over a throttle", "API Error: 529 Overloaded\nRepetitive tool calls detected in the conversation history.", Loop, ""},
		{"under a stop", "Repetitive tool calls detected in the conversation history.\nYour credit balance is too low to access the Anthropic API.", Stop, ""},
	})
}

// Payment and credit refusals are a stop, even when they come as a 429 or
// a rate_limit_error.
func TestCreditRefusalsStop(t *testing.T) {
	runTextCases(t, []textCase{
		{"DeepSeek", `litellm.BadRequestError: DeepseekException - {"error":{"message":"Insufficient Balance","type":"unknown_error"}}`, Stop, ""},
		{"Moonshot's 429", "Error code: 429 - Your account org-x <ak-y> is suspended due to insufficient balance, please recharge your account", Stop, ""},
		{"OpenRouter", `{"error":{"message":"More credits are required to run this request. 128000 token capacity required, 19484 available.","code":402}}`, Stop, ""},
		{"Roo Code", "You seem to have run out of funds/credits in your account. Go to your provider and add more to continue.", Stop, ""},
		{"Anthropic's spend cap as a rate_limit_error", `HTTP 429 {"type": "rate_limit_error", "message": "This request would exceed your account's monthly spend limit. Please try again later."}`, Stop, ""},
		{"OpenRouter's credits", `{'error': {'message': 'Insufficient credits. Add more using https://openrouter.ai/settings/credits', 'code': 402}}`, Stop, ""},
		{"Gemini's prepayment", "Last error: Your prepayment credits are depleted. Please go to AI Studio to manage your project and billing.", Stop, ""},
		{"SiliconFlow", `{'code': 30011, 'message': 'Your paid balance is insufficient. Please top up and try again.'}`, Stop, ""},
		{"a proxy's words in Chinese", "upstream_status: HTTP 403; cause: 用户额度不足, 剩余额度: ＄0", Stop, ""},
		{"a Codex workspace", "Your workspace is out of credits. Add credits to continue.", Stop, ""},
		{"Letta's 402", `402 {"error":"Rate limited","reasons":["not-enough-credits"]}`, Stop, ""},
		{"after an app's label", "Something went wrong: Insufficient Balance", Stop, ""},
		{"a label in brackets", "2026-01-29 14:09:17.109 [error] Error [AI_APICallError]: This request requires more credits, or fewer max_tokens.", Stop, ""},
	})
}

// Rate-limit headers dumped into a log or an SDK's error are read as a
// response's: a window they show spent is a throttle until its reset.
func TestDumpedRateLimitHeaders(t *testing.T) {
	runTextCases(t, []textCase{
		{"an SDK's object, the requests window spent", "{\n    'anthropic-ratelimit-requests-remaining': '0',\n    'anthropic-ratelimit-requests-reset': '2026-01-29T14:31:00Z',\n    'anthropic-ratelimit-tokens-remaining': '16000',\n}", Wait, "2026-01-29T14:31:00Z"},
		{"a 429's headers: the spent window's reset, later than retry-after", "status: 429,\nheaders: {\n  'anthropic-ratelimit-input-tokens-remaining': '0',\n  'anthropic-ratelimit-input-tokens-reset': '2026-01-29T14:31:30Z',\n  'retry-after': '16'\n}", Wait, "2026-01-29T14:31:30Z"},
		{"curl -v of OpenAI", "< HTTP/2 429\n< x-ratelimit-remaining-tokens: 0\n< x-ratelimit-reset-tokens: 6m0s", Wait, "2026-01-29T16:35:33+02:00"},
		{"a subscription window rejected", "anthropic-ratelimit-unified-status: rejected\nanthropic-ratelimit-unified-reset: 1769709600", Wait, "2026-01-29T20:00:00+02:00"},
		{"a subscription's 5-hour window, as k=v", "anthropic-ratelimit-unified-5h-status=rejected\nanthropic-ratelimit-unified-5h-reset=1769709600\nanthropic-ratelimit-unified-overage-status=rejected", Wait, "2026-01-29T20:00:00+02:00"},
		{"only the overage rejected", "anthropic-ratelimit-unified-5h-status=allowed\nanthropic-ratelimit-unified-overage-status=rejected", None, ""},
		{"a 429 whose only reset is Retry-After", "HTTP/1.1 429 Too Many Requests\nretry-after: 30", Wait, "2026-01-29T16:30:03+02:00"},
	})
	l := FromText("'anthropic-ratelimit-requests-remaining': '0'", now)
	assert.True(t, l.Throttle, "a spent window is a throttle")
	assert.Equal(t, "rate-limit headers: a window spent", l.Why)
}

// The Codex app's weekly window names its reset as a calendar date.
func TestCodexAppWeeklyWindowWaitsForItsDate(t *testing.T) {
	runTextCases(t, []textCase{
		{"the app", "You’re out of Codex messages\nYour rate limit resets on Feb 3, 2026, 9:15 AM. To continue using Codex, upgrade to Plus today.", Wait, "2026-02-03T09:15:00+02:00"},
	})
}

// Codex in Spanish names its reset as a calendar date, day first.
func TestCodexInSpanishWaitsForItsDate(t *testing.T) {
	runTextCases(t, []textCase{
		{"the banner", "Tu límite de uso se restablece el 3 feb 2026, 9:15 a.m.", Wait, "2026-02-03T09:15:00+02:00"},
	})
	l := FromText("anthropic-ratelimit-unified-5h-status=rejected\nretry-after=60", now)
	assert.False(t, l.Throttle, "a subscription's usage window is no throttle: %s", l.Why)
}

// A usage poller's 429 (a status line reading the provider's usage API)
// and GitHub's rate limit met by a build are no limit on the agent's work.
func TestOtherServicesThrottlesAreNoLimit(t *testing.T) {
	runTextCases(t, []textCase{
		{"a status line's debug log", "[DEBUG] Usage API returned status 429: Too Many Requests", None, ""},
		{"GitHub's 403 at the end of a chain of a sentence", "Error: : Task failed: Status code was 403 and not [200]: HTTP Error 403: rate limit exceeded", None, ""},
	})
}

// A terminal that wraps a long line in the middle of a word does not hide
// the reset.
func TestAResetWrappedMidWordIsRead(t *testing.T) {
	runTextCases(t, []textCase{
		{"Codex", "■ You've hit your usage limit. Upgrade to Pro, visit https://chatgpt.com/codex/settings/usage to purchase more credits or try a\ngain at Feb 2nd, 2026 8:41 AM.", Wait, "2026-02-02T08:41:00+02:00"},
		{"wrapped with an indent", "You've hit your usage limit. Upgrade to Plus, or try ag\n   ain in 3 hours.", Wait, "2026-01-29T19:29:33+02:00"},
	})
}
