package limits

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// now is when every test's text was printed: Thursday 29 January 2026,
// 16:29:33 in Vilnius (UTC+2), 14:29:33 UTC.
var now = time.Date(2026, 1, 29, 16, 29, 33, 0, vilnius)

var vilnius = mustZone("Europe/Vilnius")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// textCase is one row of a FromText table: what was printed, and what
// FromText must make of it. reset is RFC 3339, "" for none.
type textCase struct {
	name  string
	in    string
	kind  Kind
	reset string
}

func runTextCases(t *testing.T, cases []textCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := FromText(tc.in, now)
			assert.Equal(t, tc.kind, l.Kind, "kind; why %q", l.Why)
			got := ""
			if !l.Reset.IsZero() {
				got = l.Reset.Format(time.RFC3339)
			}
			assert.Equal(t, tc.reset, got, "reset")
			assert.Equal(t, tc.kind != None, l.Why != "", "a limit says why, no limit says nothing: %q", l.Why)
		})
	}
}

func TestClaudeCodeLimitMessagesWaitUntilTheirReset(t *testing.T) {
	runTextCases(t, []textCase{
		{"time of day in the named zone", "You've hit your limit · resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"session limit with minutes", "You've hit your session limit · resets 7:30pm (Asia/Nicosia)", Wait, "2026-01-29T19:30:00+02:00"},
		{"a time already past today is tomorrow's", "You've hit your Opus limit · resets 3:45pm", Wait, "2026-01-30T15:45:00+02:00"},
		{"weekly limit on a weekday, in now's zone", "You've hit your weekly limit · resets Mon 12:00am", Wait, "2026-02-02T00:00:00+02:00"},
		{"a date with at", "You've hit your limit · resets Feb 2 at 9pm (America/New_York)", Wait, "2026-02-02T21:00:00-05:00"},
		{"a date with a comma", "You've hit your weekly limit · resets Feb 3, 2am (UTC)", Wait, "2026-02-03T02:00:00Z"},
		{"Sonnet limit, JSON-escaped dot", `You've hit your Sonnet limit \u00b7 resets 3pm (UTC)`, Wait, "2026-01-29T15:00:00Z"},
		{"curly apostrophe", "You’ve hit your limit · resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"ASCII dash for the dot", "You've hit your limit - resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"bullet for the dot, no apostrophe", "Youve hit your limit • resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"upper case words", "YOU'VE HIT YOUR SESSION LIMIT · RESETS 5PM (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"24-hour clock", "You've hit your limit · resets 17:00 (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"ralphex's timestamped log line", "[26-01-29 16:29:33] You've hit your limit · resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"hint lines around it", "✻ Baked for 2m 4s\nYou've hit your session limit · resets 5:40pm (Europe/Berlin)\n/login to switch to an API usage-billed account.", Wait, "2026-01-29T17:40:00+01:00"},
		{"older 5-hour form", "5-hour limit reached ∙ resets 9pm", Wait, "2026-01-29T21:00:00+02:00"},
		{"older session form", "Session limit reached ∙ resets 8pm", Wait, "2026-01-29T20:00:00+02:00"},
		{"older weekly form with upsell", "Weekly limit reached · resets Feb 2, 7pm (Europe/Moscow) · /upgrade to Max or turn on /extra-usage", Wait, "2026-02-02T19:00:00+03:00"},
		{"usage limit reached, reset tomorrow in Tokyo", "Claude usage limit reached. Your limit will reset at 7pm (Asia/Tokyo).", Wait, "2026-01-30T19:00:00+09:00"},
		{"usage limit reached, wrapped by the terminal", "  ⎿  Claude usage limit reached. Your limit will reset \n     at 3pm (America/Santiago).", Wait, "2026-01-29T15:00:00-03:00"},
		{"usage limit reached at midnight", "Claude usage limit reached. Your limit will reset at 12am.", Wait, "2026-01-30T00:00:00+02:00"},
		{"usage limit reached with a Unix time", "Claude AI usage limit reached|1769709600", Wait, "2026-01-29T20:00:00+02:00"},
		{"API Error label before it", "API Error: Claude AI usage limit reached|1769709600", Wait, "2026-01-29T20:00:00+02:00"},
		{"claude.ai", "You’ve hit your limit for Claude messages. Limits will reset at 9:30 AM.  View your usage details.", Wait, "2026-01-30T09:30:00+02:00"},
		{"no reset named", "You've hit your limit", Wait, ""},
		{"request rejected", "API Error: Request rejected (429) · this may be a temporary capacity issue", Wait, ""},
		{"repeated 529", "API Error: Repeated 529 Overloaded errors · check status.claude.com", Wait, ""},
		{"server throttle", "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited", Wait, ""},
	})
}

func TestClaudeCodeCapsStopUnlessTheyNameAReset(t *testing.T) {
	runTextCases(t, []textCase{
		{"allocation disabled by an admin", "Your usage allocation has been disabled by your admin · ask your admin for a higher limit", Stop, ""},
		{"group limit of $0", "Your group's usage limit is set to $0 · run /usage-credits to ask your admin for a higher limit", Stop, ""},
		{"org out of usage", "Your org is out of usage · add funds to continue", Stop, ""},
		{"seat without usage credits", "Your seat type doesn't include usage credits", Stop, ""},
		{"service disabled", "This service is disabled for your org", Stop, ""},
		{"credit balance", "Credit balance is too low", Stop, ""},
		{"monthly spend limit", "You've hit your org's monthly spend limit · ask your admin to raise it at claude.ai/settings/usage", Stop, ""},
		{"monthly spend limit while the session window resets", "You've hit your org's monthly spend limit · ask your admin to raise it · your session limit resets 5pm (Europe/Vilnius)", Wait, "2026-01-29T17:00:00+02:00"},
		{"out of usage credits", "You're out of usage credits", Stop, ""},
		{"out of usage credits until a reset", "You're out of usage credits · resets 5pm (Europe/Vilnius) · progress saved", Wait, "2026-01-29T17:00:00+02:00"},
		{"a stop outranks a wait", "You've hit your limit · resets 5pm (Europe/Vilnius)\nYour usage allocation has been disabled by your admin", Stop, ""},
	})
}

func TestAPIErrorBodiesInText(t *testing.T) {
	runTextCases(t, []textCase{
		{"Anthropic rate_limit_error", `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."},"request_id":"req_011"}`, Wait, ""},
		{"Anthropic overloaded_error", `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Wait, ""},
		{"Anthropic, in a Python SDK's repr", `anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error', 'message': 'Number of request tokens has exceeded your per-minute rate limit'}}`, Wait, ""},
		{"Anthropic credit balance", `API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`, Stop, ""},
		{"Anthropic spend limit with its regain date", `API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-02-01 at 00:00 UTC."}}`, Wait, "2026-02-01T00:00:00Z"},
		{"OpenAI rate_limit_exceeded with its retry time", `POST "https://api.openai.com/v1/chat/completions": 429 Too Many Requests {"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29900, Requested 900. Please try again in 1.6s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`, Wait, "2026-01-29T16:29:34+02:00"},
		{"OpenAI insufficient_quota is a stop, though a 429", `429 Too Many Requests {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, Stop, ""},
		{"OpenAI insufficient_quota in a Python SDK's repr", `openai.RateLimitError: Error code: 429 - {'error': {'message': 'You exceeded your current quota, please check your plan and billing details.', 'type': 'insufficient_quota', 'param': None, 'code': 'insufficient_quota'}}`, Stop, ""},
		{"OpenAI billing hard limit", `{"error":{"message":"Billing hard limit has been reached","type":"invalid_request_error","param":null,"code":"billing_hard_limit_reached"}}`, Stop, ""},
		{"Gemini RESOURCE_EXHAUSTED with a retry delay", `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`, Wait, "2026-01-29T16:30:10+02:00"},
		{"the Gemini Go SDK's error text", "Error 429, Message: Resource has been exhausted (e.g. check quota)., Status: RESOURCE_EXHAUSTED, Details: [map[@type:type.googleapis.com/google.rpc.RetryInfo retryDelay:37s]]", Wait, "2026-01-29T16:30:10+02:00"},
		{"gRPC ResourceExhausted", "rpc error: code = ResourceExhausted desc = Quota exceeded for quota metric 'Generate Content API requests per minute'", Wait, ""},
		{"Codex usage_limit_reached", `Codex error: {"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":1769709600,"resets_in_seconds":12627}}`, Wait, "2026-01-29T20:00:00+02:00"},
		{"Codex usage_limit_reached with a wait past what a duration holds", `{"type":"error","error":{"type":"usage_limit_reached","resets_in_seconds":9999999999}}`, Wait, ""},
	})
}

func TestCodexUsageLimitMessages(t *testing.T) {
	runTextCases(t, []textCase{
		{"try again in words", "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 3 hours 2 minutes.", Wait, "2026-01-29T19:31:33+02:00"},
		{"try again in days, wrapped", "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14\nminutes.", Wait, "2026-02-01T09:43:33+02:00"},
		{"try again at a date", "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Feb 5th, 2026 8:19 PM.", Wait, "2026-02-05T20:19:00+02:00"},
		{"wait for limits to reset, no time", "🖐 You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), or wait for limits to reset (every 5h and every week.).", Wait, ""},
	})
}

// Codex's messages as codex exec --json prints them: in a turn.failed
// line (Codex 0.169.0 against a fake Responses API), its typographic
// apostrophe as it is, and the reset in the local time.
func TestCodexMessagesInItsJSONLines(t *testing.T) {
	runTextCases(t, []textCase{
		{"a usage limit, typographic apostrophe", `{"type":"turn.failed","error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 7:06 PM."}}`, Wait, "2026-01-29T19:06:00+02:00"},
		{"a usage limit, in text", "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 7:06 PM.", Wait, "2026-01-29T19:06:00+02:00"},
		{"insufficient_quota", `{"type":"turn.failed","error":{"message":"Quota exceeded. Check your plan and billing details."}}`, Stop, ""},
		{"insufficient_quota, in text", "Quota exceeded. Check your plan and billing details.", Stop, ""},
		{"its retries exhausted", `{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests, request id: req_fake000006"}}`, Wait, ""},
	})
}

func TestTextsThatAreNoLimit(t *testing.T) {
	runTextCases(t, []textCase{
		{"empty", "", None, ""},
		{"a test about rate limiting", "--- FAIL: TestLimiter (0.00s)\n    limiter_test.go:42: the rate limiter test failed: expected 429", None, ""},
		{"a 429 from the code under test", "GET /api/items: got 429 Too Many Requests, want 200", None, ""},
		{"a usage warning", "You've used 90% of your session limit · resets 5pm (Europe/Vilnius) · /upgrade to keep using Claude Code", None, ""},
		{"approaching a limit", "Approaching weekly limit · resets Mon 12:00am", None, ""},
		{"extra usage takes over", "You're now using extra usage · Your session limit resets 5pm (Europe/Vilnius)", None, ""},
		{"upgrade hint alone", "/upgrade to increase your usage limit.", None, ""},
		{"prose quoting a message", "The docs say: You've hit your limit · resets 5pm (Europe/Vilnius)", None, ""},
		{"prose quoting a cap", "When Claude says Your usage allocation has been disabled by your admin, stop.", None, ""},
		{"the phrase runs on", "You've hit your limit of three retries; giving up.", None, ""},
		{"a file about the 5-hour limit", "PROMPT.md: wait out the 5-hour limit when it is reached", None, ""},
		{"an error code in markdown", "Handled `rate_limit_error` and `insufficient_quota` in the client.", None, ""},
		{"a timeout", "Request timed out", None, ""},
		{"a deadline", "claude: context deadline exceeded", None, ""},
		{"a 500", `API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}} · check status.claude.com`, None, ""},
		{"a registry's 503", "npm ERR! code E503\nnpm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/left-pad", None, ""},
		{"a bare 503 says not whose it is", "503 Service Unavailable", None, ""},
		{"a 502 of the code under test", "GET /healthz: got 502 Bad Gateway, want 200", None, ""},
		{"a harness's loop warning", "[Tool loop warning: repeated_exact_failure_warning; count=85; tool_call has failed 85 times with identical arguments. This looks like a loop]", None, ""},
		{"a malformed tool history is no loop", "400 <400> InternalError.Algo.InvalidParameter: messages with role \"tool\" must be a response to a preceeding message with \"tool_calls\".", None, ""},
		{"prose about repetitive tool calls", "DashScope-style backends return a 500 when repetitive tool calls are detected.", None, ""},
		{"a cybersecurity warning refuses nothing", "Your conversations have multiple flags for possible cybersecurity risk. Responses may take longer because extra safety checks are on.", None, ""},
		{"a usage poller's 429", "curl -s https://api.anthropic.com/api/oauth/usage\n# {\"error\":{\"message\":\"Rate limited. Please try again later.\",\"type\":\"rate_limit_error\"}}\n# HTTP: 429", None, ""},
		{"a model hub download's 429", "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: https://huggingface.co/org/model/resolve/main/config.json", None, ""},
		{"insufficient permissions are no credit", "Error: Insufficient permissions for global npm install.", None, ""},
		{"headers with requests to spare", "x-ratelimit-remaining-requests: 499\nx-ratelimit-reset-requests: 120ms", None, ""},
		{"GitHub's headers, its window spent", "X-RateLimit-Limit: 60\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: 1769700000", None, ""},
		{"Docker Hub's headers, its window spent", "RateLimit-Limit: 100;w=21600\nRateLimit-Remaining: 0;w=21600", None, ""},
		{"a subscription window allowed", "anthropic-ratelimit-unified-status = allowed\nanthropic-ratelimit-unified-reset = 1769709600", None, ""},
		{"a test that checks an authentication error", "--- FAIL: TestClientRefusesBadKey (0.00s)\n    client_test.go:31: got {\"type\":\"authentication_error\"}, want nil", None, ""},
		{"a bare 401 of the code under test", "GET /api/me: got 401 Unauthorized, want 200", None, ""},
		{"a registry refuses its token", "npm error code E401\nnpm error Unable to authenticate, your authentication token seems to be invalid.", None, ""},
		{"prose about a key error", "Handled the invalid_api_key code in `client.go`, and an expired OAuth token too.", None, ""},
	})
}

// The sixth held-out set's families: usage windows of Kiro, Copilot Free,
// Gemini Code Assist and Qwen Code; throttles of xAI and Groq; a model
// the account may not use; the agents' own loop guards.
func TestMoreToolsLimitsAndLoopGuards(t *testing.T) {
	runTextCases(t, []textCase{
		{"Kiro's monthly window", "The monthly usage limit has been reached (request_id: 0e06d8cd)", Wait, ""},
		{"Kiro's daily window", "You've reached your daily usage limit. Please return tomorrow to continue building.", Wait, ""},
		{"Copilot Free's window, until a date", "You've reached your monthly chat messages limit. Upgrade to Copilot Pro (30-day free trial) or wait until 21 February 2026 for your limit to reset.", Wait, "2026-02-21T00:00:00+02:00"},
		{"Codex, after a date", "You've reached your usage limit. Upgrade your plan or purchase credits to continue, or try again after February 20, 2026 at 12:31.", Wait, "2026-02-20T12:31:00+02:00"},
		{"Gemini Code Assist's individual quota", "Error: Cloud Code Assist API error (429): Individual quota reached.", Wait, ""},
		{"OpenAI's requests per day are a day's window", "Rate limit reached for o4-mini in organization org-x on requests per day (RPD): Limit 200, Used 200, Requested 1. Please try again in 7m12s.", Wait, "2026-01-29T16:36:45+02:00"},
		{"OpenAI's tokens per minute are a throttle", "Rate limit reached for o4-mini in organization org-x on tokens per min (TPM): Limit 200, Used 200, Requested 1. Please try again in 2s.", Wait, "2026-01-29T16:29:35+02:00"},
		{"Groq names the model", "Rate limit reached for model `llama-3.1-8b-instant` in organization `org_01` service tier `on_demand` on tokens per minute (TPM). Please try again in 4s.", Wait, "2026-01-29T16:29:37+02:00"},
		{"xAI's team limit", `429 "Too many tokens for team e9fe19cb and model grok-4-0709."`, Wait, ""},
		{"Bedrock's model access", "API Error: 403 You don't have access to the model with the specified model ID.", Stop, ""},
		{"Copilot's policy", "✗ You are not authorized to use this Copilot feature, it requires an enterprise or organization policy to be enabled", Stop, ""},
		{"Roo Code's guard", "Roo appears to be stuck in a loop, attempting the same action (read_file) repeatedly.", Loop, ""},
		{"OpenHands' guard", "AgentStuckInLoopError: Agent got stuck in a loop", Loop, ""},
		{"a package manager's 429", " INFO resolve: Resolving package: 'wasm-bindgen-cli'\n INFO Receiver status code 429 Too Many Requests, will wait for 60s and retry", None, ""},
		{"prose about a stuck agent", "The agent appears to be stuck in a loop again.", None, ""},
	})
}

// The eighth held-out set's families: Codex's billing and plan refusals,
// a free quota that asks for payment, a usage window behind a tag, Gemini
// Code Assist's daily requests; an update check's GitHub limit and a
// documentation table are no limit.
func TestBillingRefusalsAndTaggedWindows(t *testing.T) {
	runTextCases(t, []textCase{
		{"Codex's insufficient quota", "⚠️ Insufficient quota. Please check your billing details and retry.", Stop, ""},
		{"a free quota spent asks for payment", "Error code: 403 - {'error': {'message': 'The free quota has been exhausted. To continue accessing the model on a paid basis, please complete your payment information.'}}", Stop, ""},
		{"Codex's plan without it", "To use Codex with your ChatGPT plan, upgrade to Plus: https://openai.com/chatgpt/pricing.", Stop, ""},
		{"Codex's workspace refused", `unexpected status 403 Forbidden: {"detail":{"code":"invalid_workspace_selected"}}, url: https://chatgpt.com/backend-api/codex/responses`, Stop, ""},
		{"a daily limit of requests with a model", "You've hit your daily limit of requests with Gemini 2.5 Pro. Switching to Gemini 2.5 Flash.", Wait, ""},
		{"a window behind a tag", "Error: [provider.auth_error] 403 You've reached your usage limit for this billing cycle. Your quota will be refreshed in the next cycle.", Wait, ""},
		{"an update check's GitHub limit", "Release check failed: 403 rate limit exceeded", None, ""},
		{"a documentation table", "| `RateLimitExceeded` | Rate Limit Reached | {Provider}'s rate limit was reached. Zed will retry automatically. |", None, ""},
	})
	l := FromText("Attempt 1 failed: You have exhausted your capacity on this model. Your quota will reset after 2s.. Retrying after 2173ms...", now)
	assert.Equal(t, Wait, l.Kind)
	assert.True(t, l.Throttle, "a capacity that lifts in seconds is a throttle: %s", l.Why)
	l = FromText("You have exhausted your capacity on this model. Your quota will reset after 4h28m20s.", now)
	assert.False(t, l.Throttle, "one that lifts in hours is a usage window: %s", l.Why)
}

// The ninth held-out set's families: gateways' and APIs' throttles,
// windows behind a status, OpenAI's insufficient_quota in words, budgets
// and subscriptions, frameworks' loop guards; code that holds a message is
// no limit.
func TestGatewaysBudgetsAndFrameworkGuards(t *testing.T) {
	runTextCases(t, []textCase{
		{"Moonshot's organization RPM", "request reached organization max RPM: 3, please try again after 1 seconds", Wait, "2026-01-29T16:29:34+02:00"},
		{"LiteLLM's proxy", "429: LiteLLM Rate Limit Handler for rate limit type = team. Crossed TPM / RPM / Max Parallel Request Limit.", Wait, ""},
		{"a gateway's throttling threshold", `[models] Error: API request failed with status code 429: {"error_msg":"The throttling threshold has been reached: policy ip over ratelimit"}`, Wait, ""},
		{"Ollama's weekly window", "429: you (<account>) have reached your weekly usage limit, upgrade for higher limits: https://ollama.com/upgrade", Wait, ""},
		{"a day's token limit in parentheses", "500 - Token limit (500,000 per day) exceeded. Used: 508,311 tokens.", Wait, ""},
		{"ChatGPT's usage cap", "You've reached the current usage cap for GPT-4. You can continue with the default model now, or try again after 7:06 PM.", Wait, "2026-01-29T19:06:00+02:00"},
		{"OpenAI's insufficient_quota in words", "litellm.RateLimitError: OpenAIException - You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.", Stop, ""},
		{"Gemini's 429 says the same first words", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", Wait, ""},
		{"Moonshot's code", `403 {"error":{"message":"Your account is not active","type":"exceeded_current_quota_error"}}`, Stop, ""},
		{"Ollama's subscription", "Error: 403 Forbidden: this model requires a subscription, upgrade for access: https://ollama.com/upgrade", Stop, ""},
		{"LiteLLM's budget", "Request Failed Message: Budget has been exceeded! Current cost: 26.075, Max budget: 0.25", Stop, ""},
		{"CrewAI's guard", "I must stop using this action input. I'll try something else instead.", Loop, ""},
		{"tidebreak's guard", "not run: this exact call has now been made 3 times in a row with the same arguments.", Loop, ""},
		{"heddle's guard", "Repeated tool call blocked: read_file was already called 2 times with the same input earlier in this run", Loop, ""},
		{"code that returns a message", "+export function describeRateLimit(): string {\n+  return (\n+    'GLM Coding Plan rate limit reached. Wait a moment and retry.'\n+  );\n+}", None, ""},
	})
}

// The tenth and eleventh held-out sets' families: AI IDEs, proxies and
// apps besides the big agents.
func TestIDEsProxiesAndAppsLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"a proxy's credential cooldown", `API Error: 429 {"error":{"code":"model_cooldown","message":"All credentials for model gemini-pro are cooling down","reset_seconds":120}}`, Wait, "2026-01-29T16:31:33+02:00"},
		{"a rate limit for a model, and its Resets in:", "Permission denied: Reached message rate limit for this model. Please try again later. Resets in: 30m0s", Wait, "2026-01-29T16:59:33+02:00"},
		{"every account rate-limited, in Chinese", `{"error":{"message":"gpt-5.1 所有账号均已达速率限制，请 117 秒后重试"}}`, Wait, "2026-01-29T16:31:30+02:00"},
		{"upstream saturated, in Chinese", "429 当前分组上游负载已饱和，请稍后再试", Wait, ""},
		{"Bing's daily limit", "聊得很愉快，但你已达到每日限制。请明天再试。", Wait, ""},
		{"Amazon Q's monthly maximum", `Error { code: "ThrottlingException", message: "Maximum GenerateAssistantResponse reached for this month." }`, Wait, ""},
		{"high traffic", "Service is currently experiencing high traffic. Request failed after 3 attempts.", Wait, ""},
		{"Warp's monthly tokens", "I'm sorry, I can't complete that request. You've reached the monthly token limit.", Wait, ""},
		{"a provider's name first", "Anthropic rate limit exceeded, please wait a bit and try again.", Wait, ""},
		{"Trae's queue", "Too many current requests. Your queue position is 14.", Wait, ""},
		{"a full queue", `"Streaming response failed: [503] The request queue is full."`, Wait, ""},
		{"a TPM limit", "Error: 429 Request was rejected due to rate limiting. Details: TPM limit reached.", Wait, ""},
		{"messages per 24 hours", `{"error":{"message":"You've reached our limit of messages per 24 hours. Please try again later.","type":"429 Too Many Requests"}}`, Wait, ""},
		{"a day's free allocation", "you have used up your daily free allocation of 10,000 neurons, please upgrade to Cloudflare's Workers Paid plan", Wait, ""},
		{"a month's included credits", "You have exceeded your monthly included credits for Inference Providers.", Wait, ""},
		{"Cody's daily messages", "You've used all of your chat messages and commands for today.", Wait, ""},
		{"Augment's inactive subscription", "⚠️ Your subscription for a@example.com is inactive. Please update your plan to continue using Augment. ⚠️", Stop, ""},
		{"Windsurf's free account", "Failed to log in: ConnectError: [permission_denied] free user account exceeded, please upgrade to a paid plan", Stop, ""},
		{"Cursor's blocked account", `{"error":"ERROR_UNAUTHORIZED","details":{"detail":"Your request has been blocked as our system has detected suspicious activity from your account."}}`, Stop, ""},
		{"Amazon Q's access refused", "Amazon Q is having trouble responding right now: 0: unhandled error (AccessDeniedException)", Stop, ""},
		{"a credit refusal in a log's errorMessage", `{"level":"warn","errorMessage":"402 This request requires more credits, or fewer max_tokens."}`, Stop, ""},
		{"a project without the model", "AI_APICallError: Project `proj_1` does not have access to model `gpt-4o`", Stop, ""},
		{"a user quota not enough", "preConsumeQuota failed: {Error:{Message:user quota is not enough Type:one_api_error Param: Code:insufficient_user_quota} StatusCode:403}", Stop, ""},
		{"a tool loop guard", `Tool loop guard stopped repeated failing calls to "read" after 9 attempts (limit 2).`, Loop, ""},
		{"deer-flow's guard", "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and produce your final answer now.", Loop, ""},
		{"a search tool's 429", "Encountered HTTP 429 errors while trying to fetch data using the Tavily search tool", None, ""},
		{"Docker Hub's documentation", "A generic 429 Too Many Requests error is generally referring to the abuse limit, described here: https://docs.docker.com/docker-hub/usage/", None, ""},
	})
	l := FromText("⚠️ Kiro rate limit reached: Request quota exceeded. Please wait a moment and try again.", now)
	assert.True(t, l.Kind == Wait && l.Throttle, "a wait of a moment is a throttle: %s", l.Why)
}

