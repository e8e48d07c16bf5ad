package loopbreaker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitNow is when the limit texts of these tests were printed: Thursday
// 29 January 2026, 16:29:33 in Vilnius (UTC+2).
var limitNow = time.Date(2026, 1, 29, 16, 29, 33, 0, mustZone("Europe/Vilnius"))

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// apiError has the shape of the errors of the Stainless-generated SDKs
// (openai-go, anthropic-sdk-go): the status and the response as fields.
type apiError struct {
	StatusCode int
	Response   *http.Response
	body       string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("POST /v1/messages: %d %s", e.StatusCode, e.body)
}
func (e *apiError) RawJSON() string { return e.body }

// sdkError returns an SDK error for an HTTP response with the headers kv.
func sdkError(status int, body string, kv ...string) error {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &apiError{StatusCode: status, Response: &http.Response{StatusCode: status, Header: h}, body: body}
}

// recognitionCase is one error and what the default classifier and
// ProviderLimitOf make of it. reset is RFC 3339, "" for none.
type recognitionCase struct {
	name    string
	err     error
	outcome Outcome
	kind    LimitKind
	reset   string
	now     time.Time // limitNow when zero
}

func runRecognitionCases(t *testing.T, cases []recognitionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = limitNow
			}
			assert.Equal(t, tc.outcome, DefaultClassify(tc.err), "DefaultClassify")
			l, ok := ProviderLimitOf(tc.err, now)
			limited := tc.outcome == ProviderLimit || tc.outcome == ProviderStop
			require.Equal(t, limited, ok, "ProviderLimitOf: %+v", l)
			if !limited {
				return
			}
			assert.Equal(t, tc.kind, l.Kind, l.Why)
			got := ""
			if !l.Reset.IsZero() {
				got = l.Reset.Format(time.RFC3339)
			}
			assert.Equal(t, tc.reset, got, "reset")
			assert.NotEmpty(t, l.Why, "a limit says why")
		})
	}
}

