package limits

import (
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// A rule is one built-in way a limit is written.
type rule struct {
	re   *regexp.Regexp
	kind Kind
	// throttle: a short rate or capacity throttle (see Limit.Throttle).
	throttle bool
	// capped: a spend or credit cap. It is a Wait when the text names when
	// it lifts ("You're out of usage credits · resets 5pm"), else a Stop.
	capped bool
	// lead: the match must lead its line (see leads), so that prose that
	// quotes a limit message does not count as one.
	lead bool
	// open: the match must not run on into a word ("You've hit your limit"
	// but not "You've hit your limit of three retries").
	open bool
	// field: the match is an error code and counts only as a field of a
	// JSON object or a Python dict ({"type":"rate_limit_error"}), not when
	// prose or a document names the code.
	field bool
	// daily: a throttle whose message names its window: one of a day's
	// (dailyQuota) is a usage window.
	daily bool
	// weak: a generic sign (a 429, "rate limit exceeded", an error code)
	// that a look-alike's words in the same message overrule: a request
	// too large for the context, a test's failure (see lookalikes).
	weak bool
	// why is Limit.Why. Empty: the matched text itself. Otherwise, when the
	// expression has a group, the group's text follows it.
	why string
	// needs are words, in lower case, that every match contains: the
	// expression runs only on a region that holds them all (a region holds
	// a few limit messages at most, and this spares it most of the rules).
	needs []string
	// notIn: words that, in the region, make the match no sign of this
	// rule (Gemini's 429 in OpenAI's words for a spent quota).
	notIn func() []*regexp.Regexp
	// generic: the plain words of a limit ("rate limited", "quota
	// reached", "out of credits", "stuck in a loop") that no tool's own
	// wording above names, for the tools and APIs whose words no rule was
	// written from. A generic sign is weak, and counts only where no other
	// rule's sign stands in its message, where the message names a model, a
	// provider, an agent or a model's API (modelContext), and where it
	// stands in an error: it leads its line, follows an error's words on
	// it (errorBefore) or is a field of an object.
	generic bool
	// bare: a generic sign that leads its line counts without a model's
	// name in its message: words a provider's or an agent's limit is
	// written in, and little else is ("usage limit reached", "out of
	// credits").
	bare bool
}

// apostrophe matches the apostrophe of "You've" as Claude Code, claude.ai
// and JSON-escaped output write it, or none at all.
const apostrophe = `(?:['’‘ʼ]|\\u2019)?`

// re compiles a rule's expression, case-insensitive.
func re(expr string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + expr) }