// The twelfth held-out set's families: the big agents' newest wordings.
func TestTheBigAgentsNewestWordings(t *testing.T) {
	runTextCases(t, []textCase{
		{"Copilot's weekly rate limit is a window", "Sorry, you have been rate-limited. Please wait 2 minutes before trying again. Server Error: Sorry, you've exceeded your weekly rate limit.", Wait, "2026-01-29T16:31:33+02:00"},
		{"the Codex app without a limit's word", "You’re out of Codex messages\nTo get more access now, send a request to your admin, or wait until May 30, 2026, 4:12 PM.", Wait, ""},
		{"Copilot's 503 through its client", `Last error: CAPIError: 503 {"error":{"message":"Claude Opus 4.8 is currently experiencing issues."}}`, Wait, ""},
		{"Codex's spent refresh token", "Your access token could not be refreshed because your refresh token was already used. Please log out and sign in again.", Stop, ""},
		{"Codex's safety mitigation", "stream disconnected before completion: This user's access to gpt-5.4 has been temporarily limited for potentially suspicious activity related to cybersecurity.", Stop, ""},
		{"Gemini's account disabled", `✕ [API Error: [{ "error": { "code": 403, "message": "This service has been disabled in this account for violation of Terms of Service." } }]]`, Stop, ""},
		{"Gemini Code Assist refuses the account", "Failed to login. Message: Your current account is not eligible for Gemini Code Assist for individuals.", Stop, ""},
		{"a message in inline code", "- classify Claude Code `API Error: Repeated 529 Overloaded errors` as `provider_overloaded`", None, ""},
	})
}