// Claude Code's limit messages are provider limits, with the reset time
// parsed in the time zone they name.
func TestClaudeCodeLimitMessagesAreProviderLimits(t *testing.T) {
	runRecognitionCases(t, []recognitionCase{
		{"hit your limit, in Vilnius", errors.New("You've hit your limit · resets 5pm (Europe/Vilnius)"),
			ProviderLimit, LimitWait, "2026-01-29T17:00:00+02:00", time.Time{}},
		{"hit your session limit, in Tokyo", errors.New("You've hit your session limit · resets 9am (Asia/Tokyo)"),
			ProviderLimit, LimitWait, "2026-01-30T09:00:00+09:00", time.Time{}},
		{"usage limit reached, reset at 7pm in Tokyo", errors.New("Claude usage limit reached. Your limit will reset at 7pm (Asia/Tokyo)."),
			ProviderLimit, LimitWait, "2026-01-30T19:00:00+09:00", time.Time{}},
		{"usage limit reached with a Unix time", errors.New("Claude AI usage limit reached|1766502000"),
			ProviderLimit, LimitWait, "2025-12-23T17:00:00+02:00", time.Date(2025, 12, 23, 12, 0, 0, 0, mustZone("Europe/Vilnius"))},
		{"a stream-json rate_limit_event rejected", errors.New(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1769709600,"rateLimitType":"five_hour","isUsingOverage":false}}`),
			ProviderLimit, LimitWait, "2026-01-29T20:00:00+02:00", time.Time{}},
		{"wrapped by the host", fmt.Errorf("claude -p: exit status 1: %w", errors.New("You've hit your limit · resets 5pm (Europe/Vilnius)")),
			ProviderLimit, LimitWait, "2026-01-29T17:00:00+02:00", time.Time{}},
		{"no reset named", errors.New("You've hit your limit"),
			ProviderLimit, LimitWait, "", time.Time{}},
		{"request rejected: a throttle", errors.New("API Error: Request rejected (429) · this may be a temporary capacity issue"),
			ProviderLimit, LimitThrottle, "", time.Time{}},
		{"server throttle", errors.New("API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited"),
			ProviderLimit, LimitThrottle, "", time.Time{}},
	})
}

// API errors: HTTP 429 and Anthropic's 529 with Retry-After, and the error
// codes of Anthropic, OpenAI and Gemini.
func TestAPIErrorsAreProviderLimits(t *testing.T) {
	runRecognitionCases(t, []recognitionCase{
		{"429 with Retry-After in seconds", sdkError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"x"}}`, "Retry-After", "30"),
			ProviderLimit, LimitThrottle, "2026-01-29T16:30:03+02:00", time.Time{}},
		{"429 with Retry-After as an HTTP date", sdkError(429, "", "Retry-After", "Thu, 29 Jan 2026 15:00:00 GMT"),
			ProviderLimit, LimitThrottle, "2026-01-29T15:00:00Z", time.Time{}},
		{"529 overloaded", sdkError(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Retry-After", "10"),
			ProviderLimit, LimitThrottle, "2026-01-29T16:29:43+02:00", time.Time{}},
		{"429 without a reset", sdkError(429, ""),
			ProviderLimit, LimitThrottle, "", time.Time{}},
		{"Anthropic rate_limit_error in text", errors.New(`API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`),
			ProviderLimit, LimitThrottle, "", time.Time{}},
		{"OpenAI rate_limit_exceeded with its retry time", errors.New(`429 Too Many Requests {"error":{"message":"Rate limit reached. Please try again in 20s.","type":"tokens","code":"rate_limit_exceeded"}}`),
			ProviderLimit, LimitThrottle, "2026-01-29T16:29:53+02:00", time.Time{}},
		{"Gemini RESOURCE_EXHAUSTED", errors.New(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`),
			ProviderLimit, LimitThrottle, "", time.Time{}},
		{"the Gemini Go SDK's error text", errors.New("Error 429, Message: Resource has been exhausted, Status: RESOURCE_EXHAUSTED, Details: [map[retryDelay:37s]]"),
			ProviderLimit, LimitThrottle, "2026-01-29T16:30:10+02:00", time.Time{}},
		{"an HTTP 500 is a failure", sdkError(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
			Failure, 0, "", time.Time{}},
	})
}

// Limits no waiting ends are stops, with a reason of their own.
func TestQuotaAndBillingLimitsAreStops(t *testing.T) {
	runRecognitionCases(t, []recognitionCase{
		{"usage disabled by an admin", errors.New("Your usage allocation has been disabled by your admin · ask your admin for a higher limit"),
			ProviderStop, LimitStop, "", time.Time{}},
		{"OpenAI insufficient_quota, though a 429", sdkError(429, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`, "Retry-After", "20"),
			ProviderStop, LimitStop, "", time.Time{}},
		{"OpenAI insufficient_quota in text", errors.New(`{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`),
			ProviderStop, LimitStop, "", time.Time{}},
		{"a credit balance too low", errors.New("Credit balance is too low"),
			ProviderStop, LimitStop, "", time.Time{}},
		{"Anthropic's credit balance error", errors.New(`API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`),
			ProviderStop, LimitStop, "", time.Time{}},
	})
}