// rules are the built-in limit messages, each as its tool or API writes
// it. Where each comes from, with examples from the field, is in
// testdata/corpus.txt; the messages that wait:
//
//   - Claude Code: "You've hit your limit · resets 5pm (Europe/Vilnius)"
//     and its session, weekly, Opus and Sonnet variants; the older
//     "5-hour limit reached ∙ resets 9pm", "Claude usage limit reached.
//     Your limit will reset at 7pm (Asia/Tokyo).", "Limit reached · resets
//     Dec 17 at 6am (Europe/Oslo)", "Claude AI usage limit
//     reached|1766502000"; the desktop app's "Usage limit reached".
//   - claude.ai: "You’ve hit your limit for Claude messages. Limits will
//     reset at 9:30 AM."
//   - Codex: "You've hit your usage limit. ... try again in 5 days 22
//     hours 11 minutes."
//   - Gemini CLI and Gemini Code Assist: "You have exhausted your capacity
//     on this model. Your quota will reset after 8h44m7s.", "You have
//     exhausted your daily quota on this model."
//
// The throttles:
//
//   - Claude Code: "Request rejected (429)", "Repeated 529 Overloaded
//     errors", "Server is temporarily limiting requests", "API Error: 529
//     Overloaded.", "API Error: Rate limit reached".
//   - The APIs' rate-limit wording: OpenAI's "Rate limit reached for
//     gpt-4o in organization org-... Please try again in 1.6s.",
//     Anthropic's "This request would exceed the rate limit for your
//     organization", Azure OpenAI's "... have exceeded token rate limit of
//     your current OpenAI S0 pricing tier. Please retry after 9 seconds.",
//     Bedrock's "Too many tokens, please wait before trying again." and
//     ThrottlingException, Vertex's and Gemini's "Quota exceeded for ...",
//     "Resource has been exhausted (e.g. check quota)."; the error codes
//     rate_limit_error, overloaded_error, rate_limit_exceeded,
//     RESOURCE_EXHAUSTED.
//   - GitHub Copilot: "Sorry, you've hit a rate limit that restricts the
//     number of Copilot model requests ... Please try again in 2 hours.",
//     "Sorry, your request was rate-limited. Please wait 17 seconds ...".
//   - Gemini CLI's switch to a lesser model: "Rate limiting detected.
//     Automatically switching from gemini-2.5-pro to gemini-2.5-flash".
//   - Codex: "exceeded retry limit, last status: 429 Too Many Requests",
//     "We're currently experiencing high demand".
//
// The waits of a busy server, throttles too: Claude Code's "API Error (503
// upstream connect error ...)" and "API Error (api.anthropic.com | 504:
// Gateway time-out)", Codex's "unexpected status 502 Bad Gateway", Gemini's
// "The model is overloaded", OpenAI's "The server is overloaded or not
// ready yet" and server_is_overloaded.
//
// The loops: DashScope's "Repetitive tool calls detected in the
// conversation history" (through Qwen Code), Gemini CLI's "A potential
// loop was detected".
//
// The refusals under a provider's policy, stops: Claude Code's "Claude
// Code is unable to respond to this request, which appears to violate our
// Usage Policy", OpenAI's "Invalid prompt: your prompt was flagged as
// potentially violating our usage policy", Codex's "This content was
// flagged for possible cybersecurity risk", Anthropic's "Output blocked by
// content filtering policy", Gemini's FinishReasonSafety.
//
// The stops: Claude Code's and the Anthropic API's "This organization has
// been disabled.", "Your organization has disabled Claude subscription
// access", "Extra usage is required for long context requests" (a 429
// that waiting does not lift), its admin and credit caps; Copilot's "402
// You have no quota"; Cursor's "You've hit your usage limit · Get Cursor
// Pro"; OpenRouter's "This request requires more credits" and "More credits
// are required"; DeepSeek's "Insufficient Balance", Moonshot's "suspended due
// to insufficient balance" (a 429), Anthropic's "would exceed your
// account's monthly spend limit" (a rate_limit_error); OpenAI's
// insufficient_quota and billing codes, and Codex's word for them, "Quota
// exceeded. Check your plan and billing details."; Continue's "You have no credits
// remaining"; a client's "HTTP 402 Payment Required"; Claude Code's
// "Invalid API key · Please run /login" (authentication), and the APIs'
// refusals of a key or a login: authentication_error, invalid_api_key,
// API_KEY_INVALID, "Incorrect API key provided", "OAuth token has
// expired", Codex's "unexpected status 401 Unauthorized".
// rules is compiled on first use, so that a process that never reads a
// limit (a hook, a short command) does not pay for it at start.
var rules = sync.OnceValue(func() []rule {
	return append([]rule{
		// Usage windows.
		{re: re(`\byou` + apostrophe + `ve\s+hit\s+your\s+(?:(?:session|weekly|daily|hourly|opus|sonnet|usage|5-hour|five-hour)\s+)?limit(?:\s+for\s+claude\s+messages|\s+of\s+(?:requests|messages|prompts)(?:\s+with\s+[^\n.]+(?:\.\d[^\n.]*)*)?)?`),
			kind: Wait, lead: true, open: true, needs: []string{"hit", "limit"}},
		{re: re(`\b(?:(?:5|five)[- ]hour|session|weekly|daily|usage|opus(?:\s+weekly)?|sonnet(?:\s+weekly)?)\s+limit\s+reached`),
			kind: Wait, lead: true, open: true, needs: []string{"limit", "reached"}},
		{re: re(`\bclaude(?:\s+ai)?\s+usage\s+limit\s+reached`),
			kind: Wait, lead: true, open: true, needs: []string{"claude", "reached"}},
		{re: re(`\byou\s+have\s+exhausted\s+your\s+(?:capacity|daily\s+quota)`),
			kind: Wait, needs: []string{"exhausted"}},
		{re: re(`\byou\s+have\s+reached\s+your\s+daily\s+(?:[\w.-]+\s+)?quota\s+limit`),
			kind: Wait, lead: true, needs: []string{"daily", "quota"}},
		{re: re(`\busage\s+limit\s+reached\s+for\s+[\w.-]+`),
			kind: Wait, lead: true, needs: []string{"limit", "reached"}},
		{re: re(`\blimit\s+reached\s*[·•∙]\s*resets\b`),
			kind: Wait, lead: true, needs: []string{"limit", "reached", "resets"}},
		// Codex in Spanish: "Tu límite de uso se restablece el 26 may 2026,
		// 2:40 p.m."
		{re: re(`\btu\s+límite\s+de\s+uso\s+se\s+restablece\b`),
			kind: Wait, lead: true, needs: []string{"límite", "restablece"}},
		{re: re(`\byou` + apostrophe + `re\s+out\s+of\s+codex\s+messages`),
			kind: Wait, lead: true, needs: []string{"out", "codex"}},
		// Kiro's "The monthly usage limit has been reached" and "You've
		// reached your daily usage limit"; Copilot Free's "You've reached
		// your monthly chat messages limit"; Codex's "You've reached your
		// usage limit".
		{re: re(`\bthe\s+(?:(?:daily|weekly|monthly)\s+)?usage\s+limit\s+has\s+been\s+reached`),
			kind: Wait, lead: true, needs: []string{"usage", "reached"}},
		// Codex's error code as a label of its own line, as another agent
		// prints it: "usage_limit_reached: The usage limit has been reached".
		{re: re(`\busage_limit_reached:\s`),
			kind: Wait, lead: true, why: "usage_limit_reached", needs: []string{"usage_limit_reached"}},
		// MiniMax's "5-hour usage limit reached for Token Plan Starter";
		// Zhipu's "已达到 5 小时的使用上限" (the 5-hour usage cap is reached);
		// Freebuff's "You have used all of today’s free usage".
		{re: re(`\b(?:5|five)[- ]hour\s+usage\s+limit\s+reached\b`),
			kind: Wait, needs: []string{"hour", "reached"}},
		{re: regexp.MustCompile(`已达到\s*\d+\s*小时的使用上限`),
			kind: Wait, why: "5-hour usage cap reached (已达到 5 小时的使用上限)", needs: []string{"使用上限"}},
		{re: re(`\byou\s+have\s+used\s+all\s+of\s+today` + apostrophe + `s\s+free\s+usage\b`),
			kind: Wait, needs: []string{"today", "usage"}},
		{re: re(`\byou` + apostrophe + `ve\s+reached\s+your\s+(?:(?:daily|weekly|monthly)\s+)?(?:\([^)\n]{0,20}\)\s+)?(?:usage|chat\s+messages|completions)\s+limit\b`),
			kind: Wait, lead: true, needs: []string{"reached", "limit"}},
		// Gemini Code Assist's and Antigravity's "Individual quota
		// reached"; Qwen Code's "Free allocated quota exceeded" (a day's).
		{re: re(`\bindividual\s+quota\s+reached\b`),
			kind: Wait, needs: []string{"individual", "quota"}},
		// Copilot's quota, as a proxy prints its usage: "entitlement: 300
		// ... quota remaining: -1 ... quota reset date utc: ...", a month's
		// premium requests spent.
		{re: re(`\bquota[\s_]remaining\\?["']?\s*:\s*(?:-[\d.]+|0)\b`),
			kind: Wait, why: "Copilot quota spent", needs: []string{"entitlement", "remaining"}},
		// OpenRouter's day of free models: "Rate limit exceeded:
		// free-models-per-day"; Ollama Cloud's "you (...) have reached your
		// session usage limit, upgrade for higher limits".
		{re: re(`\bfree-models-per-day\b`),
			kind: Wait, needs: []string{"free-models-per-day"}},
		{re: re(`\bhave\s+reached\s+your\s+(?:session|weekly|hourly|daily)\s+usage\s+limit,\s+upgrade\s+for\s+higher\s+limits\b`),
			kind: Wait, needs: []string{"reached", "upgrade"}},
		// Warp's "Request failed with error: QuotaLimit"; OpenCode Zen's "Free
		// usage exceeded, subscribe to Go".
		{re: regexp.MustCompile(`\berror:\s+QuotaLimit\b`),
			kind: Wait, needs: []string{"quotalimit"}},
		{re: re(`\bfree\s+usage\s+exceeded\b`),
			kind: Wait, lead: true, needs: []string{"free", "exceeded"}},
		// Amazon Q's "Monthly request limit reached - The limits reset on
		// 08/01".
		{re: re(`\bmonthly\s+request\s+limit\s+reached\b`),
			kind: Wait, needs: []string{"monthly", "reached"}},
		// Baidu ERNIE's error 17 through a relay: "Open api daily request
		// limit reached".
		{re: re(`\bopen\s+api\s+daily\s+request\s+limit\s+reached\b`),
			kind: Wait, needs: []string{"daily", "reached"}},
		// Z.ai's code 1310: "Weekly/Monthly Limit Exhausted. Your limit will
		// reset at 2026-09-03 18:01:05"; its plan in Chinese, "当前订阅套餐暂未
		// 开放 ... 权限" (the subscription plan does not yet grant the model).
		{re: re(`\bweekly/monthly\s+limit\s+exhausted\b`),
			kind: Wait, needs: []string{"weekly/monthly"}},
		{re: re(`\bfree\s+allocated\s+quota\s+exceeded\b`),
			kind: Wait, needs: []string{"allocated", "quota"}},

		// Rate and capacity throttles, as their tools write them.
		{re: re(`\brequest\s+rejected\s+\(429\)`),
			kind: Wait, throttle: true, daily: true, lead: true, needs: []string{"(429)"}},
		// Claude Code's result as JSON ("claude -p --output-format json"),
		// which a loop runner logs: "api_error_status":429 beside the
		// message, which may be cut off ("You've hit your weekly"); a 401 or
		// 403 is a login refused, a 5xx or 529 a busy server.
		{re: re(apiErrorStatus + `(429)\b`),
			kind: Wait, throttle: true, daily: true, weak: true, why: "api_error_status ", needs: []string{"api_error_status"}},
		{re: re(apiErrorStatus + `(40[13])\b`),
			kind: Stop, weak: true, why: "api_error_status ", needs: []string{"api_error_status"}},
		{re: re(apiErrorStatus + `(5(?:0[0234]|29))\b`),
			kind: Wait, throttle: true, weak: true, why: "api_error_status ", needs: []string{"api_error_status"}},
		// CodeRabbit's review limit: "Review limit reached ... Next review
		// available in: 9 minutes", "you've reached your PR review limit".
		{re: re(`\b(?:review\s+limit\s+reached|you` + apostrophe + `ve\s+reached\s+your\s+pr\s+review\s+limit)\b`),
			kind: Wait, throttle: true, lead: true, needs: []string{"review", "limit"}},
		// OpenAI's Batch API: "Enqueued token limit reached for gpt-4o-mini",
		// lifted as batches in progress complete; EPAM AI DIAL's "Due to high
		// demand our AI capacities are overloaded".
		{re: re(`\benqueued\s+token\s+limit\s+reached\b`),
			kind: Wait, throttle: true, needs: []string{"enqueued"}},
		{re: re(`\bour\s+AI\s+capacities\s+are\s+overloaded\b`),
			kind: Wait, throttle: true, needs: []string{"capacities", "overloaded"}},
		// ChatGPT's web backend: "Too many requests in 1 hour. Try again
		// later.", "Only one message at a time. ... or wait one minute.";
		// Poe's "You have exceeded rate limit to query bot"; Cloudflare AI
		// Gateway's "Failed to get response from provider" (code 2005, the
		// provider behind it failed). Chinese clients' words for a
		// provider's rate limit: "请求过于频繁" (requests too frequent),
		// "请求速率超过限制" (the request rate over the limit), "速率限制"
		// (rate limited) leading a line.
		{re: re(`\btoo\s+many\s+requests\s+in\s+1\s+hour\b`),
			kind: Wait, throttle: true, needs: []string{"many", "hour"}},
		{re: re(`\bonly\s+one\s+message\s+at\s+a\s+time\.\s+please\s+allow\s+any\s+other\s+responses\s+to\s+complete\b`),
			kind: Wait, throttle: true, needs: []string{"one message", "allow"}},
		{re: re(`\bexceeded\s+rate\s+limit\s+to\s+query\s+bot\b`),
			kind: Wait, throttle: true, needs: []string{"exceeded", "query"}},
		{re: re(`\bfailed\s+to\s+get\s+response\s+from\s+provider\b`),
			kind: Wait, throttle: true, needs: []string{"response from provider"}},
		{re: regexp.MustCompile(`(?:请求|访问)过于频繁|请求速率超过限制|请求速度过快`),
			kind: Wait, throttle: true, why: "requests too frequent (请求过于频繁)", needs: []string{"过"}},
		// Copilot Chat in Chinese: "你的请求受速率限制" (your request is rate
		// limited); Trae's queue: "当前模型请求量较高" (the model's requests are
		// many); erniebot's RequestLimitError (并发超限, concurrency exceeded).
		{re: regexp.MustCompile(`模型请求量较高|请求受速率限制`),
			kind: Wait, throttle: true, why: "the model's requests are many (模型请求量较高)", needs: []string{"请求"}},
		{re: regexp.MustCompile(`\bRequestLimitError\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"requestlimiterror"}},
		// Antigravity Manager's pool: "All accounts are currently limited.
		// Please wait 84152s."
		{re: re(`\ball\s+accounts\s+are\s+currently\s+limited\b`),
			kind: Wait, needs: []string{"accounts", "limited"}},
		{re: regexp.MustCompile(`速率限制`),
			kind: Wait, throttle: true, lead: true, why: "rate limited (速率限制)", needs: []string{"速率限制"}},
		// Anthropic's 529 (overloaded), a status no other API answers: goose's
		// "Request failed with status: 529 <unknown status code>"; Crush's
		// "maximum retry attempts reached for rate limit"; Tabnine's
		// "You've reached the rate limit for sending messages"; Windsurf's
		// "all API providers are over their global rate limit".
		{re: re(`\bstatus(?:\s+code)?:?\s+(529)\b`),
			kind: Wait, throttle: true, weak: true, why: "HTTP ", needs: []string{"529"}},
		{re: re(`\bmaximum\s+retry\s+attempts\s+reached\s+for\s+rate\s+limit\b`),
			kind: Wait, throttle: true, needs: []string{"retry", "rate"}},
		{re: re(`\byou` + apostrophe + `ve\s+reached\s+the\s+rate\s+limit\s+for\s+sending\s+messages\b`),
			kind: Wait, throttle: true, needs: []string{"reached", "sending"}},
		{re: re(`\bproviders\s+are\s+over\s+their\s+(?:global\s+)?rate\s+limit\b`),
			kind: Wait, throttle: true, needs: []string{"providers", "over"}},
		// The clouds' throttles: Bedrock's "Your request rate is too high"
		// and serviceUnavailableException, Kiro's "Service is busy, retrying
		// in 2s", Copilot Studio's GenAIToolPlannerRateLimitReached, Vertex's
		// "the service is temporarily out of capacity", Databricks'
		// REQUEST_LIMIT_EXCEEDED, watsonx's rate_limit_reached_requests.
		{re: re(`\byour\s+request\s+rate\s+is\s+too\s+high\b`),
			kind: Wait, throttle: true, needs: []string{"rate", "high"}},
		{re: regexp.MustCompile(`\b(?i:service)UnavailableException\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"unavailableexception"}},
		{re: re(`\bservice\s+is\s+busy,\s+retrying\s+in\b`),
			kind: Wait, throttle: true, lead: true, needs: []string{"busy", "retrying"}},
		{re: regexp.MustCompile(`\bGenAIToolPlannerRateLimitReached\b`),
			kind: Wait, throttle: true, needs: []string{"genaitoolplannerratelimitreached"}},
		{re: re(`\bthe\s+service\s+is\s+temporarily\s+out\s+of\s+capacity\b`),
			kind: Wait, throttle: true, needs: []string{"out", "capacity"}},
		{re: regexp.MustCompile(`\bREQUEST_LIMIT_EXCEEDED\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"request_limit_exceeded"}},
		{re: re(`\brepeated\s+529\s+overloaded\s+errors`),
			kind: Wait, throttle: true, lead: true, needs: []string{"529", "overloaded"}},
		{re: re(`\bserver\s+is\s+temporarily\s+limiting\s+requests`),
			kind: Wait, throttle: true, lead: true, needs: []string{"limiting"}},
		{re: re(`\b529\s+overloaded\b`),
			kind: Wait, throttle: true, lead: true, needs: []string{"529", "overloaded"}},
		{re: re(`\bAPI\s+Error:\s+Rate\s+limit\s+reached`),
			kind: Wait, throttle: true, lead: true, needs: []string{"api", "reached"}},
		// Groq's words too: "Rate limit reached for model `llama-3.1-8b`
		// in organization ...". "on requests per day (RPD)" is a day's
		// window.
		{re: re(`\brate\s+limit\s+reached\s+for\s+(?:model\s+)?(?:\S+\s+in\s+)?organization`),
			kind: Wait, throttle: true, daily: true, needs: []string{"organization", "reached"}},
		// OpenAI's older words: "Rate limit reached for tokens. Limit:
		// 150000.000000 / min."
		{re: re(`\brate\s+limit\s+reached\s+for\s+(?:tokens|requests)\.\s+limit:`),
			kind: Wait, throttle: true, needs: []string{"reached", "limit:"}},
		{re: re(`(?:\b|[0-9])this\s+request\s+would\s+exceed\s+(?:the\s+rate\s+limit|your\s+(?:organization|account)` + apostrophe + `s\s+rate\s+limit)`),
			kind: Wait, throttle: true, needs: []string{"would", "exceed"}},
		{re: re(`\bexceeded\s+(?:the\s+)?(?:token|call)\s+rate\s+limit`),
			kind: Wait, throttle: true, needs: []string{"exceeded", "rate"}},
		{re: re(`\byou` + apostrophe + `ve\s+hit\s+a\s+rate\s+limit\s+that\s+restricts`),
			kind: Wait, throttle: true, needs: []string{"restricts"}},
		{re: re(`\byou` + apostrophe + `ve\s+hit\s+(?:your|the)\s+(?:global\s+|api\s+)?rate\s+limit`),
			kind: Wait, throttle: true, lead: true, needs: []string{"hit", "rate"}},
		{re: re(`\bsorry,\s+(?:you\s+have\s+been|you` + apostrophe + `ve\s+been|your\s+request\s+was)\s+(?:rate|speed)[\s-]+limited`),
			kind: Wait, throttle: true, daily: true, needs: []string{"sorry", "limited"}},
		{re: re(`\bsorry,\s+you\s+have\s+exceeded\s+the\s+[\w -]{1,30}?rate\s+limit\b`),
			kind: Wait, throttle: true, needs: []string{"sorry", "exceeded"}},
		// An agent's words for its provider's throttle: gpt-pilot's "Rate
		// limited by the API (we're over 'tokens per minute' ...)"; Codex's
		// stream error "stream disconnected before completion: Rate limit is
		// exceeded. Try again in 11 seconds."
		{re: re(`\brate\s+limited\s+by\s+the\s+api\b`),
			kind: Wait, throttle: true, lead: true, needs: []string{"limited", "api"}},
		{re: re(`\bdisconnected\s+before\s+completion:\s+rate\s+limit\s+(?:is\s+exceeded|exceeded|reached)\b`),
			kind: Wait, throttle: true, needs: []string{"disconnected", "completion"}},
		{re: re(`\byou\s+have\s+exceeded\s+your\s+[\w .-]{1,40}?\s+token\s+usage`),
			kind: Wait, throttle: true, needs: []string{"token", "usage"}},
		// Mistral's "Requests rate limit exceeded" and "Service tier capacity
		// exceeded for this model".
		{re: re(`\brequests\s+rate\s+limit\s+exceeded\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"requests", "exceeded"}},
		// LiteLLM's proxy: "Crossed TPM / RPM / Max Parallel Request Limit";
		// Moonshot's "request reached organization max RPM: 3".
		{re: re(`\brequest\s+reached\s+organization\s+max\s+(?:rpm|tpm|rpd|tpd)\b`),
			kind: Wait, throttle: true, lead: true, needs: []string{"reached", "max"}},
		// The same provider's words in a proxy's log: "reached organization
		// TPD rate limit, current: 1508351, limit: 1500000" (a day's tokens).
		{re: re(`\breached\s+organization\s+(?:tpm|rpm|tpd|rpd)\s+rate\s+limit\b`),
			kind: Wait, throttle: true, daily: true, needs: []string{"reached", "organization"}},
		{re: re(`\bcrossed\s+tpm\s*/\s*rpm\b`),
			kind: Wait, throttle: true, needs: []string{"crossed", "rpm"}},
		{re: re(`\bservice\s+tier\s+capacity\s+exceeded\b`),
			kind: Wait, throttle: true, needs: []string{"capacity", "exceeded"}},
		{re: re(`\bcurrently\s+experiencing\s+high\s+(?:demand|traffic)`),
			kind: Wait, throttle: true, needs: []string{"experiencing"}},
		{re: re(`\b(?:rate\s+limiting|slow\s+response\s+times)\s+detected`),
			kind: Wait, throttle: true, needs: []string{"detected"}},
		{re: re(`\bautomatically\s+switching\s+from\s+\S+\s+to\s+\S+`),
			kind: Wait, throttle: true, needs: []string{"switching"}},
		// Bedrock's "Too many tokens per day, please wait" is a day's window.
		{re: re(`\btoo\s+many\s+(?:requests|tokens)(?:\s+per\s+(?:minute|day))?,\s+please\s+wait`),
			kind: Wait, throttle: true, daily: true, needs: []string{"many", "wait"}},
		// Trae's queue: "Too many requests right now. You’re in the queue".
		{re: re(`\btoo\s+many\s+(?:requests\s+right\s+now|current\s+requests)\b`),
			kind: Wait, throttle: true, lead: true, needs: []string{"many", "requests"}},
		// Fireworks' body: {'error': 'Too Many Requests', 'message': ...}.
		{re: re(`\\?["']error\\?["']\s*:\s*\\?["']too\s+many\s+requests\\?["']`),
			kind: Wait, throttle: true, weak: true, needs: []string{"error", "many"}},
		// xAI's "Too many tokens for team ..."; Huawei ModelArts' "Too many
		// requests, the rate limit is 8000000 tokens per minute";
		// OpenRouter's "... is temporarily rate-limited upstream".
		{re: re(`\btoo\s+many\s+(?:tokens|requests)\s+for\s+team\b`),
			kind: Wait, throttle: true, needs: []string{"many", "team"}},
		{re: re(`\btoo\s+many\s+requests,\s+the\s+rate\s+limit\s+is\b`),
			kind: Wait, throttle: true, needs: []string{"many", "rate"}},
		{re: re(`\btemporarily\s+rate[\s-]limited\s+upstream\b`),
			kind: Wait, throttle: true, needs: []string{"rate", "upstream"}},
		// A 502, 503 or 504 from the model's API, or its word that it is
		// overloaded: waited out briefly, like a throttle. A bare "503
		// Service Unavailable" is not enough: a build's registry says it
		// too; the model's own client says whose it is.
		{re: re(`\bAPI\s+Error\s*(?::\s*|\(\s*)(?:[\w.-]+\s*\|\s*)?(50[234])\b`),
			kind: Wait, throttle: true, lead: true, why: "API Error ", needs: []string{"api", "50"}},
		{re: re(`\bunexpected\s+status\s+(50[234])\b`),
			kind: Wait, throttle: true, lead: true, why: "unexpected status ", needs: []string{"status", "50"}},
		// A client that names the API: "Error: Anthropic API error: 502 Bad
		// Gateway"; the JavaScript SDKs' status before an HTML page: "504
		// <html>".
		{re: re(`\b(?:anthropic|openai|gemini|deepseek|openrouter|mistral|groq|xai)\s+API\s+error\s*:\s*(50[234])\b`),
			kind: Wait, throttle: true, why: "API error ", needs: []string{"api", "50"}},
		// A retrying client's "Retry 10/15 after HTTP 502"; Continue's
		// "Provider: continue-proxy\nStatus Code: 504".
		{re: re(`\bafter\s+HTTP\s+(50[234])\b`),
			kind: Wait, throttle: true, weak: true, why: "HTTP ", needs: []string{"after", "50"}},
		{re: re(`\bprovider:\s+\S+\s+status\s+code:\s+(50[234])\b`),
			kind: Wait, throttle: true, why: "HTTP ", needs: []string{"provider", "50"}},
		{re: re(`\b(50[234])\s+<html>`),
			kind: Wait, throttle: true, lead: true, weak: true, why: "HTTP ", needs: []string{"<html>", "50"}},
		// Copilot's client: "Last error: CAPIError: 503 {...}".
		{re: regexp.MustCompile(`\bCAPIError:\s+(50[234])\b`),
			kind: Wait, throttle: true, why: "CAPIError ", needs: []string{"capierror", "50"}},
		// A retrying client's last word: "All 2 attempts failed. Last
		// status: 503 Service Unavailable."
		{re: re(`\blast\s+status:\s+(50[234])\b`),
			kind: Wait, throttle: true, weak: true, why: "last status ", needs: []string{"last", "50"}},
		// The OpenAI SDKs' words for a 5xx page: "openai.error.APIError:
		// HTTP code 502 from API (<!DOCTYPE html>", "openai.InternalServerError:
		// <html>\n<head><title>502 Bad Gateway</title>".
		{re: re(`\bHTTP\s+code\s+(50[234])\s+from\s+API\b`),
			kind: Wait, throttle: true, weak: true, why: "HTTP code ", needs: []string{"from", "50"}},
		// The same SDKs' 403 page from the API's edge ("HTTP code 403 from API
		// (<!DOCTYPE html> ... Attention Required! | Cloudflare"): a network
		// or a region blocked, a person acts.
		{re: re(`\bHTTP\s+code\s+(403)\s+from\s+API\b`),
			kind: Stop, weak: true, why: "HTTP code ", needs: []string{"from", "403"}},
		// A model API's status through a client that names it: "OpenAI API
		// request failed with status 404" (a model or endpoint not there);
		// Go's googleapi: "googleapi: Error 429:".
		{re: re(`\b(?:openai|anthropic|gemini|claude|mistral|groq|deepseek)\s+api\s+(?:request\s+)?(?:failed|error)[^\n]{0,30}?\bstatus(?:\s+code)?:?\s+(404)\b`),
			kind: Stop, weak: true, why: "HTTP ", needs: []string{"api", "404"}},
		{re: re(`\bgoogleapi:\s+Error\s+(429)\b`),
			kind: Wait, throttle: true, weak: true, why: "googleapi ", needs: []string{"googleapi", "429"}},
		{re: regexp.MustCompile(`\bInternalServerError:\s*<html>\s*<head><title>(50[234])\b`),
			kind: Wait, throttle: true, weak: true, why: "InternalServerError ", needs: []string{"internalservererror", "50"}},
		// An HTTP client's words for a 5xx from a model's host: httpx's
		// "Server error '503 Service Unavailable' for url
		// 'https://bedrock-runtime...'", requests' "503 Server Error: ... for
		// url: https://api.openai.com/...".
		{re: re(`\b(50[234])\b[^\n]{0,60}?\bfor\s+url:?\s+'?https?://` + modelHosts),
			kind: Wait, throttle: true, weak: true, why: "HTTP ", needs: []string{"url", "50"}},
		// requests' "429 Client Error: Too Many Requests for url:
		// https://api-inference.huggingface.co/..." from a model's host (a
		// model hub's download is a look-alike).
		{re: re(`\b(429)\s+client\s+error:\s+too\s+many\s+requests\s+for\s+url:?\s+'?https?://` + modelHosts),
			kind: Wait, throttle: true, weak: true, why: "HTTP ", needs: []string{"url", "429"}},
		{re: re(`\b(402)\s+client\s+error:\s+payment\s+required\s+for\s+url:?\s+'?https?://` + modelHosts),
			kind: Stop, why: "HTTP ", needs: []string{"url", "402"}},
		// DeepSeek's "The server is busy. Please try again later."
		{re: re(`\bthe\s+server\s+is\s+busy\b`),
			kind: Wait, throttle: true, lead: true, weak: true, needs: []string{"busy"}},
		// A Gemini client's (Dio's) words for a 503.
		{re: re(`\bGeminiException\b[^\n]{0,80}\bstatus\s+code\s+of\s+(50[234])\b`),
			kind: Wait, throttle: true, weak: true, why: "Gemini status ", needs: []string{"geminiexception", "50"}},
		{re: re(`\b(?:(?:the|our|that)\s+)?(?:model|server|servers|engine)\s+(?:is\s+|are\s+)?(?:currently\s+)?overloaded\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"overloaded"}},
		{re: regexp.MustCompile(`\bStatus:\s+(RESOURCE_EXHAUSTED)\b`),
			kind: Wait, throttle: true, why: "Gemini ", needs: []string{"resource_exhausted"}},
		{re: regexp.MustCompile(`\bcode\s+=\s+(ResourceExhausted)\s+desc\s+=`),
			kind: Wait, throttle: true, why: "gRPC ", needs: []string{"resourceexhausted"}},

		// Generic signs of a throttle.
		{re: re(`\brate[\s_-]?limit\s+(?:is\s+)?exceeded`),
			kind: Wait, throttle: true, lead: true, weak: true, needs: []string{"limit", "exceeded"}},
		{re: re(`\b429\s+too\s+many\s+requests`),
			kind: Wait, throttle: true, weak: true, needs: []string{"429", "many"}},
		{re: re(`\b(?:http(?:\s+status\s+code:)?|error\s+code:|(?:http)?status(?:code)?\\?["']?\s*:?)\s*429\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"429"}},
		{re: re(`\bthrottlingexception\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"throttlingexception"}},
		{re: re(`\bresource\s+(?:has\s+been\s+)?exhausted\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"resource", "exhausted"}},
		// Google's "Quota exceeded for quota metric '...'", "Quota exceeded
		// for aiplatform.googleapis.com/...": not another service's "Quota
		// exceeded for swe-bench-m/test".
		{re: re(`\bquota\s+exceeded\s+for\s+(?:quota\s+metric\b|metric:|[\w-]+\.googleapis\.)`),
			kind: Wait, throttle: true, weak: true, needs: []string{"quota", "exceeded"}},
		// Cohere's SDK: "cohere.errors.too_many_requests_error.TooManyRequestsError:
		// status_code: 429".
		{re: regexp.MustCompile(`\bTooManyRequestsError\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"toomanyrequestserror"}},
		{re: re(`\byou\s+exceeded\s+your\s+current\s+quota`),
			kind: Wait, throttle: true, lead: true, weak: true, needs: []string{"current", "quota"}},
		{re: regexp.MustCompile(`\bRateLimitError\b`),
			kind: Wait, throttle: true, weak: true, needs: []string{"ratelimiterror"}},
		// Spend and credit caps: a Stop unless they name when they lift.
		{re: re(`\byou` + apostrophe + `ve\s+hit\s+your\s+(?:org` + apostrophe + `s\s+monthly|monthly|individual)\s+(?:spend|usage)\s+limit`),
			kind: Stop, capped: true, lead: true, open: true, needs: []string{"hit", "limit"}},
		{re: re(`\byou` + apostrophe + `re\s+out\s+of\s+(?:usage\s+credits|extra\s+usage)`),
			kind: Stop, capped: true, lead: true, open: true, needs: []string{"out", "usage"}},
		{re: re(`\byou\s+have\s+reached\s+your\s+specified\s+(?:workspace\s+)?api\s+usage\s+limits`),
			kind: Stop, capped: true, needs: []string{"specified"}},

		// Refusals under the provider's usage or content policy: the
		// request must change, and a person changes it.
		{re: re(`\bclaude\s+code\s+is\s+unable\s+to\s+respond\s+to\s+this\s+request,?\s+which\s+appears\s+to\s+violate\s+our\s+usage\s+policy`),
			kind: Stop, lead: true, needs: []string{"violate", "policy"}},
		{re: re(`\binvalid\s+prompt:\s+your\s+prompt\s+was\s+flagged\s+as\s+potentially\s+violating\s+our\s+usage\s+policy`),
			kind: Stop, lead: true, needs: []string{"flagged", "policy"}},
		{re: re(`\bthis\s+content\s+was\s+flagged\s+for\s+possible\s+cybersecurity\s+risk`),
			kind: Stop, lead: true, needs: []string{"flagged", "cyber"}},
		{re: re(`\boutput\s+blocked\s+by\s+content\s+filtering\s+policy`),
			kind: Stop, lead: true, needs: []string{"blocked", "policy"}},
		{re: regexp.MustCompile(`\bFinishReason(?:Safety|ProhibitedContent|Blocklist|Spii)\b`),
			kind: Stop, why: "Gemini ", needs: []string{"finishreason"}},
		// Claude Code's "Fable 5's safeguards flagged this message" and
		// "Opus 5 (1M context)'s safeguards flagged this message".
		{re: re(apostrophe + `s\s+safeguards\s+flagged\s+this\s+message\b`),
			kind: Stop, needs: []string{"safeguards", "flagged"}},
		// Google's SDKs: "Candidate was blocked due to SAFETY", "Response
		// was blocked due to PROHIBITED_CONTENT".
		{re: regexp.MustCompile(`\b(?:[Cc]andidate|[Rr]esponse)\s+was\s+blocked\s+due\s+to\s+(SAFETY|PROHIBITED_CONTENT)\b`),
			kind: Stop, why: "Gemini blocked ", needs: []string{"blocked"}},
		// A provider's safety filter in Chinese: "您的请求包含不安全内容，已被系统拦截"
		// (your request holds unsafe content and was blocked).
		{re: regexp.MustCompile(`(?:包含|含有)不安全(?:内容|信息)`),
			kind: Stop, why: "safety filter (不安全内容)", needs: []string{"不安全"}},
		// DeepSeek's "Content Exists Risk"; Alibaba's (DashScope's)
		// DataInspectionFailed: "Input text data may contain inappropriate
		// content".
		{re: re(`\bcontent\s+exists\s+risk\b`),
			kind: Stop, needs: []string{"exists", "risk"}},
		{re: re(`\b(data_?inspection_?failed)\b`),
			kind: Stop, why: "content refused: ", needs: []string{"inspection"}},
		// OpenAI's "Your request was rejected as a result of our safety
		// system"; Google Flow's PUBLIC_ERROR_UNSAFE_GENERATION.
		{re: re(`\brejected\s+as\s+a\s+result\s+of\s+our\s+safety\s+system\b`),
			kind: Stop, needs: []string{"rejected", "safety"}},
		{re: regexp.MustCompile(`\bPUBLIC_ERROR_UNSAFE_(?:GENERATION|CONTENT|FACE|IDENTITY)\b`),
			kind: Stop, needs: []string{"public_error_unsafe"}},
		{re: re(`\btriggering\s+Azure\s+OpenAI` + apostrophe + `s\s+content\s+management\s+policy`),
			kind: Stop, needs: []string{"azure", "policy"}},
		{re: regexp.MustCompile(`\b(?:[Bb]locked\s+for\s+reason:\s+|BlockedReason\.)(SAFETY|PROHIBITED_CONTENT)\b`),
			kind: Stop, why: "Gemini blocked ", needs: []string{"blocked"}},

		// The provider's word that the agent loops.
		{re: re(`\brepetitive\s+tool\s+calls\s+detected\s+in\s+the\s+conversation`),
			kind: Loop, needs: []string{"repetitive"}},
		{re: re(`\ba\s+potential\s+loop\s+was\s+detected\b`),
			kind: Loop, lead: true, needs: []string{"potential", "loop"}},
		// An agent's own guard: GarraRUST's "agent error: tool loop
		// detected: file_write", asimi's msg="tool call loop detected".
		// Qwen Code's "Agent stopped: duplicate tool-call loop detected."
		{re: re(`\b(?:duplicate\s+)?tool[\s-]+(?:call[\s-]+)?loop\s+detected\b`),
			kind: Loop, lead: true, needs: []string{"tool", "loop"}},
		// QwenPaw's "Repetitive pattern detected. You are repeating similar
		// actions without progress"; the OpenRouter agent SDK's "tool "sh"
		// was invoked in 2 consecutive rounds with identical arguments".
		// Kimi Code's reminder: "You are repeating the exact same tool call
		// with identical parameters".
		{re: re(`\byou\s+are\s+repeating\s+the\s+exact\s+same\s+tool\s+call\b`),
			kind: Loop, needs: []string{"repeating", "exact"}},
		{re: re(`\brepetitive\s+pattern\s+detected\b`),
			kind: Loop, needs: []string{"repetitive", "pattern"}},
		{re: re(`\b(?:consecutive\s+rounds|times\s+in\s+a\s+row)\s+with\s+identical\s+arguments\b`),
			kind: Loop, needs: []string{"identical", "arguments"}},
		// Roo Code's and Kilo Code's guard: "Roo appears to be stuck in a
		// loop, attempting the same action (read_file) repeatedly";
		// OpenHands' AgentStuckInLoopError.
		{re: re(`\bappears\s+to\s+be\s+stuck\s+in\s+a\s+loop,\s+attempting\s+the\s+same\s+action\b`),
			kind: Loop, needs: []string{"stuck", "same"}},
		{re: regexp.MustCompile(`\bAgentStuckInLoopError\b`),
			kind: Loop, needs: []string{"agentstuckinlooperror"}},
		// Cline's "Detected 5 consecutive identical calls to `editor`;
		// stopping to avoid a loop" and "Cline hit repeated tool call
		// failures"; dirge's "Doom loop: repeated identical webfetch call".
		{re: re(`\bstopping\s+to\s+avoid\s+a\s+loop\b`),
			kind: Loop, needs: []string{"avoid", "loop"}},
		{re: re(`\bhit\s+repeated\s+tool\s+call\s+failures\b`),
			kind: Loop, needs: []string{"repeated", "failures"}},
		{re: re(`\bdoom\s+loop:\s+repeated\s+identical\b`),
			kind: Loop, needs: []string{"doom", "identical"}},
		// tidebreak's guard: "this exact call has now been made 3 times in a
		// row with the same arguments".
		{re: re(`\bthis\s+exact\s+call\s+has\s+(?:now\s+)?been\s+made\s+\d+\s+times\b`),
			kind: Loop, needs: []string{"exact", "times"}},
		// deer-flow's guard: "[LOOP DETECTED] You are repeating the same
		// tool calls", "[FORCED STOP] Repeated tool calls exceeded the
		// safety limit".
		{re: re(`\[(?:loop\s+detected|forced\s+stop)\]\s+(?:you\s+are\s+repeating|repeated\s+tool\s+calls)\b`),
			kind: Loop, lead: true, needs: []string{"]"}},
		// CrewAI's word to an agent that repeats a tool's input: "I must
		// stop using this action input. I'll try something else instead.";
		// heddle's "Repeated tool call blocked".
		{re: re(`\bI\s+must\s+stop\s+using\s+this\s+action\s+input\b`),
			kind: Loop, lead: true, needs: []string{"action", "input"}},
		{re: re(`\brepeated\s+tool\s+call\s+blocked\b`),
			kind: Loop, lead: true, needs: []string{"repeated", "blocked"}},
		// OpenClaw's loop detector: "Called exec with identical arguments and
		// identical outcomes 10 times", "You have called session_status 20
		// times with identical arguments"; little-coder's "You just made the
		// exact same tool call as your previous turn"; Qwen Code's "Skipped
		// because loop detection stopped the current turn"; Open Design's
		// "the agent repeated a failing Bash call 10x without progress".
		{re: re(`\bcalled\s+[\w.-]+\s+with\s+identical\s+arguments\s+and\s+identical\s+outcomes\b`),
			kind: Loop, needs: []string{"identical", "outcomes"}},
		{re: re(`\byou\s+have\s+called\s+[\w.-]+\s+\d+\s+times\s+with\s+identical\s+arguments\b`),
			kind: Loop, needs: []string{"called", "identical"}},
		{re: re(`\bmade\s+the\s+exact\s+same\s+tool\s+call\s+as\s+your\s+previous\s+turn\b`),
			kind: Loop, needs: []string{"exact", "previous"}},
		{re: re(`\bloop\s+detection\s+stopped\s+the\s+current\s+turn\b`),
			kind: Loop, needs: []string{"detection", "stopped"}},
		{re: re(`\bthe\s+agent\s+repeated\s+a\s+failing\s+[\w.-]+\s+call\s+\d+x\s+without\s+progress\b`),
			kind: Loop, needs: []string{"repeated", "progress"}},
		// MiMo Code's dialog after three identical calls: "Continue after
		// repeated failures".
		{re: re(`\bcontinue\s+after\s+repeated\s+failures\b`),
			kind: Loop, lead: true, needs: []string{"repeated", "failures"}},
		// nanobot's cap: "I reached the maximum number of tool call
		// iterations (200) without completing the task".
		{re: re(`\breached\s+the\s+maximum\s+number\s+of\s+tool\s+call\s+iterations\b`),
			kind: Loop, needs: []string{"maximum", "iterations"}},
		// OpenManus' "Agent detected stuck state"; Autohand's "Repeated
		// tool-call limit exceeded" and LoopAbortedError.
		{re: re(`\bagent\s+detected\s+stuck\s+state\b`),
			kind: Loop, needs: []string{"stuck", "state"}},
		{re: re(`\brepeated\s+tool[\s-]call\s+limit\s+exceeded\b`),
			kind: Loop, needs: []string{"repeated", "exceeded"}},
		{re: regexp.MustCompile(`\bLoopAbortedError\b`),
			kind: Loop, needs: []string{"loopabortederror"}},
		// Trae's guard: "Loop was detected in the model and the request has
		// been interrupted".
		{re: re(`\bloop\s+was\s+detected\s+in\s+the\s+model\b`),
			kind: Loop, lead: true, needs: []string{"loop", "detected"}},
		// page-agent's guard: "\"click_element_by_index\" has been called 4
		// times in a row with identical input".
		{re: re(`\bhas\s+been\s+called\s+\d+\s+times\s+in\s+a\s+row\s+with\s+identical\s+input\b`),
			kind: Loop, needs: []string{"called", "identical"}},

		// Stops.
		// An error code a client prints as a line of its own, not in an
		// object: "Error Type: insufficient_quota" (an Unreal plugin's log).
		{re: re(`\btype:\s+(insufficient_quota)\b`),
			kind: Stop, weak: true, why: "API error ", needs: []string{"insufficient_quota"}},
		// Authentication: no waiting ends it, a person logs in or fixes the
		// key. Claude Code's "Invalid API key · Please run /login" and
		// "Invalid API key · Fix external API key".
		{re: re(`\binvalid\s+api\s+key\s*·\s*(?:please\s+run\s+/login|fix\s+external\s+api\s+key)`),
			kind: Stop, lead: true, needs: []string{"invalid", "key"}},
		// The APIs' own words for a key or a login they refuse: OpenAI's
		// (and xAI's) "Incorrect API key provided", Gemini's "API key not
		// valid. Please pass a valid API key.", Anthropic's "invalid
		// x-api-key" and "OAuth token has expired"; Codex's "unexpected status 401 Unauthorized"
		// and "last status: 401 Unauthorized"; an agent's "API Error: 401".
		// A bare "401" or "Unauthorized" is not enough: a registry, a
		// project's own server or a test says it too.
		{re: re(`\bincorrect\s+api\s+key\s+provided\b`),
			kind: Stop, needs: []string{"incorrect", "key"}},
		{re: re(`\bapi\s+key\s+not\s+(?:valid|found)\.\s+please\s+pass\s+a\s+valid\s+api\s+key\b`),
			kind: Stop, needs: []string{"pass", "valid"}},
		{re: re(`\binvalid\s+x-api-key\b`),
			kind: Stop, needs: []string{"x-api-key"}},
		{re: re(`\boauth\s+token\s+has\s+expired\b`),
			kind: Stop, weak: true, needs: []string{"oauth", "expired"}},
		{re: re(`\b(?:unexpected\s+status|last\s+status:)\s+(401)\s+unauthorized\b`),
			kind: Stop, weak: true, why: "HTTP ", needs: []string{"401", "unauthorized"}},
		{re: re(`\bAPI\s+Error\s*:\s*(401)\b`),
			kind: Stop, lead: true, weak: true, why: "API Error ", needs: []string{"api", "401"}},
		// OpenRouter's "Missing Authentication header"; the Python SDKs'
		// "Error code: 401 - {...}".
		{re: re(`\bmissing\s+authentication\s+header\b`),
			kind: Stop, needs: []string{"missing", "authentication"}},
		{re: re(`\berror\s+code:\s+(401)\s+-\s+[{\[]`),
			kind: Stop, weak: true, why: "HTTP ", needs: []string{"code", "401"}},
		// A model the account may not use, a person grants it: Bedrock's
		// "You don't have access to the model with the specified model ID"
		// and "Model access is denied"; Copilot's "You are not authorized
		// to use this Copilot feature"; Gemini's "... without a billing
		// account linked".
		{re: re(`\byou\s+don` + apostrophe + `t\s+have\s+access\s+to\s+the\s+model\b`),
			kind: Stop, needs: []string{"access", "model"}},
		{re: re(`\bmodel\s+access\s+is\s+denied\b`),
			kind: Stop, needs: []string{"access", "denied"}},
		{re: re(`\byou\s+are\s+not\s+authorized\s+to\s+use\s+this\s+copilot\s+feature\b`),
			kind: Stop, needs: []string{"authorized", "copilot"}},
		{re: re(`\bwithout\s+a\s+billing\s+account\s+linked\b`),
			kind: Stop, needs: []string{"billing", "linked"}},
		// A model that is not there, a person changes the config: Anthropic's
		// "404 not_found_error - model: claude-sonnet-4-20250514" (a retired
		// model), Gemini's "models/gemini-3.1-pro is not found for API
		// version v1alpha"; Google's "API keys are not supported by this
		// API" (it wants an OAuth token).
		{re: re(`\bnot_found_error\\?["']?[^\n]{0,40}?\bmodel:\s`),
			kind: Stop, needs: []string{"not_found_error", "model"}},
		{re: re(`\bmodels/[\w.-]+\s+is\s+not\s+found\s+for\s+api\s+version\b`),
			kind: Stop, needs: []string{"not found", "version"}},
		{re: re(`\bapi\s+keys\s+are\s+not\s+supported\s+by\s+this\s+api\b`),
			kind: Stop, needs: []string{"keys", "supported"}},
		// Vertex's "Publisher Model `...` was not found or your project does
		// not have access to it"; Gemini's "Gemini 2.5 Pro Preview doesn't
		// have a free quota tier" (its 429 no waiting lifts).
		{re: re(`\bpublisher\s+model\s+\S+\s+was\s+not\s+found\s+or\s+your\s+project\s+does\s+not\s+have\s+access\b`),
			kind: Stop, needs: []string{"publisher", "access"}},
		{re: re(`\bdoesn` + apostrophe + `t\s+have\s+a\s+free\s+quota\s+tier\b`),
			kind: Stop, needs: []string{"free", "tier"}},
		// xAI's: "Your team ... has either used all available credits or
		// reached its monthly spending limit", "Your newly created team
		// doesn't have any credits or licenses yet", Grok's
		// "personal-team-blocked:spending-limit", "Access to the chat
		// endpoint is denied".
		{re: re(`\bhas\s+either\s+used\s+all\s+available\s+credits\s+or\s+reached\s+its\s+monthly\s+spending\s+limit\b`),
			kind: Stop, needs: []string{"available", "spending"}},
		{re: re(`\bdoesn` + apostrophe + `t\s+have\s+any\s+credits\s+or\s+licenses\b`),
			kind: Stop, needs: []string{"credits", "licenses"}},
		{re: re(`\bteam-blocked:spending-limit\b`),
			kind: Stop, needs: []string{"team-blocked"}},
		{re: re(`\baccess\s+to\s+the\s+chat\s+endpoint\s+is\s+denied\b`),
			kind: Stop, needs: []string{"endpoint", "denied"}},
		// OpenAI's "You didn't provide an API key"; Zhipu's code 1113,
		// "您的账户已欠费" (your account is in arrears); DashScope's
		// Arrearage, "Access denied, please make sure your account is in
		// good standing".
		{re: re(`\byou\s+didn` + apostrophe + `t\s+provide\s+an\s+api\s+key\b`),
			kind: Stop, needs: []string{"provide", "key"}},
		{re: regexp.MustCompile(`账户已欠费`),
			kind: Stop, why: "the account in arrears (账户已欠费)", needs: []string{"欠费"}},
		{re: re(`\bmake\s+sure\s+your\s+account\s+is\s+in\s+good\s+standing\b`),
			kind: Stop, needs: []string{"good", "standing"}},
		// Anthropic's "API access paused for this organization"; Zed's "You
		// must subscribe to a plan in order to use models provided by Zed"
		// and "Check that your API key has access to this model".
		{re: re(`\bapi\s+access\s+paused\s+for\s+this\s+organization\b`),
			kind: Stop, needs: []string{"paused", "organization"}},
		{re: re(`\byou\s+must\s+subscribe\s+to\s+a\s+plan\s+in\s+order\s+to\s+use\s+models\b`),
			kind: Stop, needs: []string{"subscribe", "models"}},
		{re: re(`\bcheck\s+that\s+your\s+api\s+key\s+has\s+access\s+to\s+this\s+model\b`),
			kind: Stop, needs: []string{"access", "model"}},
		// Volcengine Ark's "the model service has been paused" (its Safe
		// Experience Mode) and AccountOverdueError; iFlytek Spark's
		// AppIdNoAuthError (code 11200: the app has no grant for the model)
		// and its moderation, "输入内容审核不通过，涉嫌违规" (the input failed
		// review, a suspected violation); Moonshot's "rejected because it was
		// considered high risk"; a provider's "complete identity
		// verification to lift the restriction"; Yandex's "Access to model
		// ... denied".
		{re: re(`\bthe\s+model\s+service\s+has\s+been\s+paused\b`),
			kind: Stop, needs: []string{"service", "paused"}},
		{re: regexp.MustCompile(`\bAccountOverdueError\b`),
			kind: Stop, needs: []string{"accountoverdueerror"}},
		{re: regexp.MustCompile(`\bAppIdNoAuthError\b`),
			kind: Stop, needs: []string{"appidnoautherror"}},
		{re: regexp.MustCompile(`内容审核不通过|涉嫌违规`),
			kind: Stop, why: "refused under the content policy (内容审核不通过)", needs: []string{"违规"}},
		{re: re(`\brejected\s+because\s+it\s+was\s+considered\s+high\s+risk\b`),
			kind: Stop, needs: []string{"rejected", "risk"}},
		{re: re(`\bcomplete\s+identity\s+verification\b`),
			kind: Stop, needs: []string{"identity", "verification"}},
		{re: re(`\baccess\s+to\s+model\s+\S+\s+denied\b`),
			kind: Stop, needs: []string{"access", "denied"}},
		// OpenAI's and Volcengine Ark's "The model ... does not exist or you
		// do not have access to it" (computer-use-preview below its tier, a
		// model retired); the Agents SDK's "Computer tool has unacknowledged
		// safety check" (a person reviews the action); OpenRouter's "401 User
		// not found" (the key's user).
		{re: re(`\bdoes\s+not\s+exist\s+or\s+you\s+do\s+not\s+have\s+access\s+to\s+it\b`),
			kind: Stop, needs: []string{"exist", "access"}},
		{re: re(`\bcomputer\s+tool\s+has\s+unacknowledged\s+safety\s+check\b`),
			kind: Stop, needs: []string{"unacknowledged"}},
		{re: re(`\b401\s+user\s+not\s+found\b`),
			kind: Stop, needs: []string{"401", "user"}},
		// Vertex's "Permission 'aiplatform.endpoints.predict' denied",
		// Snowflake Cortex's "The model you requested is unavailable in your
		// region".
		{re: re(`\bpermission\s+'aiplatform\.[\w.]+'\s+denied\b`),
			kind: Stop, needs: []string{"aiplatform", "denied"}},
		{re: re(`\bthe\s+model\s+you\s+requested\s+is\s+unavailable\s+in\s+your\s+region\b`),
			kind: Stop, needs: []string{"unavailable", "region"}},
		{re: regexp.MustCompile(`订阅套餐暂未开放`),
			kind: Stop, why: "the plan does not include the model (订阅套餐暂未开放)", needs: []string{"订阅套餐"}},
		// Claude Code's "There's an issue with the selected model (...).
		// It may not exist or you may not have access to it";
		// OpenRouter's "No allowed providers are available for the
		// selected model"; Warp's "Your account has been blocked from
		// using AI features".
		{re: re(`\bthere` + apostrophe + `s\s+an\s+issue\s+with\s+the\s+selected\s+model\b`),
			kind: Stop, lead: true, needs: []string{"issue", "selected"}},
		{re: re(`\bno\s+allowed\s+providers\s+are\s+available\s+for\s+the\s+selected\s+model\b`),
			kind: Stop, needs: []string{"allowed", "selected"}},
		{re: re(`\byour\s+account\s+has\s+been\s+blocked\s+from\s+using\s+ai\b`),
			kind: Stop, needs: []string{"blocked", "account"}},
		{re: re(`\binsufficient\s+(?:balance|credits?|funds)\b`),
			kind: Stop, lead: true, needs: []string{"insufficient"}},
		{re: re(`\byour\s+(?:prepayment\s+|prepaid\s+)?credits\s+are\s+depleted`),
			kind: Stop, needs: []string{"credits", "depleted"}},
		// Letta's 402 {"error":"Rate limited","reasons":[...,"not-enough-credits"]}.
		{re: re(`\b(?:your\s+)?workspace\s+is\s+out\s+of\s+credits\b`),
			kind: Stop, lead: true, needs: []string{"workspace", "credits"}},
		{re: re(`\bnot-enough-credits\b`),
			kind: Stop, needs: []string{"not-enough-credits"}},
		{re: re(`\byour\s+(?:paid\s+)?balance\s+is\s+insufficient\b`),
			kind: Stop, needs: []string{"insufficient"}},
		// Zhipu's (Z.ai's) "余额不足或无可用资源包" (the balance is short, no
		// resource package).
		{re: regexp.MustCompile(`余额不足`),
			kind: Stop, why: "balance spent (余额不足)", needs: []string{"余额不足"}},
		// Zhipu's "该模型当前访问量过大" (the model's traffic is too high) and
		// "您的账户已达到速率限制" (your account has reached its rate limit),
		// Windsurf's "所有账号均已达速率限制" (every account has); one-api's and new-api's "当前分组上游负载已饱和"
		// (the group's upstream load is saturated); Bing's "你已达到每日限制"
		// (you have reached the daily limit), a day's window.
		{re: regexp.MustCompile(`达(?:到)?速率限制`),
			kind: Wait, throttle: true, why: "rate limit reached (速率限制)", needs: []string{"速率限制"}},
		{re: regexp.MustCompile(`访问量过大`),
			kind: Wait, throttle: true, why: "traffic too high (访问量过大)", needs: []string{"访问量"}},
		{re: regexp.MustCompile(`负载已饱和`),
			kind: Wait, throttle: true, why: "upstream load saturated (负载已饱和)", needs: []string{"饱和"}},
		{re: regexp.MustCompile(`已达到每日限制`),
			kind: Wait, why: "daily limit reached (已达到每日限制)", needs: []string{"每日限制"}},
		// One API's and new-api's (proxies') "用户额度不足": the user's
		// credit is spent.
		{re: regexp.MustCompile(`(?:用户|账户|帐户)?额度不足`),
			kind: Stop, why: "credit spent (额度不足)", needs: []string{"额度不足"}},
		{re: re(`\bsuspended\s+due\s+to\s+insufficient\s+balance`),
			kind: Stop, needs: []string{"insufficient"}},
		{re: re(`\bmore\s+credits\s+are\s+required\b`),
			kind: Stop, lead: true, needs: []string{"credits", "required"}},
		{re: re(`\byou\s+seem\s+to\s+have\s+run\s+out\s+of\s+(?:funds|credits)`),
			kind: Stop, lead: true, needs: []string{"run", "out"}},
		{re: re(`\bwould\s+exceed\s+your\s+(?:account|organization)` + apostrophe + `s\s+monthly\s+spend\s+limit`),
			kind: Stop, needs: []string{"monthly", "spend"}},
		{re: re(`\byour\s+usage\s+allocation\s+has\s+been\s+disabled`),
			kind: Stop, lead: true, needs: []string{"allocation"}},
		{re: re(`\byour\s+group` + apostrophe + `s\s+usage\s+limit\s+is\s+set\s+to\s+\$0`),
			kind: Stop, lead: true, needs: []string{"$0"}},
		{re: re(`\byour\s+org\s+is\s+out\s+of\s+usage`),
			kind: Stop, lead: true, needs: []string{"out", "usage"}},
		{re: re(`\byour\s+seat\s+type\s+doesn` + apostrophe + `t\s+include\s+(?:extra\s+)?usage`),
			kind: Stop, lead: true, needs: []string{"seat"}},
		{re: re(`\bthis\s+service\s+is\s+disabled\s+for\s+your\s+org`),
			kind: Stop, lead: true, needs: []string{"service", "disabled"}},
		{re: re(`\bcredit\s+balance\s+(?:is\s+)?too\s+low`),
			kind: Stop, lead: true, needs: []string{"credit", "balance"}},
		{re: re(`\byour\s+credit\s+balance\s+is\s+too\s+low\s+to\s+access\s+the\s+(?:anthropic|claude)\s+api`),
			kind: Stop, needs: []string{"credit", "balance"}},
		{re: re(`\bthis\s+organization\s+has\s+been\s+disabled`),
			kind: Stop, lead: true, needs: []string{"organization", "disabled"}},
		{re: re(`\byour\s+organization\s+has\s+disabled\s+claude\s+subscription\s+access`),
			kind: Stop, lead: true, needs: []string{"subscription"}},
		{re: re(`\bextra\s+usage\s+is\s+required\s+for`),
			kind: Stop, lead: true, needs: []string{"required", "usage"}},
		// Z.ai's "Your current subscription plan does not yet include access
		// to GLM-5"; Zhipu's "Authorization Token已过期" and "令牌已过期" (the
		// token has expired), and its SDK's "Error code: 401, with error
		// text"; ThoughtCoding's guard "不可重复以相同的入参调用同一个工具" (do not
		// call the same tool again with the same input), a loop.
		{re: re(`\bsubscription\s+plan\s+does\s+not\s+(?:yet\s+)?include\s+access\s+to\b`),
			kind: Stop, needs: []string{"subscription", "include"}},
		{re: regexp.MustCompile(`(?:[Tt]oken|令牌)\s*已过期`),
			kind: Stop, why: "token expired (已过期)", needs: []string{"已过期"}},
		{re: re(`\berror\s+code:\s+(401),\s+with\s+error\s+text\b`),
			kind: Stop, weak: true, why: "HTTP ", needs: []string{"401", "text"}},
		{re: regexp.MustCompile(`以相同的入参调用同一个工具`),
			kind: Loop, why: "the same tool with the same input (以相同的入参调用同一个工具)", needs: []string{"同一个工具"}},
		// LiteLLM's ExceededBudget ("over budget"); OpenAI's "we've limited
		// access to this content for safety reasons"; Copilot's code for a
		// model it will not serve, model_not_supported (below), and its
		// Responsible AI filter in Chinese, "响应已被负责任 AI 服务过滤".
		{re: re(`\b(?:exceededbudget|over\s+budget)\b`),
			kind: Stop, needs: []string{"budget"}},
		{re: re(`\bwe` + apostrophe + `ve\s+limited\s+access\s+to\s+this\s+content\s+for\s+safety\s+reasons\b`),
			kind: Stop, needs: []string{"limited", "safety"}},
		{re: regexp.MustCompile(`已被负责任\s*AI\s*服务过滤`),
			kind: Stop, why: "filtered by Responsible AI (已被负责任 AI 服务过滤)", needs: []string{"负责任"}},
		// Semantic Kernel's "Reason: TooManyRequests. Will retry after 9000ms".
		{re: re(`\breason:\s+(TooManyRequests)\b`),
			kind: Wait, throttle: true, weak: true, why: "HTTP ", needs: []string{"toomanyrequests"}},
		// Codex's "your refresh token was already used" and "access to ...
		// has been temporarily limited for potentially suspicious activity";
		// Gemini's "This service has been disabled in this account" and
		// "not eligible for Gemini Code Assist".
		{re: re(`\brefresh\s+token\s+was\s+already\s+used\b`),
			kind: Stop, needs: []string{"refresh", "already"}},
		{re: re(`\btemporarily\s+limited\s+for\s+potentially\s+suspicious\s+activity\b`),
			kind: Stop, needs: []string{"limited", "suspicious"}},
		{re: re(`\bthis\s+service\s+has\s+been\s+disabled\s+in\s+this\s+account\b`),
			kind: Stop, needs: []string{"service", "disabled"}},
		{re: re(`\bnot\s+eligible\s+for\s+gemini\s+code\s+assist\b`),
			kind: Stop, needs: []string{"eligible", "gemini"}},
		// Augment's "Your subscription for ... is inactive"; Windsurf's
		// "free user account exceeded"; Cursor's "Your request has been
		// blocked as our system has detected suspicious activity"; Warp's
		// "You've reached the monthly token limit" and "your credit limit"
		// (they lift on a date), Amazon Q's "Maximum ... reached for this
		// month".
		{re: re(`\byour\s+subscription\s+(?:for\s+\S+\s+)?is\s+inactive\b`),
			kind: Stop, needs: []string{"subscription", "inactive"}},
		{re: re(`\bfree\s+(?:user\s+)?account\s+exceeded\b`),
			kind: Stop, needs: []string{"free", "exceeded"}},
		{re: re(`\byour\s+request\s+has\s+been\s+blocked\s+as\s+our\s+system\s+has\s+detected\s+suspicious\s+activity\b`),
			kind: Stop, needs: []string{"blocked", "suspicious"}},
		{re: re(`\byou` + apostrophe + `ve\s+reached\s+(?:the\s+monthly\s+token|your\s+credit)\s+limit\b`),
			kind: Wait, needs: []string{"reached", "limit"}},
		{re: re(`\bmaximum\s+\S+\s+reached\s+for\s+this\s+month\b`),
			kind: Wait, needs: []string{"maximum", "month"}},
		// Codex's "Insufficient quota. Please check your billing details";
		// Alibaba Model Studio's "The free quota has been exhausted. To
		// continue accessing the model on a paid basis, ..."; Codex's "To
		// use Codex with your ChatGPT plan, upgrade to Plus".
		{re: re(`\binsufficient\s+quota\b`),
			kind: Stop, lead: true, needs: []string{"insufficient", "quota"}},
		{re: re(`\bthe\s+free\s+quota\s+has\s+been\s+exhausted\b`),
			kind: Stop, needs: []string{"free", "quota"}},
		{re: re(`\bto\s+use\s+codex\s+with\s+your\s+chatgpt\s+plan,\s+upgrade\s+to\b`),
			kind: Stop, lead: true, needs: []string{"codex", "upgrade"}},
		// OpenAI's words for insufficient_quota: "You exceeded your current
		// quota, please check your plan and billing details" (Gemini's 429,
		// a throttle, says the same words, beside Google's names, and where
		// it names when it lifts, "... Please retry in 2h35m3.27s", it is a
		// window); Ollama's "this model requires a subscription";
		// LiteLLM's "Budget has been exceeded!".
		{re: re(`\bexceeded\s+your\s+current\s+quota,\s+please\s+check\s+your\s+plan\s+and\s+billing\s+details\b`),
			kind: Stop, capped: true, weak: true, needs: []string{"current", "billing"}, notIn: googleWords},
		{re: re(`\bthis\s+model\s+requires\s+a\s+subscription\b`),
			kind: Stop, needs: []string{"requires", "subscription"}},
		{re: re(`\bbudget\s+has\s+been\s+exceeded\b`),
			kind: Stop, lead: true, needs: []string{"budget", "exceeded"}},
		{re: re(`\byou\s+have\s+no\s+quota\b`),
			kind: Stop, lead: true, needs: []string{"quota"}},
		{re: re(`\bquota\s+exceeded\.\s+upgrade\s+to\s+increase\s+your\s+limit`),
			kind: Stop, lead: true, needs: []string{"upgrade", "quota"}},
		{re: re(`\bquota\s+exceeded\.\s+check\s+your\s+plan\s+and\s+billing\s+details`),
			kind: Stop, lead: true, needs: []string{"billing", "quota"}},
		{re: re(`\bthis\s+request\s+requires\s+more\s+credits`),
			kind: Stop, lead: true, needs: []string{"requires", "credits"}},
		{re: re(`\bcreate\s+a\s+key\s+with\s+a\s+higher\s+monthly\s+limit`),
			kind: Stop, needs: []string{"higher", "monthly"}},
		{re: re(`\btoo\s+many\s+free\s+trial\s+accounts\s+used\s+on\s+this\s+machine`),
			kind: Stop, lead: true, needs: []string{"trial"}},
		{re: re(`\bget\s+cursor\s+pro\b`),
			kind: Stop, needs: []string{"cursor"}},
		{re: re(`\byou\s+have\s+no\s+credits\s+remaining\b`),
			kind: Stop, lead: true, needs: []string{"credits", "remaining"}},
		// A 402 as a client prints it ("HTTP 402 Payment Required from
		// https://api.deepseek.com/..."); a package registry's 402 is a
		// look-alike.
		{re: re(`\b(?:HTTP\s+)?402\s+Payment\s+Required\b`),
			kind: Stop, lead: true, weak: true, needs: []string{"402", "payment"}},
	}, append(codeFields(), genericRules()...)...)
})

// codeFields are the rules for an error code in a field of a JSON object
// or a Python dict ({"type":"rate_limit_error"}), one rule a code.
func codeFields() []rule {
	var rs []rule
	for _, c := range []struct {
		code     string
		kind     Kind
		throttle bool
		// auth: a key or login refused, a stop a look-alike's words
		// overrule (a test that checks the code).
		auth bool
	}{
		{"rate_limit_error", Wait, true, false},
		{"rate_limit_exceeded", Wait, true, false},
		{"rate_limited", Wait, true, false},
		{"overloaded_error", Wait, true, false},
		{"server_is_overloaded", Wait, true, false},
		{"resource_exhausted", Wait, true, false},
		{"ratelimitexceeded", Wait, true, false},
		{"too_many_requests_error", Wait, true, false}, // Cerebras'
		{"request_quota_exceeded", Wait, true, false},
		{"Arrearage", Stop, false, false},                  // DashScope's: the account in arrears
		{"content_filter", Stop, false, false},             // Moonshot's, Azure's
		{"sensitive_words_detected", Stop, false, false},   // new-api's
		{"AccountQuotaExceeded", Wait, false, false},       // Volcengine Ark's month
		{"model_not_found", Stop, false, false},            // OpenAI's: no such model, or none for the account
		{"rate_limit_reached_requests", Wait, true, false}, // watsonx's
		{"throttling_error", Wait, true, false},
		{"usage_limit_reached", Wait, false, false},
		{"quota_exhausted", Wait, false, false},
		{"insufficient_quota", Stop, false, false},
		{"billing_hard_limit_reached", Stop, false, false},
		{"billing_not_active", Stop, false, false},
		{"content_policy_violation", Stop, false, false},
		{"quota_exceeded", Stop, false, false},
		{"exceeded_current_quota_error", Stop, false, false},
		{"insufficient_user_quota", Stop, false, false},
		{"model_cooldown", Wait, true, false},
		{"model_not_supported", Stop, false, true},
		// Anthropic's error type, OpenAI's code, Gemini's reason.
		{"authentication_error", Stop, false, true},
		{"invalid_api_key", Stop, false, true},
		{"api_key_invalid", Stop, false, true},
		// Codex's workspace its login may not use.
		{"invalid_workspace_selected", Stop, false, true},
	} {
		expr, need := codeField(c.code), c.code
		if c.code == "overloaded_error" {
			// Wrapped by a terminal: "overload     ed_error".
			expr, need = codeField(`overload\s*ed_error`), "overload"
		}
		rs = append(rs, rule{re: re(expr), kind: c.kind, throttle: c.throttle, field: true, weak: c.kind != Stop || c.auth,
			why: "API error ", needs: []string{need}})
	}
	return rs
}

// codeField matches a field whose value is one of codes: "type":
// "rate_limit_error", 'code': 'insufficient_quota', reason:
// "RATE_LIMIT_EXCEEDED", with straight, single or backslash-escaped
// quotes; the code is captured.
func codeField(codes string) string {
	q := `\\?["']`
	return q + `?(?:type|code|status|reason|error)` + q + `?\s*[:=]\s*` + q + `?(` + codes + `)\b`
}

// apiErrorStatus is the field of Claude Code's JSON result that holds the
// API's HTTP status, before the status.
const apiErrorStatus = `\\?["']api_error_status\\?["']\s*:\s*`

// modelHosts are the hosts of the model APIs, as an expression: a 5xx
// from one of them is the model's, not a registry's or a build's.
const modelHosts = `(?:api\.anthropic\.com|api\.openai\.com|bedrock-runtime\.[\w-]+\.amazonaws\.com|` +
	`generativelanguage\.googleapis\.com|[\w-]+-aiplatform\.googleapis\.com|[\w-]+\.openai\.azure\.com|` +
	`openrouter\.ai|api\.deepseek\.com|api\.mistral\.ai|api\.groq\.com|api\.x\.ai|` +
	`api-inference\.huggingface\.co|router\.huggingface\.co|huggingface\.co/api/inference-proxy)`

// lookalikes find the words of a text that looks like a limit but is
// none, in a message: a request too large for the model's context or its
// per-minute budget (waiting does not help, the request must change); a
// test's failure about rate limiting (the code under test, not the
// provider); documentation that explains an error (Cause: ... Solution:);
// the rate limit of a package registry, of GitHub or of a model hub's
// downloads, which an agent's build or tool met, not the model's provider;
// the rate limit of a usage poller (a status line reading Claude's
// oauth/usage or Codex's wham/usage endpoint), which is no limit on the
// agent's work. They overrule a message's
// weak signs. They are in lower case and run on the lower-cased region, as
// do dailyQuota and zeroQuota, each expression on its own: one alternation of
// them all, folding case, cost most of the time of reading a region, where
// each alone starts with a literal text the regexp package looks for
// first.
var lookalikes = compileAll(
	`request\s+too\s+large`, `prompt\s+is\s+too\s+long`, `context[\s_](?:window|length|limit)`,
	`maximum\s+(?:context|prompt)\s+length`, `max_tokens:\s*\d`, `exceeds?\s+the\s+model\s+limit`,
	`model\s+token\s+limit`, `token\s+limit\s+exceeded`,
	`---\s+fail`, `_test\.go:\d`, `assertionerror`, `\bgot\b[^\n]*\bwant\b`,
	`\bcause:\s[^\n]*\bsolution:\s`,
	`npm\s+err!`, `registry\.npmjs\.org`, `registry\.yarnpkg\.com`, `pypi\.org`, `files\.pythonhosted\.org`,
	`crates\.io`, `proxy\.golang\.org`, `service\s+'(?:run|compute|sheets|drive|youtube|storage|bigquery|iam|cloudresourcemanager)\.googleapis\.com'`, `goproxy\.(?:cn|io)`, `export\.arxiv\.org`, `api\.semanticscholar\.org`, `serpapi\.com`, `api\.github\.com`, `stripe::`, `stripe\.error\.`, `docker\.io`, `mcp_tool_(?:result|use)`, `resolving\s+package`,
	`huggingface\.co/[^\s/]+/[^\s/]+/resolve/`,
	`oauth/usage`, `wham/usage`, `failed\s+to\s+load\s+usage\s+data`, `\busage\s+api\b`,
	`\b403\b[^\n]{0,40}\brate\s+limit\s+exceeded`, `docker\s+hub`, `docs\.docker\.com`, `\bsearch\s+(?:tool|api)\b`, `tavily`, `serpapi`, `firecrawl`, `\be2b\b`, `discord\.(?:com|errors)`, "\\|\\s*`[a-z_]+`\\s*\\|",
)

// dailyQuota finds a quota of a day (or a week: Copilot's "you've
// exceeded your weekly rate limit") in a message whose sign is a throttle:
// Gemini's "Gemini 2.5 Pro Requests per day per user per tier" and
// GenerateRequestsPerDayPerProjectPerModel, OpenRouter's
// free-models-per-day. It is a usage window, not a throttle.
var dailyQuota = compileAll(`per(?:[-_]|\s+)?day`, `\bdaily\b`, `per\s+24\s+hours`, `\bweekly\b`, `\b(?:tpd|rpd)\b`)

// googleWords find Google's names in a message: Gemini's 429 says "You
// exceeded your current quota, please check your plan and billing
// details" as OpenAI's spent quota does, and is a throttle.
var googleWords = compileAll(`gemini`, `generativelanguage`, `ai\.google\.dev`, `googleapis`, `resource_exhausted`)

// paid402 finds an HTTP 402 (payment required) in a message: a generic
// sign of a window there is a stop ("402 {"error":"You have reached your
// limit for agents, please upgrade your plan"}").
var paid402 = compileAll(`\b402\s*[{(:-]`, `\bstatus(?:_?code)?\W{0,3}402\b`, `\bhttp\s+402\b`)

// chinaTime finds the words of Zhipu's (Z.ai's) limits, whose resets name
// no zone and are China's time: its codes 1308 and 1310, 1310's words
// (its weekly or monthly limit, quoted without the code), 使用上限 (the
// usage cap), its hosts.
var chinaTime = compileAll(`\b13(?:08|10)\b`, `weekly/monthly\s+limit\s+exhausted`, `使用上限`, `z\.ai\b`, `bigmodel\.cn`, `zhipu`)

// shanghai is China's time zone.
var shanghai = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		return time.FixedZone("CST", 8*60*60)
	}
	return loc
})

// soonWords find a message's word that its limit lifts in a moment ("Please
// wait a moment and try again"): a generic sign of a usage window there is a
// throttle.
var soonWords = compileAll(`wait\s+a\s+(?:moment|bit|few\s+seconds)`, `try\s+again\s+(?:shortly|in\s+a\s+(?:moment|few\s+seconds))`, `momentarily`)

// zeroQuota finds a quota of zero: Gemini's "limit: 0" and
// quota_limit_value "0", when a plan does not include a model at all. No
// waiting lifts it.
var zeroQuota = compileAll(`\blimit:\s*0\b`, `quota_limit_value"?\s+value:\s*"0"`)

// compileAll returns a function that compiles each expression on its
// first call (see lookalikes, and rules for why not at start).
func compileAll(exprs ...string) func() []*regexp.Regexp {
	return sync.OnceValue(func() []*regexp.Regexp {
		res := make([]*regexp.Regexp, len(exprs))
		for i, e := range exprs {
			res[i] = regexp.MustCompile(e)
		}
		return res
	})
}

// lastMatch returns where the last match of any of res in s begins, or -1.
func lastMatch(res []*regexp.Regexp, s string) int {
	last := -1
	for _, re := range res {
		if ms := re.FindAllStringIndex(s, -1); len(ms) > 0 {
			last = max(last, ms[len(ms)-1][0])
		}
	}
	return last
}

// anyMatches reports whether one of res matches s.
func anyMatches(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// leads reports whether the match at text[at:] leads its line (see
// rule.lead): before it on its line stands nothing but decoration (a
// bullet, a box, a timestamp, digits: no word), a label that ends in a colon ("API
// Error:", "Error: 402", "Error: [provider.auth_error] 403", "[DEBUG]
// Output:", "Agent ... failed: ... API Error:"), or the opening quote of a JSON or dict field that holds the
// message ("message": "). Prose that quotes a message ("The docs say:
// ...", `detected "You've hit your limit"`) does not lead.
func leads(text string, at int) bool {
	p := strings.TrimRight(lineBefore(text, at), " \t")
	if inCode(p) {
		if inProseCode(p) {
			return false // "classify `API Error: ...` as"
		}
		p = p[strings.IndexByte(p, '`')+1:] // a line pasted whole as code: "`API Error: 529 ..."
	}
	if q, ok := cutLogLevel(p); ok && (!hasWord(q) || onlyTags(q)) {
		return true // "[13:55:26] INFO     Rate limited on the OpenAI embeddings API"
	}
	switch {
	case !hasWord(p), onlyTags(p):
		return true
	case opensField(p):
		return true
	}
	if q := strings.TrimRight(p, "#"); len(q) < len(p) && opensField(q) {
		return true // a Markdown heading in a field: "stopReasonMessage":"# You've reached
	}
	p = strings.TrimRight(strings.TrimRight(p, "0123456789"), " \t") // "API Error: 400"
	p = strings.TrimRight(p, "[")                                    // a message in brackets: "[Usage limit reached ...]"
	for strings.HasSuffix(p, "]") {
		// A tag in brackets after the label: "Error: [provider.auth_error] 403",
		// "message":"[1308][Usage limit ...".
		i := strings.LastIndexByte(p, '[')
		if i < 0 {
			break
		}
		p = strings.TrimRight(p[:i], " \t")
	}
	if opensField(p) {
		return true // "errorMessage":"402 This request requires more credits
	}
	if !strings.HasSuffix(p, ":") {
		return false
	}
	// Tags and a colon: an issue's title, "[Bug]: 429 ...", "[讨论]: 403 ...".
	return onlyTags(p[:len(p)-1]) || endsWithLabel(p[:len(p)-1]) || labelChain(p)
}

// lineBefore is the line of text[at:] before at, at most maxLead bytes of
// it.
func lineBefore(text string, at int) string {
	from := max(0, at-maxLead)
	return text[from+strings.LastIndexByte(text[from:at], '\n')+1 : at]
}

// inCode reports whether the end of p, a line's start, is inside inline
// code: a backtick opened and not closed.
func inCode(p string) bool { return strings.Count(p, "`")%2 == 1 }

// cutLogLevel cuts a logger's level from the end of p ("[13:55:26] INFO"),
// and reports whether it did.
func cutLogLevel(p string) (string, bool) {
	p = strings.TrimRight(p, " \t|:-")
	for _, l := range []string{"INFO", "DEBUG", "NOTICE", "TRACE"} {
		if q, ok := strings.CutSuffix(p, l); ok && (q == "" || !isWordByte(q[len(q)-1])) {
			return q, true
		}
	}
	return "", false
}

// inProseCode reports whether the end of p, a line's start, is inside
// inline code that prose opened ("I see the `429 Too Many Requests`"), not
// in a line pasted whole as code ("`anthropic.RateLimitError: ...").
func inProseCode(p string) bool {
	return inCode(p) && hasWord(p[:strings.IndexByte(p, '`')])
}

// onlyTags reports whether p is nothing but tags in brackets: "[SSRF]",
// "[WARN] [agent]".
func onlyTags(p string) bool {
	for p = strings.TrimSpace(p); strings.HasPrefix(p, "["); p = strings.TrimSpace(p) {
		i := strings.IndexByte(p, ']')
		if i < 0 {
			return false
		}
		p = p[i+1:]
	}
	return p == ""
}

// labelChain reports whether p, which ends in a colon, is a chain of
// labels that a label opens: "Error: Error during compaction:",
// "Transformation error: AIX: Error in response:". A link in it longer
// than a label ("Error: Task failed: Status code was 403 and not [200]:")
// makes it prose.
func labelChain(p string) bool {
	first := strings.IndexByte(p, ':')
	if first == len(p)-1 || !endsWithLabel(p[:first]) {
		return false
	}
	for _, seg := range strings.Split(p[first+1:len(p)-1], ":") {
		if len(strings.Fields(seg)) > maxLabelWords {
			return false
		}
	}
	return true
}

// maxLabelWords bounds the words of a label in a chain: "Error during
// compaction" is one, "Status code was 403 and not [200]" is a sentence.
const maxLabelWords = 4

// maxLead bounds how far before a match leads looks for its line's start:
// a message leads its line after at most this much decoration or label.
const maxLead = 256

// labels are the words that end a label before a message.
var labels = []string{"error", "exception", "failed", "failure", "fatal", "output", "stderr", "stdout", "message", "msg", "reason", "warning", "warn", "detail", "details", "wrong", "stopped", "错误", "错误信息", "报错",
	// A server's error in the languages an agent is localized to: "Erro do
	// Servidor", "Sunucu Hatası", "Fehler", "Erreur", "Ошибка".
	"servidor", "hatası", "fehler", "erreur", "ошибка"}

// endsWithLabel reports whether s ends with one of labels, as a word or
// the end of one ("ApiError", "litellm.RateLimitError"), in brackets or
// not ("[AI_APICallError]").
func endsWithLabel(s string) bool {
	s = strings.TrimRight(s, "])") // "Error [AI_APICallError]:"
	for _, l := range labels {
		if len(s) >= len(l) && strings.EqualFold(s[len(s)-len(l):], l) {
			return true
		}
	}
	return false
}

// opensField reports whether p ends with the opening quote of a field
// that holds a message: "message": ", 'error': ', \"message\":\".
func opensField(p string) bool {
	if !strings.HasSuffix(p, `"`) && !strings.HasSuffix(p, "'") {
		return false
	}
	p = strings.TrimRight(strings.TrimRight(p, `"'\`), " \t")
	if !strings.HasSuffix(p, ":") && !strings.HasSuffix(p, "=") {
		return false
	}
	key := strings.TrimRight(p[:len(p)-1], " \t\"'\\")
	for _, k := range []string{"message", "msg", "error", "detail", "description", "text", "result"} {
		if len(key) >= len(k) && strings.EqualFold(key[len(key)-len(k):], k) {
			return true
		}
	}
	return false
}

// hasWord reports whether s holds a word: two letters in a row. A single
// letter is decoration: the T and Z of a timestamp, the ℹ of a notice.
func hasWord(s string) bool {
	letters := 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			letters = 0
			continue
		}
		if letters++; letters == 2 {
			return true
		}
	}
	return false
}

// inObject reports whether text[at:] stands inside a JSON object or a
// Python dict: an unclosed '{' before it, within maxObject bytes.
func inObject(text string, at int) bool {
	depth := 0
	for i := at - 1; i >= 0 && i >= at-maxObject; i-- {
		switch text[i] {
		case '}':
			depth++
		case '{':
			if depth == 0 {
				return true
			}
			depth--
		}
	}
	return false
}

// maxObject is how far back inObject looks for the object's '{'.
const maxObject = 4 << 10

// onFirstLine reports whether text[at:] is on text's first line that is
// not blank.
func onFirstLine(text string, at int) bool {
	start := strings.LastIndexByte(text[:at], '\n') + 1
	return strings.TrimSpace(text[:start]) == ""
}

// runsOn reports whether the match ending at text[end] runs on into a
// word: the next character on its line, past spaces, is a letter or digit.
func runsOn(text string, end int) bool {
	rest := strings.TrimLeft(text[end:], " \t")
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// describe says what the match m of r in text is, for Limit.Why.
func (r *rule) describe(text string, m []int) string {
	if r.why == "" {
		return strings.Join(strings.Fields(text[m[0]:m[1]]), " ")
	}
	if len(m) >= 4 && m[2] >= 0 {
		return r.why + strings.Join(strings.Fields(text[m[2]:m[3]]), "")
	}
	return r.why
}

// genericRules are the fallbacks (see rule.generic): the plain words of a
// usage window reached, a rate or capacity limit, a 502, 503 or 504 from a
// model's API, credit run out, a key or an account refused, a refusal
// under a content policy, and an agent stuck repeating itself.
func genericRules() []rule {
	g := func(expr string, kind Kind, throttle bool, needs ...string) rule {
		return rule{re: re(expr), kind: kind, throttle: throttle, weak: true, generic: true, needs: needs}
	}
	bare := func(r rule) rule { r.bare = true; return r }
	open := func(r rule) rule { r.open = true; return r }
	const (
		reached  = `(?:reached|exceeded|hit|exhausted|used\s+up|depleted|maxed\s+out)`
		provider = `(?:(?:anthropic|openai|gemini|google|provider|api|upstream|model|tpm|rpm|tpd|rpd)\s+)?`
		been     = `(?:has\s+been\s+|have\s+been\s+|has\s+|have\s+|was\s+|were\s+|is\s+|are\s+)?`
	)
	return []rule{
		// A usage window: "usage limit reached", "you have reached the
		// limit", "quota exhausted", "exceeded your plan's quota".
		bare(g(`\b(?:(?:open\s+)?api\s+)?(?:(?:daily|weekly|monthly|hourly|free)\s+)?(?:usage|plan|subscription|session|message|messages|request|requests|token|tokens|free|trial|daily|weekly|monthly|spending|spend)\s+(?:limits?|quotas?|allowance|cap)\s+(?:\([^)\n]{0,40}\)\s+)?`+been+reached+`\b`, Wait, false)),
		open(bare(g(`\b(?:sorry,\s+)?(?:you`+apostrophe+`ve|you\s+have|we`+apostrophe+`ve|we\s+have|you|has|have)\s+`+reached+`\s+(?:your|the|its|this|our|all\s+of\s+your)\s+(?:[\w'’.-]+\s+){0,4}?(?:(?:usage\s+)?(?:limits?|quotas?|allowance|allocation|caps?)|usage|included\s+credits)(?:\s+of\s+(?:[\d,.]+\s+)?(?:requests|messages|tokens|prompts|neurons|credits|calls)(?:\s+per\s+(?:\d+\s+)?\w+)?)?(?:\s+(?:for|on)\s+(?:today|(?:this|the)\s+(?:billing\s+)?\w+|[\w-]+\d[\w-]*(?:\.\d+)*|[\w-]+(?:\s+[\w-]+){0,2}))?`, Wait, false))),
		bare(g(`\bquotas?\s+`+been+reached+`\b`, Wait, false, "quota")),
		bare(g(`\byou`+apostrophe+`ve\s+used\s+all\s+(?:of\s+)?your\s+(?:[\w-]+\s+){0,4}?(?:messages|requests|credits|quota|usage|tokens)\b`, Wait, false, "used")),
		bare(g(`\bno\s+(?:more\s+)?(?:usage|quota|requests|messages)\s+(?:left|remaining)\b`, Wait, false)),
		// A rate or capacity limit.
		g(`\b`+provider+`rate[\s_-]?limit(?:ed|s?\s+`+been+reached+`|\s+error)\b`, Wait, true, "limit"),
		bare(g(`\b(?:tpm|rpm|tpd|rpd|rph|tph|token|request|(?:tokens|requests)\s+per\s+(?:minute|second|hour))\s+limit\s+`+been+`(?:reached|exceeded)\b`, Wait, true, "limit")),
		g(`\b(?:tpm|rpm)\s+(?:\([^)\n]{0,30}\)\s+)?limit\s+(?:of\s+[^\n]{0,60}?)?is\s+exceeded\b`, Wait, true, "limit"),
		g(`达(?:到)?(?:频率|请求)限制`, Wait, true, "限制"),
		g(`\breached\s+(?:\w+\s+){0,3}?rate\s+limit\b`, Wait, true, "rate"),
		g(`\b(?:rejected|limited|blocked)\s+due\s+to\s+rate\s+limiting\b`, Wait, true, "rate"),
		bare(g(`\b(?:the\s+)?request\s+queue\s+is\s+full\b`, Wait, true, "queue")),
		g(`\b(?:are|is)\s+cooling\s+down\b`, Wait, true, "cooling"),
		g(`\b(?:been|was|were|is|are|being|got|get|getting)\s+(?:temporarily\s+)?rate[\s-]?limited\b`, Wait, true, "limited"),
		g(`\btoo\s+many\s+(?:requests|tokens|calls|concurrent\s+requests|messages\s+to\s+the\s+model)\b`, Wait, true, "many"),
		g(`\b(?:over\s+rate[\s_-]?limit|throttling\s+threshold|(?:requests?|you|been|being)\s+throttled)\b`, Wait, true),
		g(`\breached\s+(?:\w+\s+){0,2}max\s+(?:rpm|tpm|rpd|tpd|concurrency)\b`, Wait, true, "max"),
		g(`\b(?:over|at|out\s+of|no|insufficient|not\s+enough)\s+(?:\w+\s+)?capacity\b`, Wait, true, "capacity"),
		g(`\boverloaded\b`, Wait, true, "overloaded"),
		g(`\b(?:high|heavy|unusually\s+high)\s+(?:demand|traffic|load)\b`, Wait, true),
		g(`\b(?:model|server|servers|service|provider|upstream|api|endpoint)\s+(?:is\s+|are\s+)?(?:currently\s+|temporarily\s+)?(?:busy|unavailable)\b`, Wait, true),
		g(`\b(?:502\s+bad\s+gateway|503\s+service\s+(?:temporarily\s+)?unavailable|504\s+gateway\s+time-?out)\b`, Wait, true, "50"),
		g(`\bstatus(?:\s+code)?:?\s+50[234]\b`, Wait, true, "50"),
		// Credit run out: a person pays.
		bare(g(`\b(?:(?:you`+apostrophe+`ve|you\s+have|you)\s+)?(?:insufficient|not\s+enough|no|out\s+of|ran\s+out\s+of|run\s+out\s+of|zero|negative)\s+(?:\w+\s+){0,2}?(?:credits?|balance|funds)\b`, Stop, false)),
		bare(g(`\b(?:sorry,\s+)?(?:(?:your|the)\s+)?(?:account\s+)?(?:credits?|balance|funds)\s+`+been+`(?:insufficient|too\s+low|exhausted|depleted|used\s+up|run\s+out|not\s+enough)\b`, Stop, false)),
		g(`\bpayment\s+required\b`, Stop, false, "payment"),
		bare(g(`\bquota\s+is\s+not\s+enough\b`, Stop, false, "quota")),
		g(`\b(AccessDeniedException)\b`, Stop, false, "accessdenied"),
		// A key, a login or an account refused.
		g(`\b(?:invalid|incorrect|missing|expired|revoked|wrong|bad)\s+(?:\w+\s+)?(?:api[\s_-]?key|api\s+token|access\s+token|auth(?:entication)?\s+token|oauth\s+token|credentials)\b`, Stop, false),
		g(`\bapi[\s_-]?key\s+`+been+`(?:invalid|not\s+valid|expired|revoked|missing|not\s+found|required)\b`, Stop, false),
		g(`\b(?:401\s+unauthorized|status(?:\s+code)?:?\s+401)\b`, Stop, false, "401"),
		g(`\b(?:[\w]+\.)*AuthenticationError\b`, Stop, false, "authenticationerror"),
		g(`\b(?:[\w]+\.)*PermissionDeniedError\b`, Stop, false, "permissiondeniederror"),
		g(`\bauthentication\s+(?:failed|error|required)\b`, Stop, false, "authentication"),
		g(`\b(?:you\s+)?(?:do\s+not|don`+apostrophe+`t|does\s+not|doesn`+apostrophe+`t|not)\s+have\s+access\s+to\s+(?:the\s+|this\s+)?(?:model|resource)\b`, Stop, false, "access"),
		g(`\bnot\s+(?:authorized|permitted|entitled)\s+to\s+(?:use|access|call)\b`, Stop, false),
		g(`\b(?:the\s+)?model:?\s+\S+\s+does\s+not\s+exist\b`, Stop, false, "exist"),
		g(`\b(?:region|country|location|territory)\s+(?:is\s+)?not\s+supported\b`, Stop, false),
		g(`\b(?:account|organization|key|subscription)\s+`+been+`(?:suspended|blocked|disabled|deactivated|banned|restricted|terminated)\b`, Stop, false),
		// A refusal under a content or usage policy.
		bare(g(`\b(?:violat\w*|against|breach\w*)\s+(?:our|the|its|their)?\s*(?:\w+\s+)?(?:usage|content|acceptable\s+use|safety|use)\s+polic(?:y|ies)\b`, Stop, false, "polic")),
		g(`\b(?:inappropriate|unsafe|harmful|prohibited|sensitive|disallowed)\s+content\b`, Stop, false, "content"),
		g(`\bcontent\s+(?:filter|moderation|management|safety)\s+(?:policy|system|triggered)\b`, Stop, false, "content"),
		// An agent repeating itself.
		bare(g(`\bstuck\s+in\s+(?:an?\s+)?(?:infinite\s+|endless\s+)?loop\b`, Loop, false, "loop")),
		bare(g(`\btool[\s-]+loop[\s-]+guard\b`, Loop, false, "guard")),
		bare(g(`\brepeating\s+the\s+same\s+(?:tool\s+)?(?:calls?|actions?)\b`, Loop, false, "repeating")),
		bare(g(`\brepeated\s+tool\s+calls\s+exceeded\b`, Loop, false, "repeated")),
		bare(g(`\b(?:tool|action|doom|call|agent|execution)\s+loop\s+(?:was\s+)?detected\b`, Loop, false, "loop")),
		bare(g(`\bdetected\s+(?:a\s+)?tool\s+loop\b`, Loop, false, "loop")),
		bare(g(`\bcalled\s+\d+\s+times\s+in\s+a\s+row\b`, Loop, false, "row")),
		bare(g(`\b(?:same|identical)\s+(?:tool\s+)?(?:call|action|tool\s+call|command|request)s?\b[^\n]{0,40}?\b(?:repeatedly|in\s+a\s+row|consecutive(?:ly)?)\b`, Loop, false)),
		bare(g(`\b(?:\d+|several|multiple)\s+times\s+(?:in\s+a\s+row\s+)?with\s+the\s+same\s+(?:arguments|input|inputs|parameters)\b`, Loop, false, "same")),
		bare(g(`\b(?:\d+|several|multiple)\s+(?:consecutive|repeated)\s+(?:identical\s+)?(?:tool\s+)?calls?\b`, Loop, false)),
	}
}

// modelContext finds the words that say a message is about a model, a
// provider, an agent or a model's API: a generic rule's sign counts only
// there (a build's "too many requests" is not the model's).
var modelContext = compileAll(
	`api\s+error`, `anthropic`, `openai`, `gemini`, `claude`, `codex`, `copilot`, `cursor`, `kiro`,
	`qwen`, `\bmodels?\b`, `\bllms?\b`, `provider`, `openrouter`, `bedrock`, `vertex`, `deepseek`,
	`mistral`, `groq`, `\bgrok`, `\bxai\b`, `/v1/`, `completion`, `\btokens?\s+per\b`, `\bagent\b`,
	`\bgpt`, `llama`, `\bglm`, `kimi`, `moonshot`, `zhipu`, `minimax`, `dashscope`, `cohere`,
	`fireworks`, `together`, `perplexity`, `ollama`, `litellm`, `azure`, `inference`, `\bchat\b`, `relay\s+error`, `new_api`,
	`\bai\b`, `\bai_`, `assistant`, `prompt`, `amazon\s+q\b`, `codewhisperer`,
)

// genericLookalikes find the words of a message that a generic sign is
// not a provider's limit in, besides lookalikes': the APIs of GitHub and
// of an agent's account data, an HTTP client's error for a URL that is no
// model's API (the rules above name those), a documentation's list of
// errors ("429 - rate_limit_error: ..."), a diff's line of code that raises
// an error with a message (a traceback's line that raised it is none).
var genericLookalikes = compileAll(
	`github\s+api`, `/api/oauth/`, `docker`, `\btoomanyrequests:`, `disk\s+quota`, `\bdeepl\b`, `\bpapago\b`,
	`(?m)^[+-]?\s*(?:export\s+)?(?:function|def|func)\s+\w+\s*\(`, `\breturn\s*\(?\s*['"]`, `(?m)^[+-]\s*(?:raise|throw\s+new)\s+[\w.]*(?:error|exception)\s*\(`, `client\s+error[^\n]*\bfor\s+url\b`, `(?m)^\s*[45]\d\d\s+-\s+[a-z_]+:`,
)

// errorBefore reports whether the line of text[at:], before at, holds the
// words of an error: "error", "exception", "failed", "halted", a status
// of 4xx or 5xx, a cross or a warning sign.
func errorBefore(text string, at int) bool {
	return anyMatches(errorWords(), strings.ToLower(lineBefore(text, at)))
}

// quoted reports whether text[at:] follows an opening quote on its line:
// prose, a log or code that quotes a message (`detected "You've hit your
// limit"`).
func quoted(text string, at int) bool {
	line := lineBefore(text, at)
	if inCode(line) {
		return true
	}
	p := strings.TrimRight(line, " \t")
	r, _ := utf8.DecodeLastRuneInString(p)
	switch r {
	case '“', '‘', '«':
		return true
	case '"', '\'', '`':
		// An opening quote, not the closing one of a name before it
		// ("Project `proj_1` does not have access").
		return strings.Count(p, string(r))%2 == 1
	}
	return false
}

// errorWords are the words errorBefore looks for.
var errorWords = compileAll(`error`, `exception`, `fail`, `\b[45]\d\d\b`, `[✕✗×⚠❌]`, `denied`, `refused`, `rejected`, `warn`, `halt`, `stop`, `abort`, `错误`)