// The thirteenth held-out set's families: the providers of China and
// beyond, and the guards of smaller agents.
func TestProvidersOfChinaAndBeyond(t *testing.T) {
	runTextCases(t, []textCase{
		{"Zhipu's busy model", `API Error: 429 {"error":{"code":"1305","message":"该模型当前访问量过大，请您稍后再试"}}`, Wait, ""},
		{"Zhipu's account rate limit", `Error: 429 - {"error":{"code":"1302","message":"您的账户已达到速率限制，请您控制请求频率"}}`, Wait, ""},
		{"Z.ai's window in China's time", `{"error":{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2026-01-30 03:41:44"}}`, Wait, "2026-01-30T03:41:44+08:00"},
		{"a window behind its code in brackets", `429 {"type":"error","error":{"type":"rate_limit_error","code":"1308","message":"[1308][Usage limit reached for 5 hour. Your limit will reset at 2026-01-30 03:41:44][2026]"}}`, Wait, "2026-01-30T03:41:44+08:00"},
		{"Kimi's 7-day window", `{"error":{"message":"You've reached your weekly (7-day) usage limit. Your quota will reset when the current 7-day window ends."}}`, Wait, ""},
		{"an RPH limit", `服务回复状态错误[429],返回数据为:{"message":"Requestwas rejected due to rate limiting. Details: RPH limit reached."}`, Wait, ""},
		{"Cerebras' tokens per minute", `"Tokens per minute limit exceeded - too many tokens processed."`, Wait, ""},
		{"DeepSeek's TPM", "status_code=429, TPM (Tokens Per Minute) limit of the model deepseek-v4 is exceeded. Please try again later", Wait, ""},
		{"Replicate's reset about 5s away", `429 Too Many Requests {"detail":"Request was throttled. Your rate limit resets in ~5s.","status":429}`, Wait, "2026-01-29T16:29:38+02:00"},
		{"Qianfan's daily requests", "RuntimeError: Open api daily request limit reached", Wait, ""},
		{"after a label in Chinese", "🤖️：消息机器人摆烂了 错误信息: Open api daily request limit reached", Wait, ""},
		{"Z.ai's plan without the model", `the Z.ai lite coding plan gives an error: "Your current subscription plan does not yet include access to GLM-5"`, Stop, ""},
		{"Zhipu's expired token", `APIAuthenticationError('Error code: 401, with error text {"error":{"code":"1003","message":"Authorization Token已过期，请重新生成/获取。"}}')`, Stop, ""},
		{"a guard in Chinese", "不可重复以相同的入参调用同一个工具", Loop, ""},
		{"crustly's guard", "WARN: Detected tool loop: 'ls' called 3 times in a row. Breaking loop.", Loop, ""},
		{"an execution loop", "Execution loop detected: read_file has been called 3 times with the same parameters in the last 30 seconds.", Loop, ""},
	})
}