// timeoutError is a network timeout, as net/http reports one.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// Not a limit: a timeout, whatever the output said; a tool result that
// only quotes a limit (ralph-claude-code's bug #183); prose.
func TestWhatIsNotAProviderLimit(t *testing.T) {
	quoted := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"# Notes\nYou've hit your limit · resets 5pm (Europe/Vilnius)\nThe 5-hour limit reached message means wait."}]}}` + "\n" +
		`{"type":"result","subtype":"success","is_error":false,"result":"Documented the 5-hour limit."}`
	runRecognitionCases(t, []recognitionCase{
		{"a timeout that mentions a limit", fmt.Errorf("%w: You've hit your limit · resets 5pm", context.DeadlineExceeded), Failure, 0, "", time.Time{}},
		{"a network timeout", &url.Error{Op: "Post", URL: "https://api.anthropic.com/v1/messages", Err: timeoutError{}}, Failure, 0, "", time.Time{}},
		{"a tool result quoting a limit (ralph-claude-code #183)", errors.New(quoted), Failure, 0, "", time.Time{}},
		{"prose about a limit", errors.New("the test expected: You've hit your limit"), Failure, 0, "", time.Time{}},
		{"a warning before the limit", errors.New("You've used 90% of your session limit · resets 5pm"), Failure, 0, "", time.Time{}},
		{"an ordinary error", errA(1), Failure, 0, "", time.Time{}},
		{"a cancelled iteration", fmt.Errorf("run: %w: You've hit your limit", context.Canceled), Neutral, 0, "", time.Time{}},
	})
}

// A *LimitError is taken as it is, whatever its text says.
func TestLimitErrorIsTakenAsItSays(t *testing.T) {
	reset := limitNow.Add(90 * time.Second)
	err := fmt.Errorf("agent: %w", &LimitError{Limit: Limit{Kind: LimitThrottle, Reset: reset}, Err: errors.New("proxy said: slow down")})
	assert.Equal(t, ProviderLimit, DefaultClassify(err))
	l, ok := ProviderLimitOf(err, limitNow)
	require.True(t, ok)
	assert.Equal(t, Limit{Kind: LimitThrottle, Reset: reset, Why: "proxy said: slow down"}, l, "Why falls back to the wrapped error's first line")
	assert.Equal(t, "provider limit: proxy said: slow down", (&LimitError{Err: errors.New("proxy said: slow down")}).Error())

	stop := &LimitError{Limit: Limit{Kind: LimitStop, Why: "tenant suspended"}}
	assert.Equal(t, ProviderStop, DefaultClassify(stop))
	assert.Equal(t, "provider stop: tenant suspended", stop.Error())

	quiet := &LimitError{Limit: Limit{Why: "quota"}, Err: errors.New("HTTP 403")}
	assert.Equal(t, "provider limit: quota: HTTP 403", quiet.Error())
	assert.Equal(t, "provider limit", (&LimitError{}).Error())
	assert.ErrorIs(t, quiet, quiet.Err, "it unwraps to the host's error")

	_, ok = ProviderLimitOf(nil, limitNow)
	assert.False(t, ok)
}

// ProviderLimitInText reads an agent's output; a tool result quoting a
// limit is not one.
func TestProviderLimitInText(t *testing.T) {
	l, ok := ProviderLimitInText("✻ Baked for 2m 4s\nYou've hit your limit · resets 5pm (Europe/Vilnius)\n", limitNow)
	require.True(t, ok)
	assert.Equal(t, LimitWait, l.Kind)
	assert.Equal(t, "2026-01-29T17:00:00+02:00", l.Reset.Format(time.RFC3339))
	assert.Equal(t, "You've hit your limit (resets 2026-01-29 17:00 Europe/Vilnius)", l.Why)

	_, ok = ProviderLimitInText(`{"type":"user","message":{"content":[{"type":"tool_result","content":"You've hit your limit"}]}}`, limitNow)
	assert.False(t, ok)
	_, ok = ProviderLimitInText("", limitNow)
	assert.False(t, ok)
}

// A host adds its own patterns: a Wait with a reset, a throttle, a stop,
// and a veto that keeps a host's own message from counting.
func TestHostLimitPatterns(t *testing.T) {
	patterns := []LimitPattern{
		{Match: regexp.MustCompile(`(?m)^ignore: You've hit your limit`), NotALimit: true},
		{Match: regexp.MustCompile(`proxy: budget exhausted, retry at (?P<reset>\S+)`), Why: "proxy budget"},
		{Match: regexp.MustCompile(`proxy: slow down`), Kind: LimitThrottle},
		{Match: regexp.MustCompile(`tenant suspended`), Kind: LimitStop, Why: "tenant suspended"},
	}
	cases := []struct {
		text  string
		ok    bool
		kind  LimitKind
		reset string
		why   string
	}{
		{"proxy: budget exhausted, retry at 2026-01-29T15:00:00Z", true, LimitWait, "2026-01-29T15:00:00Z", "proxy budget (resets 2026-01-29 15:00 UTC)"},
		{"proxy: slow down", true, LimitThrottle, "", "pattern proxy: slow down"},
		{"ERROR tenant suspended", true, LimitStop, "", "tenant suspended"},
		{"ignore: You've hit your limit", false, 0, "", ""},
		{"You've hit your limit", true, LimitWait, "", "You've hit your limit"},
	}
	for _, tc := range cases {
		for _, l := range []func() (Limit, bool){
			func() (Limit, bool) { return ProviderLimitInText(tc.text, limitNow, patterns...) },
			func() (Limit, bool) { return ProviderLimitOf(errors.New(tc.text), limitNow, patterns...) },
		} {
			got, ok := l()
			require.Equal(t, tc.ok, ok, tc.text)
			if !ok {
				continue
			}
			assert.Equal(t, tc.kind, got.Kind, tc.text)
			if tc.reset != "" {
				assert.Equal(t, tc.reset, got.Reset.Format(time.RFC3339), tc.text)
			}
			assert.Equal(t, tc.why, got.Why, tc.text)
		}
	}

	// The breaker's default classifier tries the Config's patterns.
	b, _ := newTestBreaker(t, Config{Limits: LimitRules{Patterns: patterns}})
	b.Record(Iteration{Err: errors.New("ERROR tenant suspended")})
	assert.Equal(t, ReasonProviderStopped, b.Check().Reason.Kind)
	b.Resume()
	b.Record(Iteration{Err: errors.New("ignore: You've hit your limit")})
	assert.Equal(t, 1, b.Stats().Failures.Consecutive, "the veto makes it an ordinary failure")
}

