package limits

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var fuzzSeeds = []string{
	"",
	"API Error (api.anthropic.com | 504: Gateway time-out) · Retrying in 9 seconds… (attempt 5/10)",
	"[API Error: <400> InternalError.Algo.InvalidParameter: Repetitive tool calls detected in the conversation history.]",
	"status: 429,\nheaders: {\n  'anthropic-ratelimit-input-tokens-remaining': '0',\n  'anthropic-ratelimit-input-tokens-reset': '2026-01-29T14:31:30Z',\n  'retry-after': '16'\n}",
	"■ Invalid prompt: your prompt was flagged as potentially violating our usage policy.",
	"or try a\ngain at Feb 2nd, 2026 8:41 AM.",
	"You've hit your limit · resets 5pm (Europe/Vilnius)",
	"You’ve hit your weekly limit · resets Feb 2 at 9pm (America/New_York)",
	"You've hit your weekly limit · resets Mon 12:00am",
	"5-hour limit reached ∙ resets 9pm",
	"Claude usage limit reached. Your limit will reset \n     at 3pm (America/Santiago).",
	"Claude AI usage limit reached|1769709600",
	"You've hit your usage limit. Upgrade to Pro or try again in 5 days 22 hours 11\nminutes.",
	"try again at Feb 5th, 2026 8:19 PM.",
	"Your usage allocation has been disabled by your admin",
	"You've hit your org's monthly spend limit · your session limit resets 5pm",
	`API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"x"}}`,
	`{'error': {'message': 'Please try again in 1.6s.', 'type': 'insufficient_quota', 'code': 'insufficient_quota'}}`,
	`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"37s"}]}}`,
	`{"type":"error","error":{"type":"usage_limit_reached","resets_at":1769709600,"resets_in_seconds":12627}}`,
	`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1769709600,"isUsingOverage":false}}`,
	`{"type":"result","is_error":true,"api_error_status":429,"result":"You've hit your limit \u00b7 resets 3pm (UTC)"}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","content":"You've hit your limit"}]}}`,
	`You have reached your specified API usage limits. You will regain access on 2026-02-01 at 00:00 UTC.`,
	"Error 429, Message: x, Status: RESOURCE_EXHAUSTED, Details: [map[retryDelay:37s]]",
	"Usage limit reached for gemini-3-flash-preview. Access resets at 10:57 PM GMT-3.",
	"You've hit your usage limit. Upgrade your plan to continue, or try again at 10 de jul. de 2026, 11:52.",
	"API Error (529 {\"type\":\"error\",\"error\":{\"type\":\"overload     ed_error\"}}) · Retrying in 4 seconds… (attempt 4/10)",
	"[DEBUG] Output: You've hit your limit · resets 5pm (Europe/Vilnius)",
	`{"error":{"message":"Rate limit exceeded: free-models-per-day","type":"rate_limit_error"}}` + "\nRetrying in 26 seconds",
	"npm ERR! 429 Too Many Requests - GET https://registry.npmjs.org/aws4",
	"You have exhausted your capacity on this model. Your quota will reset after 161h39m41s.",
	"* Quota exceeded for metric: x, limit: 0, model: y\nPlease retry in 11.665902715s.",
}

// fuzzNows are the times fuzzed texts are read against: the tests' own,
// and one on New Year's Eve in UTC.
var fuzzNows = []time.Time{now, time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)}

// checkLimit fails t unless l keeps FromText's promises: a known Kind, a
// Why exactly when there is a limit, and a Reset only on a Wait, never
// before now and at most MaxAhead after it.
func checkLimit(t *testing.T, l Limit, now time.Time) {
	t.Helper()
	if l.Kind > Loop {
		t.Fatalf("kind %v", l.Kind)
	}
	if (l.Kind == None) != (l.Why == "") {
		t.Fatalf("kind %v with why %q", l.Kind, l.Why)
	}
	if l.Throttle && l.Kind != Wait {
		t.Fatalf("a %v that is a throttle", l.Kind)
	}
	if l.Reset.IsZero() {
		return
	}
	if l.Kind != Wait {
		t.Fatalf("a %v with a reset %v", l.Kind, l.Reset)
	}
	if l.Reset.Before(now) || l.Reset.Sub(now) > MaxAhead {
		t.Fatalf("reset %v, now %v", l.Reset, now)
	}
}