// The fourteenth and fifteenth held-out sets' families: agent frameworks,
// editor plugins and the tools around them.
func TestFrameworksAndPluginsLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"a window behind a 402 is paid for", `Failed to create default agent: 402 {"error":"You have reached your limit for agents, please upgrade your plan or delete some agents","limit":3}`, Stop, ""},
		{"a spending cap behind a tag", "[SSRF] Spending cap reached resets 6pm", Wait, "2026-01-29T18:00:00+02:00"},
		{"Semantic Kernel's reason", "Error executing action [attempt 1 of 1]. Reason: TooManyRequests. Will retry after 9000ms", Wait, "2026-01-29T16:29:42+02:00"},
		{"OpenAI's spent quota, without its docs", "ChatGPT error: (HTTP/2 429) You exceeded your current quota, please check your plan and billing details.", Stop, ""},
		{"Gemini's 429 in the same words", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", Wait, ""},
		{"a budget exceeded", `openai.BadRequestError: Error code: 400 - {'error': {'message': 'ExceededBudget: User=... over budget'}}`, Stop, ""},
		{"a model that does not exist", "SYSTEM: Command evaluate_code returned: Error: The model: `gpt-4` does not exist", Stop, ""},
		{"OpenAI's safety limit on content", `BadRequestError: Error code: 400 - {'error': {'message': "Invalid prompt: we've limited access to this content for safety reasons."}}`, Stop, ""},
		{"Copilot's unsupported model", `Request Failed: 400 {"error":{"message":"The requested model is not supported.","code":"model_not_supported"}}`, Stop, ""},
		{"Copilot's agent mode window", "Sorry, you have exhausted the agent mode usage limit. Please switch to ask mode and try again later.", Wait, ""},
		{"Copilot's rate limit in a window's words is a throttle", "Sorry, you've exceeded your rate limit. Please try again later.", Wait, ""},
		{"the Responsible AI filter in Chinese", "很抱歉，响应已被负责任 AI 服务过滤。请改述你的提示，然后重试。", Stop, ""},
		{"no access to the model", "> You do not have access to this model or the model does not exist, please check with your API provider.", Stop, ""},
		{"a status run into the message", "Error from Anthropic: status code 429This request would exceed the rate limit for your organization of 40,000 input tokens per minute.", Wait, ""},
		{"a crawler's 429", "FirecrawlError: Request failed with status code 429. Error: Rate limit exceeded. Consumed (req/min): 20, Remaining (req/min): 0.", None, ""},
		{"a sandbox service's 429", "429: Rate limit exceeded, please try again later. - you have reached the maximum number of concurrent E2B sandboxes (20).", None, ""},
		{"Discord's 429", "discord.errors.HTTPException: 429 Too Many Requests (error code: 0): You are being blocked from accessing our API temporarily", None, ""},
	})
	l := FromText("Sorry, you've exceeded your rate limit. Please try again later.", now)
	assert.True(t, l.Throttle, "a rate limit is a throttle: %s", l.Why)
}