func TestLimitPatternsAreValidated(t *testing.T) {
	err := Config{
		Limits: LimitRules{
			Patterns: []LimitPattern{
				{Kind: LimitWait},
				{Match: regexp.MustCompile("x"), Kind: LimitKind(7)},
				{Match: regexp.MustCompile("y"), Kind: LimitKind(7), NotALimit: true},
			},
		},
	}.Validate()
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "Limits.Patterns[0].Match")
	assert.Contains(t, err.Error(), "Limits.Patterns[1].Kind")
	assert.NotContains(t, err.Error(), "Limits.Patterns[2]", "a veto has no kind")
}

func TestLimitKindAndOutcomeNames(t *testing.T) {
	assert.Equal(t, "wait", LimitWait.String())
	assert.Equal(t, "throttle", LimitThrottle.String())
	assert.Equal(t, "stop", LimitStop.String())
	assert.Equal(t, "LimitKind(9)", LimitKind(9).String())
	assert.Equal(t, "provider_limit", ProviderLimit.String())
	assert.Equal(t, "provider_stop", ProviderStop.String())
}

// A provider that says to retry at once ("retryDelay": "0s", a
// Retry-After of 0) is waited out for a second: a loop that hits it again
// and again does not spin.
func TestAResetAtOnceIsWaitedOutForASecond(t *testing.T) {
	for name, record := range map[string]func(*CircuitBreaker, time.Time){
		"gemini text": func(b *CircuitBreaker, _ time.Time) {
			b.Record(Iteration{Err: errors.New(`429 Status: RESOURCE_EXHAUSTED "retryDelay": "0s"`)})
		},
		"a reset now": func(b *CircuitBreaker, now time.Time) {
			b.ObserveLimit(Limit{Kind: LimitThrottle, Reset: now, Why: "rate limited"})
		},
		"a reset past": func(b *CircuitBreaker, now time.Time) {
			b.ObserveLimit(Limit{Kind: LimitThrottle, Reset: now.Add(-time.Minute), Why: "rate limited"})
		},
	} {
		t.Run(name, func(t *testing.T) {
			b, clk := newTestBreaker(t, Config{})
			record(b, clk.Now())
			d := b.Check()
			require.False(t, d.Allow)
			assert.Equal(t, ReasonProviderLimit, d.Reason.Kind)
			assert.Equal(t, time.Second, d.RetryAfter)
			clk.Advance(time.Second)
			assert.True(t, b.Check().Allow, "a second later it has lifted")
		})
	}
}