// FuzzFromText: any bytes give a Limit that keeps FromText's promises,
// without panicking. Time is bounded by construction: FromText reads at
// most MaxScan bytes, with linear-time regular expressions, and resolves
// at most maxHits reset times.
func FuzzFromText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, name := range []string{"stream-limit.jsonl", "stream-quoted-limit.jsonl", "stream-overage.jsonl"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, n := range fuzzNows {
			checkLimit(t, FromText(text, n), n)
		}
	})
}

// FuzzHasAnchor: the scan over the bytes finds an anchor where a plain
// search of the lower-cased text does (the pairs it is keyed by, its
// tables and its edges are right), so that no limit message is passed
// over for a fault of the fast path.
func FuzzHasAnchor(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"LIMIT", "x429", "Quota", "ExHaUsT", "slow", "slow ", "many", "\xffmi", "lim", "402"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		want := false
		lower := asciiLower(text)
		for _, a := range anchors {
			want = want || strings.Contains(lower, a.word)
		}
		if got := hasAnchor(text); got != want {
			t.Fatalf("hasAnchor(%q) = %v, a plain search says %v", text, got, want)
		}
	})
}

// Every anchor is found by the scan, alone and in (ASCII) upper case, within a
// line: an anchor keyed by a pair of bytes it does not hold at the place
// it names would never be.
func TestEveryAnchorIsFound(t *testing.T) {
	for _, a := range anchors {
		assert.True(t, hasAnchor(a.word), "%q", a.word)
		upper := []byte(a.word)
		for i, c := range upper {
			if 'a' <= c && c <= 'z' {
				upper[i] = c - 'a' + 'A'
			}
		}
		assert.True(t, hasAnchor("x "+string(upper)+" y"), "%q in upper case", a.word)
	}
}

// asciiLower lower-cases the ASCII letters of s, as hasAnchor folds them.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// FuzzFromHTTP: any status, header values and body give a Limit that keeps
// the same promises.
func FuzzFromHTTP(f *testing.F) {
	f.Add(429, "30", "", "", anthropicRateLimit)
	f.Add(429, "Thu, 29 Jan 2026 15:00:00 GMT", "1500", "1769709600", openAIQuota)
	f.Add(529, "", "", "2026-01-29T14:31:00Z", anthropicOverload)
	f.Add(400, "", "", "6m0s", anthropicCredit)
	f.Add(503, "-1", "NaN", "", "")
	f.Fuzz(func(t *testing.T, status int, retryAfter, retryAfterMs, reset string, body string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		h.Set("Retry-After-Ms", retryAfterMs)
		h.Set("Anthropic-Ratelimit-Tokens-Remaining", "0")
		h.Set("Anthropic-Ratelimit-Tokens-Reset", reset)
		h.Set("Anthropic-Ratelimit-Unified-Status", "rejected")
		h.Set("Anthropic-Ratelimit-Unified-Reset", reset)
		h.Set("X-Ratelimit-Remaining-Requests", "0")
		h.Set("X-Ratelimit-Reset-Requests", reset)
		for _, n := range fuzzNows {
			l := FromHTTP(status, h, []byte(body), n)
			checkLimit(t, l, n)
			if status == 429 || status == 529 {
				if l.Kind == None {
					t.Fatalf("HTTP %d is no limit", status)
				}
			}
		}
	})
}

// FuzzParseReset: a host pattern's reset group may hold anything.
func FuzzParseReset(f *testing.F) {
	for _, s := range []string{"5pm (Europe/Vilnius)", "in 10 minutes", "1769709600", "2026-01-29T15:00:00Z",
		"Thu, 29 Jan 2026 15:00:00 GMT", "Feb 29 at 1am (UTC)", "Mon 12:00am", strconv.Itoa(1 << 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range fuzzNows {
			w := parseReset(s, n)
			if w.ok && (w.at.Before(n) || w.at.Sub(n) > MaxAhead) {
				t.Fatalf("%q: reset %v, now %v", s, w.at, n)
			}
			if w.ok && !w.named {
				t.Fatalf("%q: usable but not named", s)
			}
		}
	})
}