// A key or a login the provider refuses: no waiting ends it, a person
// fixes the key or logs in again.
func TestRefusedKeysAndLoginsStop(t *testing.T) {
	runTextCases(t, []textCase{
		{"OpenAI's code", `{"message":"Incorrect API key provided: sk-...Ss8A.","type":"invalid_request_error","code":"invalid_api_key","param":null}`, Stop, ""},
		{"OpenAI's words, without a body", "401 Incorrect API key provided: sk-...lETQ.", Stop, ""},
		{"Anthropic's error type", `API request failed: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, Stop, ""},
		{"Claude Code's expired login", `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired. Please obtain a new token or refresh your existing token."}} · Please run /login`, Stop, ""},
		{"Gemini's words", "✕ [API Error: API key not valid. Please pass a valid API key. (Status: INVALID_ARGUMENT)]", Stop, ""},
		{"Gemini's reason", `{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}`, Stop, ""},
		{"Codex gives up on a 401", "ERROR: exceeded retry limit, last status: 401 Unauthorized, request id: 9a4af5870a31a58e-WAW", Stop, ""},
		{"Codex's unexpected status", "unexpected status 401 Unauthorized: Invalid API key, url: http://localhost:20128/v1/responses", Stop, ""},
		{"an agent's API Error without a body", "✕ [API Error: 401 status code (no body)]", Stop, ""},
	})
}

// A tool or an API no rule was written from says its limit in plain
// words. They count in an error about a model, a provider or an agent, or
// where the words are a limit's alone and lead their line; not in prose, in
// a quote, or beside a look-alike's words.
func TestPlainWordsOfALimitCountInAnError(t *testing.T) {
	runTextCases(t, []textCase{
		{"a usage window, leading its line", "Error: You have reached the limit.", Wait, ""},
		{"a quota with its model", "Error: monthly quota exhausted for model acme-7b", Wait, ""},
		{"a usage window and its reset", "acme-cli error: usage limit reached for your plan. Try again in 3 hours.", Wait, "2026-01-29T19:29:33+02:00"},
		{"a provider rate-limits", "[ERROR] provider acme returned: rate limited, retry later", Wait, ""},
		{"too many requests to the model", "Error: Too many requests to the model, slow down", Wait, ""},
		{"an inference service at capacity", "Error: inference service at capacity, try again in 20 seconds", Wait, "2026-01-29T16:29:53+02:00"},
		{"a 503 from the model's upstream", "error: upstream model returned 503 Service Unavailable", Wait, ""},
		{"credit run out", "Error: your credits have run out. Top up at acme.ai/billing", Stop, ""},
		{"a key refused", "Error: invalid API key for provider acme", Stop, ""},
		{"a model the account may not use", "Error: you do not have access to this model", Stop, ""},
		{"a usage policy", `{"error":{"message":"Your prompt violates our usage policy."}}`, Stop, ""},
		{"an agent's guard", "agent halted: same tool call repeated 6 times in a row", Loop, ""},
		{"a limit of retries is no limit", "Error: You have reached the limit of 3 retries", None, ""},
		{"a disk's quota", "cp: error writing 'out.bin': Disk quota exceeded", None, ""},
		{"a program's infinite loop", "Error: infinite loop detected in template expansion", None, ""},
		{"Docker Hub's pull limit", "ERROR docker: toomanyrequests: You have reached your pull rate limit.", None, ""},
		{"GitHub's API", "Error: GitHub API rate limit exceeded for 10.0.0.1", None, ""},
		{"a quote", `The agent said "usage limit reached" yesterday`, None, ""},
		{"prose about a model", "The model replied that the server was overloaded earlier, so I retried.", None, ""},
		{"no model named, not leading", "Error: the upload service is at capacity", None, ""},
		{"a test of a quota", "--- FAIL: TestQuota (0.00s)\n    quota_test.go:12: error: quota exceeded for model x, want nil", None, ""},
		{"a tool's own words beside them decide", "Error: You've hit your limit · resets 5pm (Europe/Vilnius). Too many requests to the model.", Wait, "2026-01-29T17:00:00+02:00"},
	})
}

func TestResetTimesThatCannotBeUsed(t *testing.T) {
	runTextCases(t, []textCase{
		{"a zone this machine does not know", "You've hit your limit · resets 5pm (Mars/Olympus)", Wait, ""},
		{"a Unix time already past", "Claude AI usage limit reached|1766502000", Wait, ""},
		{"a date more than MaxAhead off", "You've hit your weekly limit · resets Jul 31, 2am (UTC)", Wait, ""},
		{"a date with a year already past", "You've hit your usage limit. Upgrade to Plus, or try again at Jan 5th, 2026 8:19 PM.", Wait, ""},
		{"no such day", "You've hit your weekly limit · resets Feb 30, 2am (UTC)", Wait, ""},
		{"no such hour", "You've hit your limit · resets 13pm", Wait, ""},
		{"a bare number is no time", "You've hit your limit · resets 5", Wait, ""},
		{"a capped limit whose reset is past still waits", `{"error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-01-01 at 00:00 UTC."}}`, Wait, ""},
	})
}

func TestWhyNamesWhatWasRecognised(t *testing.T) {
	cases := []struct{ in, why string }{
		{"You've hit your limit · resets 5pm (Europe/Vilnius)", "You've hit your limit (resets 2026-01-29 17:00 Europe/Vilnius)"},
		{"You've hit your limit · resets 5pm", "You've hit your limit (resets 2026-01-29 17:00 Europe/Vilnius)"},
		{"Claude usage limit reached. Your limit will reset at 7pm (Asia/Tokyo).", "Claude usage limit reached (resets 2026-01-30 19:00 Asia/Tokyo)"},
		{"Your usage allocation has been disabled by your admin", "Your usage allocation has been disabled"},
		{`{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`, "API error insufficient_quota"},
		{"You've hit your\n  session limit", "You've hit your session limit"},
		{`{"error":{"message":"<400> InternalError.Algo.DataInspectionFailed: Input text data may contain inappropriate content."}}`, "content refused: DataInspectionFailed"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.why, FromText(tc.in, now).Why, tc.in)
	}
}

func TestUntilAppliesTheDefaultWaitOnlyWhenNoResetWasNamed(t *testing.T) {
	named := FromText("You've hit your limit · resets 5pm (Europe/Vilnius)", now)
	assert.Equal(t, named.Reset, named.Until(now, DefaultWait))

	unnamed := FromText("You've hit your limit", now)
	assert.Equal(t, now.Add(time.Hour), unnamed.Until(now, DefaultWait))

	assert.True(t, FromText("Credit balance is too low", now).Until(now, DefaultWait).IsZero(), "a stop lifts at no time")
	assert.True(t, Limit{}.Until(now, DefaultWait).IsZero())
}

func TestKindNames(t *testing.T) {
	assert.Equal(t, "none", None.String())
	assert.Equal(t, "wait", Wait.String())
	assert.Equal(t, "stop", Stop.String())
	assert.Equal(t, "Kind(7)", Kind(7).String())
}

// FromText reads only the last MaxScan bytes: a limit message further back
// is history, not what ended this run.
func TestOnlyTheLastMaxScanBytesAreRead(t *testing.T) {
	filler := strings.Repeat("building...\n", MaxScan/12+1)

	l := FromText("You've hit your limit · resets 5pm (Europe/Vilnius)\n"+filler, now)
	assert.Equal(t, None, l.Kind, "a message more than MaxScan bytes back is not read")

	l = FromText(filler+"You've hit your limit · resets 5pm (Europe/Vilnius)\n", now)
	assert.Equal(t, Wait, l.Kind, "a message at the end is read however long the text")
}

// A JSON line cut by the window can't be read as JSON; its tail is left
// out rather than read as plain text, where a quoted limit would count.
func TestAJSONLineCutByTheWindowIsLeftOut(t *testing.T) {
	quote := `{"type":"user","message":{"content":[{"type":"tool_result","content":"` +
		strings.Repeat("x", MaxScan) + `\nYou've hit your limit · resets 5pm (Europe/Vilnius)"}]}}`
	assert.Equal(t, None, FromText(quote, now).Kind, "the tail of a tool result")
	assert.Equal(t, None, FromText(quote+"\nall done", now).Kind)

	plain := strings.Repeat("x", MaxScan) + " done\nYou've hit your limit"
	assert.Equal(t, Wait, FromText(plain, now).Kind, "a long plain line is cut, not dropped")
}

// Only the last maxHits matches in the window decide, so that an input of
// thousands of limit messages, each naming a zone to load, costs no more
// than a few (BenchmarkFromTextManyMessages). Real output ends with one to
// three.
func TestOnlyTheLastFewMessagesDecide(t *testing.T) {
	in := "Your usage allocation has been disabled by your admin\n" +
		strings.Repeat("You've hit your limit · resets 5pm (Nowhere/Zone)\n", maxHits-1) +
		"You've hit your limit · resets 6pm (Europe/Vilnius)\n"
	l := FromText(in, now)
	require.Equal(t, Wait, l.Kind, "the stop is more than maxHits messages back")
	assert.Equal(t, "2026-01-29T18:00:00+02:00", l.Reset.Format(time.RFC3339))

	in = strings.Repeat("You've hit your limit · resets 5pm (Nowhere/Zone)\n", maxHits-2) +
		"Your usage allocation has been disabled by your admin\n" +
		"You've hit your limit · resets 6pm (Europe/Vilnius)\n"
	assert.Equal(t, Stop, FromText(in, now).Kind, "a stop among the last maxHits messages decides")
}

// Of several Waits, the latest reset decides: waiting until then outlasts
// every limit the text shows.
func TestTheLatestResetDecides(t *testing.T) {
	l := FromText("You've hit your limit · resets 9pm (Europe/Vilnius)\nYou've hit your limit · resets 6pm (Europe/Vilnius)\nYou've hit your limit", now)
	require.Equal(t, Wait, l.Kind)
	assert.Equal(t, "2026-01-29T21:00:00+02:00", l.Reset.Format(time.RFC3339))
}

// A reset in the machine's local zone is named by its abbreviation, not
// as "Local".
func TestWhyNamesTheLocalZoneByItsAbbreviation(t *testing.T) {
	local := time.Date(2026, 1, 29, 16, 29, 33, 0, time.Local)
	l := FromText("You've hit your limit · resets 5pm", local)
	abbr, _ := l.Reset.Zone()
	assert.Equal(t, "You've hit your limit (resets "+l.Reset.Format("2006-01-02 15:04")+" "+abbr+")", l.Why)
	assert.NotContains(t, l.Why, "Local")
}

// OpenAI names the window of its rate limit: a day's is a usage window
// that lifts at its reset, a minute's a throttle.
func TestADaysRateLimitIsNoThrottle(t *testing.T) {
	perDay := FromText("Rate limit reached for o4-mini in organization org-x on requests per day (RPD): Limit 200, Used 200, Requested 1. Please try again in 7m12s.", now)
	assert.Equal(t, Wait, perDay.Kind)
	assert.False(t, perDay.Throttle, "requests per day")
	perMinute := FromText("Rate limit reached for o4-mini in organization org-x on tokens per min (TPM): Limit 200, Used 200, Requested 1. Please try again in 2s.", now)
	assert.Equal(t, Wait, perMinute.Kind)
	assert.True(t, perMinute.Throttle, "tokens per minute")
}

// The seventh held-out set's families: 5-hour windows of MiniMax and
// Zhipu (in Chinese, its reset too), Freebuff's daily free usage, a day's
// tokens through Claude Code; the throttles of Fireworks, Trae's queue
// and a retrying client's 502; stops for a short balance, a model the
// account may not use, a blocked account, content refused; the loop
// guards of Cline and dirge; and an MCP tool's 429, which is none.
func TestTheSeventhSetsFamilies(t *testing.T) {
	runTextCases(t, []textCase{
		{"MiniMax's 5-hour window", "Error: HTTP 429: usage limit exceeded, 5-hour usage limit reached for Token Plan Starter (0/0 used), resets at 2026-01-29T18:00:00Z (2056)\nDetails: {'type': 'error', 'error': {'type': 'rate_limit_error'}}", Wait, "2026-01-29T18:00:00Z"},
		{"Zhipu's 5-hour window, in Chinese and China's time", `{"error":{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2026-01-30 03:41:44 重置。"}}`, Wait, "2026-01-30T03:41:44+08:00"},
		{"Freebuff's day", "⚠️ You have used all of today’s free usage on this account. Come back in 3h 47m — your free usage resets automatically at midnight Pacific.", Wait, "2026-01-29T20:16:33+02:00"},
		{"a day's tokens through Claude Code", "API Error: Request rejected (429) - Too many tokens per day, please wait before trying again.", Wait, ""},
		{"Codex's code as a label", "usage_limit_reached: The usage limit has been reached", Wait, ""},
		{"Fireworks' body", "{'error': 'Too Many Requests', 'message': 'You have exceeded your usage limits. Please try again later.'}", Wait, ""},
		{"Trae's queue", "Too many requests right now. You’re in the queue at position 10.", Wait, ""},
		{"a retrying client's 502", "⟳ Retry 10/15 after HTTP 502, waiting 121673ms", Wait, "2026-01-29T16:31:34+02:00"},
		{"Zhipu's short balance", `[CodexProxy] Upstream 429: {"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`, Stop, ""},
		{"Claude Code's selected model", "There's an issue with the selected model (claude-haiku-4-5-20251001). It may not exist or you may not have access to it.", Stop, ""},
		{"OpenRouter's providers for the model", `HTTP 404: {"error":{"message":"No allowed providers are available for the selected model.","code":404}}`, Stop, ""},
		{"Warp's blocked account", `Request failed with error: ErrorStatus(403, "{\"error\":\"Your account has been blocked from using AI features.\"}")`, Stop, ""},
		{"DeepSeek's content refusal", `deepseek request failed: HTTP 400: {"code": "invalid_request_error", "message": "Content Exists Risk"}`, Stop, ""},
		{"Alibaba's content refusal", `API Error: 400 {"error":{"message":"<400> InternalError.Algo.DataInspectionFailed: Input text data may contain inappropriate content.","code":"data_inspection_failed"}}`, Stop, ""},
		{"Cline's guard", "Latest: tool_execution_failed: Detected 5 consecutive identical calls to `editor`; stopping to avoid a loop.", Loop, ""},
		{"Cline's failures", "Cline hit repeated tool call failures. Try guiding it with a new prompt.", Loop, ""},
		{"dirge's guard", "Permission denied: Doom loop: repeated identical webfetch call", Loop, ""},
		{"an MCP tool's 429", `{"content":[{"text":"HTTP 429","type":"text"}],"is_error":true,"mcp_tool_use_id":"sevt_01","type":"agent.mcp_tool_result"}`, None, ""},
	})
	assert.False(t, FromText("API Error: Request rejected (429) - Too many tokens per day, please wait before trying again.", now).Throttle, "a day's window")
	assert.True(t, FromText("API Error: Request rejected (429) - Too many tokens, please wait before trying again.", now).Throttle, "no day named: a throttle")
}

// Round 18's wordings, from AI in CI and the forums: loop detectors that
// count identical calls, Claude Code's JSON result with its API's status,
// a code reviewer's hourly limit, Copilot's spent quota as a proxy prints
// it, a model that is not there, and prose that puts a 429 in inline code.
func TestLoopDetectorsReviewLimitsAndMissingModels(t *testing.T) {
	runTextCases(t, []textCase{
		{"OpenClaw blocks identical calls", `tool loop: tool=exec level=critical action=block message="CRITICAL: Called exec with identical arguments and identical outcomes 10 times."`, Loop, ""},
		{"OpenClaw warns of identical calls", "WARNING: You have called web_fetch 12 times with identical arguments.", Loop, ""},
		{"a harness refuses the previous turn's call", "You just made the exact same tool call as your previous turn.", Loop, ""},
		{"Qwen Code skips a queued call", "Skipped because loop detection stopped the current turn before this tool call could run.", Loop, ""},
		{"a daemon stops a failing call", "Run stopped: the agent repeated a failing Bash call 10x without progress.", Loop, ""},
		{"Claude Code's result, cut off in a week's window", `{"type":"result","subtype":"success","api_error_status":429,"result":"You've hit your weekly`, Wait, ""},
		{"Claude Code's result with a login refused", `"api_error_status": 401, "result": "Failed to authenticate."`, Stop, ""},
		{"Claude Code's result with a busy server", `{"type":"result","is_error":true,"api_error_status":529}`, Wait, ""},
		{"a reviewer's limit with its wait in bold", "## Review limit reached\n\n**Next review available in:** **9 minutes**", Wait, "2026-01-29T16:38:33+02:00"},
		{"a reviewer's wait of minutes and seconds", "## Rate limit exceeded\n\nPlease wait **24 minutes and 26 seconds** before requesting another review.", Wait, "2026-01-29T16:53:59+02:00"},
		{"Copilot's spent quota and its reset", "quota id: \"premium_interactions\"\nentitlement: 300\nquota remaining: -1\nquota reset date utc: \"2026-02-01T00:00:00.000Z\"", Wait, "2026-02-01T00:00:00Z"},
		{"Copilot's quota not spent", "quota id: \"premium_interactions\"\nentitlement: 300\nquota remaining: 12", None, ""},
		{"Anthropic's retired model", "API Error: 404 not_found_error - model: claude-3-opus-20240229", Stop, ""},
		{"Anthropic's missing file is no limit", `API Error: 404 {"type":"error","error":{"type":"not_found_error","message":"File not found: file_011"}}`, None, ""},
		{"Gemini's missing model", "GeminiException 404: models/gemini-9-pro is not found for API version v1beta", Stop, ""},
		{"a Google key where a token is wanted", "openai.AuthenticationError: Error code: 401 - API keys are not supported by this API.", Stop, ""},
		{"a 429 in prose's inline code", "When the chat reaches its message limit I see the `429 Too Many Requests` error in the console.", None, ""},
		{"a place is no reset", "Error: rate limit exceeded. The model is available in 2 regions.", Wait, ""},
	})
	l := FromText(`{"type":"result","subtype":"success","api_error_status":429,"result":"You've hit your weekly`, now)
	assert.False(t, l.Throttle, "a week's window is no throttle: %s", l.Why)
}

// Round 19's wordings, from evaluation and batch work and from the
// inference hosts: Google's quota only in Google's shape, the SDKs' and
// hosts' own words for a throttle, a day's free models, a session's window,
// credit and spending limits, models a project may not use, and code and
// payments that only look like a limit.
func TestInferenceHostsAndEvalPipelinesLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"Google's quota metric", "429 Quota exceeded for quota metric 'Generate Content API requests per minute'", Wait, ""},
		{"another service's quota", "API request failed with status code 429: Quota exceeded for swe-bench-m/test. Please try again later.", None, ""},
		{"Cohere's SDK throttles", "cohere.errors.too_many_requests_error.TooManyRequestsError: status_code: 429", Wait, ""},
		{"Cohere refuses a token", "cohere.errors.unauthorized_error.UnauthorizedError: status_code: 401, body: {'message': 'invalid api token'}", Stop, ""},
		{"Cerebras' codes", `{"message":"Requests per minute limit exceeded - too many requests sent.","type":"too_many_requests_error","param":"quota","code":"request_quota_exceeded"}`, Wait, ""},
		{"a 402 from a model's proxy", "HfHubHTTPError: 402 Client Error: Payment Required for url: https://huggingface.co/api/inference-proxy/together/v1/chat/completions", Stop, ""},
		{"the Batch API's queue", "BatchError(code='token_limit_exceeded', message='Enqueued token limit reached for gpt-4o-mini in organization org-1. Limit: 2,000,000 enqueued tokens.')", Wait, ""},
		{"a gateway's capacity", "Due to high demand our AI capacities are overloaded. Please, try again in 2 minutes.", Wait, "2026-01-29T16:31:33+02:00"},
		{"a day of free models", `429 {"error":{"message":"Rate limit exceeded: free-models-per-day"}}`, Wait, ""},
		{"Ollama Cloud's session window", "you (ae2055838) have reached your session usage limit, upgrade for higher limits: https://ollama.com/upgrade", Wait, ""},
		{"MiMo Code's dialog", "Continue after repeated failures", Loop, ""},
		{"Vertex's model out of reach", "Publisher Model `projects/p/locations/global/publishers/google/models/claude-x` was not found or your project does not have access to it.", Stop, ""},
		{"a model without a free tier", "ResourceExhausted: 429 Gemini 2.5 Pro Preview doesn't have a free quota tier.", Stop, ""},
		{"xAI's spent credits or spending limit", `429 "Your team 16f2 has either used all available credits or reached its monthly spending limit."`, Stop, ""},
		{"xAI's new team", `403 "Your newly created team doesn't have any credits or licenses yet."`, Stop, ""},
		{"Grok's blocked team", "403 Forbidden: personal-team-blocked:spending-limit:", Stop, ""},
		{"xAI's endpoint denied", `HTTP 403: {"code":"permission-denied","error":"Access to the chat endpoint is denied."}`, Stop, ""},
		{"credit run out, said to you", "You've run out of credits. Add credits to continue.", Stop, ""},
		{"a balance not enough", "Account balance not enough to run this query, please recharge", Stop, ""},
		{"a host's 401 through a client", "Perplexity API error: Request failed with status code 401", Stop, ""},
		{"a diff's code that raises a credit error", "-    raise InsufficientBalanceError(\n-        message=\"You have no credits left to run an agent.\",\n-    )", None, ""},
		{"a traceback of the code that raised it", "    raise RuntimeError(f\"Daily limit reached for {bot}.\")\nRuntimeError: Daily limit reached for beaver", Wait, ""},
		{"a payment processor's rate limit", "Stripe::RateLimitError in api/payments/payment_intents#succeeded", None, ""},
	})
	l := FromText(`429 {"error":{"message":"Rate limit exceeded: free-models-per-day"}}`, now)
	assert.False(t, l.Throttle, "a day's window is no throttle: %s", l.Why)
}

// Round 20's wordings, from front-ends, bots and operations tools: the web
// wrappers' throttles and a wait in words, Chinese clients' rate limits, a
// gateway whose provider failed, an iteration cap, accounts in arrears, a
// key not given, an issue's tags before its message, a day's quota behind
// a terminal's wrap, and a translation service's quota.
func TestFrontEndsBotsAndGatewaysLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"too many messages to the model", "Error: You have sent too many messages to the model. Please try again later.", Wait, ""},
		{"ChatGPT's hour of requests", "Too many requests in 1 hour. Try again later.", Wait, ""},
		{"one message at a time, a minute in words", `{"detail":"Only one message at a time. Please allow any other responses to complete before sending another message, or wait one minute."}`, Wait, "2026-01-29T16:30:33+02:00"},
		{"Poe's bot limit", "You have exceeded rate limit to query bot using User API Key. Try again later.", Wait, ""},
		{"a gateway's provider failed", `{"success":false,"error":[{"code":2005,"message":"Failed to get response from provider"}]}`, Wait, ""},
		{"requests too frequent, in Chinese", "接口响应错误 - 请求过于频繁，请慢一点。", Wait, ""},
		{"rate limited, in Chinese, leading its line", "速率限制，请重试。", Wait, ""},
		{"rate limits described, in Chinese", "文档介绍了速率限制的配置方法。", None, ""},
		{"an agent's cap of tool calls", "I reached the maximum number of tool call iterations (200) without completing the task.", Loop, ""},
		{"no key given", "openai.error.AuthenticationError: You didn't provide an API key.", Stop, ""},
		{"an SDK's AuthenticationError", "anthropic.AuthenticationError: the model provider refused the request", Stop, ""},
		{"Zhipu's account in arrears", `Error code: 429, with error text {"error":{"code":"1113","message":"您的账户已欠费，请充值后重试。"}}`, Stop, ""},
		{"DashScope's arrearage", `{"error":{"message":"Access denied, please make sure your account is in good standing.","type":"Arrearage","code":"Arrearage"}}`, Stop, ""},
		{"an issue's tags before the message", "[Bug]: 403 Sorry, your account balance is insufficient", Stop, ""},
		{"a provider's 401 through an ops tool", "Error: failed while calling AI provider azureopenai: error, status code: 401, message: %!s(<nil>)", Stop, ""},
		{"a day's quota behind a wrap", "✕ [API Error: Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per\n  day per user per tier' of service 'cloudcode-pa.googleapis.com'.]", Wait, ""},
		{"a day's tokens of an organization", `reached organization TPD rate limit, current: 1508351, limit: 1500000`, Wait, ""},
		{"a translation service's quota", `[Custom DeepL] 456: {"message":"Quota Exceeded"}`, None, ""},
	})
	for _, in := range []string{
		"✕ [API Error: Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per\n  day per user per tier' of service 'cloudcode-pa.googleapis.com'.]",
		`reached organization TPD rate limit, current: 1508351, limit: 1500000`,
	} {
		l := FromText(in, now)
		assert.False(t, l.Throttle, "a day's window is no throttle: %s", l.Why)
	}
}

// Round 21's wordings, from hosted agents and loop runners and from the
// model APIs in other languages: Anthropic's 529 by its status alone,
// the agents' own words for a throttle, a window or a plan, guards that
// detect a stuck agent, Chinese providers' throttles, arrears, grants and
// moderation, a localized server error's label, a wait after 请等待, and a
// heading inside a JSON message.
func TestHostedAgentsAndLocalizedLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"a 529 by its status", "Error: Request failed: Request failed with status: 529 <unknown status code>", Wait, ""},
		{"Crush gives up on a rate limit", "failed to process events: maximum retry attempts reached for rate limit: 8", Wait, ""},
		{"Tabnine's rate limit", "You've reached the rate limit for sending messages with the current model!", Wait, ""},
		{"Windsurf's providers over their limit", "all API providers are over their global rate limit for trial users", Wait, ""},
		{"Warp's quota", "Request failed with error: QuotaLimit", Wait, ""},
		{"OpenCode Zen's free usage", "Free usage exceeded, subscribe to Go", Wait, ""},
		{"a heading in a JSON message", `{"stopReason":"Rate Limit","stopReasonMessage":"# You've reached your daily usage limit for Tabnine Protected"}`, Wait, ""},
		{"OpenManus' stuck state", "WARNING | app.agent.base:handle_stuck_state:163 - Agent detected stuck state. Added prompt: Observed duplicate responses.", Loop, ""},
		{"Autohand's guard", "LoopAbortedError: Repeated tool-call limit exceeded", Loop, ""},
		{"Trae's guard", "Loop was detected in the model and the request has been interrupted. Please retry or create a new task.", Loop, ""},
		{"API access paused", "Error from provider (Console): Upstream request failed: [permission_error] API access paused for this organization.", Stop, ""},
		{"Zed's plan", "cloud language model completion failed with status 403 Forbidden: You must subscribe to a plan in order to use models provided by Zed.", Stop, ""},
		{"Zed's key without the model", "Zed's API rejected the request due to insufficient permissions. Check that your API key has access to this model.", Stop, ""},
		{"ERNIE's access too frequent", "APIError: 访问过于频繁，请稍候再试", Wait, ""},
		{"erniebot's concurrency", "erniebot.errors.RequestLimitError: 并发超限", Wait, ""},
		{"Trae's queue in Chinese", "当前模型请求量较高，你目前排在第 83 位。", Wait, ""},
		{"Copilot's zh-CN wait", "很抱歉，你的请求受速率限制。请等待 70 seconds，然后重试。", Wait, "2026-01-29T16:30:43+02:00"},
		{"a pool of accounts limited", "Token error: All accounts are currently limited. Please wait 84152s.", Wait, "2026-01-30T15:52:05+02:00"},
		{"ERNIE's day through a relay", "relay error (channel id 2, user id: 1): Open api daily request limit reached", Wait, ""},
		{"Volcengine's paused model", "Your account has reached the set inference limit for the model, and the model service has been paused.", Stop, ""},
		{"Volcengine's arrears", "AccountOverdueError: 403 Forbidden", Stop, ""},
		{"iFlytek's app without a grant", "请求错误: 11200, {'header': {'code': 11200, 'message': 'AppIdNoAuthError:(17:17:15.673) domain.generalv3'}}", Stop, ""},
		{"iFlytek's moderation", "SparkException: 输入内容审核不通过，涉嫌违规，请重新调整输入内容", Stop, ""},
		{"Moonshot's content filter", `Error code: 400 - {'error': {'message': 'The request was rejected because it was considered high risk', 'type': 'content_filter'}}`, Stop, ""},
		{"identity verification", "Error code: 403 - RPM limit exceeded. Please complete identity verification to lift the restriction.", Stop, ""},
		{"a relay's sensitive words", `{'error': {'message': 'input contains sensitive words: [test]', 'type': 'new_api_error', 'code': 'sensitive_words_detected'}}`, Stop, ""},
		{"Yandex's model denied", `code = StatusCode.PERMISSION_DENIED details = "Access to model art://yandex-art/latest denied"`, Stop, ""},
		{"Copilot's Portuguese server error", "Erro do Servidor: rate limit exceeded Código de Erro: rate_limited", Wait, ""},
		{"Copilot's Turkish server error", "Sunucu Hatası: rate limit exceeded Hata Kodu: rate_limited", Wait, ""},
	})
}

// Round 22's wordings, from Go programs and from agents in games and
// research: Go's googleapi, a status of 5xx through an ops tool, Z.ai's
// windows and plan, a spent quota that names when it lifts, Volcengine's
// month with its offset, a service's own daily quota, a model API's 404
// and 403 through a client, the SDKs' PermissionDeniedError, and the
// search and module services' 429s as look-alikes.
func TestGoProgramsGamesAndResearchLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"Go's googleapi", `{"code": 400, "message": "genai send message error: googleapi: Error 429:"}`, Wait, ""},
		{"a provider's 503 through an ops tool", "Error: failed while calling AI provider openai: error, status code: 503, message: invalid character '<'", Wait, ""},
		{"Z.ai's plan in Chinese", "当前订阅套餐暂未开放GLM-5V-Turbo权限", Stop, ""},
		{"Z.ai's week or month, in China's time", `{"error":{"code":"1310","message":"Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-02-03 18:01:05"}}`, Wait, "2026-02-03T18:01:05+08:00"},
		{"Z.ai's words without its code, still China's time", "task `146398`: `Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-02-03 18:01:05`", Wait, "2026-02-03T18:01:05+08:00"},
		{"a wait in Chinese, in minutes", "当前模型已达速率限制，请 5 分钟后重试", Wait, "2026-01-29T16:34:33+02:00"},
		{"Copilot's weekly limit, its reset in numbers", "You've reached your weekly rate limit. Please upgrade your plan or wait for your limit to reset on 2026 2 3 22:48. Learn More", Wait, "2026-02-03T22:48:00+02:00"},
		{"a spent quota that names when it lifts", "You exceeded your current quota, please check your plan and billing details ... Please retry in 2h35m3.27s", Wait, "2026-01-29T19:04:36+02:00"},
		{"Volcengine's month and its offset", `{"error":{"code":"AccountQuotaExceeded","message":"You have exceeded the monthly usage quota. It will reset at 2026-02-03 23:59:59 +0800 CST.","type":"TooManyRequests"}}`, Wait, "2026-02-03T23:59:59+08:00"},
		{"a service's own daily quota", `"We have reached our daily quota. Please try again tomorrow."`, Wait, ""},
		{"a model API's 404 through a client", `ERROR: OpenAI API request failed with status 404 for command "Dig straight down" - Endpoint not found.`, Stop, ""},
		{"a fetch's 404 is no limit", "Error: fetch failed with status 404 for https://example.com/docs (model gpt-4o)", None, ""},
		{"a 403 page from the API's edge", "ERROR: LLM API Error: HTTP code 403 from API (<!DOCTYPE html>\n<title>Attention Required! | Cloudflare</title>", Stop, ""},
		{"the SDKs' PermissionDeniedError", "All model calls return PermissionDeniedError.\n3.Get 403 PermissionDeniedError", Stop, ""},
		{"arXiv's 429", "Error: ArXiv API error - Page request resulted in HTTP 429 (https://export.arxiv.org/api/query?search_query=llm)", None, ""},
		{"a Go module proxy's 429", "go: gopkg.in/tomb.v1@v1.0.0: unexpected status (https://goproxy.cn/gopkg.in/tomb.v1/@v/v1.0.0.info): 429 Too Many Requests", None, ""},
		{"Docker Hub's code", "toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading", None, ""},
	})
}

// Round 23's wordings, from computer-use and browser agents: a message
// pasted whole as inline code counts where one in prose's code does not,
// a model that does not exist for the account, a safety check to
// acknowledge, a key's user not found, a page agent's guard, a content
// refusal of a screenshot, and a wait written as a clock.
func TestComputerUseAndBrowserAgentsLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"a message pasted whole as code", "`anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error', 'message': 'Number of request tokens has exceeded your daily rate limit'}}`", Wait, ""},
		{"a lead pasted whole as code", "`API Error: 529 Overloaded`", Wait, ""},
		{"a model the account may not use", "openai.NotFoundError: Error code: 404 - {'error': {'message': 'The model computer-use-preview does not exist or you do not have access to it.', 'code': 'model_not_found'}}", Stop, ""},
		{"Ark's retired endpoint", "Error: 404 The model or endpoint doubao-1-5-ui-tars-250428 does not exist or you do not have access to it.", Stop, ""},
		{"a safety check to acknowledge", `openai.BadRequestError: Error code: 400 - {'error': {'message': "Computer tool has unacknowledged safety check for ['cu_sc_1']"}}`, Stop, ""},
		{"OpenRouter's key without a user", "Failed to invoke google/gemini-2.5-pro with structured output:\n401 User not found.", Stop, ""},
		{"a page agent's guard", `⚠️ Loop detected: "click_element_by_index" has been called 4 times in a row with identical input.`, Loop, ""},
		{"a screenshot refused", "failed to call AI model service: 400 Input data may contain inappropriate content.", Stop, ""},
		{"a wait written as a clock", "Rate limit exceeded. Retry after 0:01:25 (HH:MM:SS).", Wait, "2026-01-29T16:30:58+02:00"},
		{"a clock without its format is no duration", "Rate limit exceeded. Retry after 0:01:25.", Wait, ""},
	})
	l := FromText("`anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error', 'message': 'Number of request tokens has exceeded your daily rate limit'}}`", now)
	assert.False(t, l.Throttle, "a day's rate limit is a window: %s", l.Why)
}

// Round 24's wordings, from the clouds' agent platforms: Bedrock's,
// Kiro's, Copilot Studio's, Vertex's, Databricks' and watsonx's throttles,
// Amazon Q's month, a logger's level before a message, a role or a region
// without the model, and another Google service's quota as a look-alike.
func TestCloudAgentPlatformsLimits(t *testing.T) {
	runTextCases(t, []textCase{
		{"Bedrock Agents' request rate", `the error message is "Your request rate is too high. Reduce the frequency of requests."`, Wait, ""},
		{"Bedrock's unavailable model", `{':exception-type': 'serviceUnavailableException', 'body': b'{"message":"Bedrock is unable to process your request."}'}`, Wait, ""},
		{"Kiro's busy service, its retry the throttle's wait", "Service is busy, retrying in 2s...", Wait, "2026-01-29T16:29:35+02:00"},
		{"Copilot Studio's planner", "Error GenAIToolPlannerRateLimitReached", Wait, ""},
		{"Vertex out of capacity", "RESOURCE_EXHAUSTED: Unable to submit request because the service is temporarily out of capacity. Try again later.", Wait, ""},
		{"Databricks' workspace limit", "Databricks rate limit reached for system.ai.qwen: REQUEST_LIMIT_EXCEEDED: Exceeded workspace QPS rate limit.", Wait, ""},
		{"watsonx's code", `{"errors":[{"code":"rate_limit_reached_requests","message":"Rate limit of 2 requests per 1s was reached"}]}`, Wait, ""},
		{"Amazon Q's month", "Unable to launch Q chat - Monthly request limit reached - The limits reset on 08/01", Wait, ""},
		{"a logger's level before the words", "[13:55:26] INFO     Rate limited on the OpenAI embeddings API, sleeping before retrying...", Wait, ""},
		{"an information line is no lead", "[13:55:26] INFORMATION about the rate limited flag", None, ""},
		{"Vertex's role not granted", "Error Code: 403, Message: Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/p/models/gemini-pro'", Stop, ""},
		{"Cortex's model not in the region", `remote service error: 400 '"The model you requested is unavailable in your region. To access it, enable cross region inference."'`, Stop, ""},
		{"another Google service's quota", "8 RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per region' of service 'run.googleapis.com'", None, ""},
	})
}
