package limits

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FromHTTP recognises a provider limit in an HTTP response: its status,
// its headers and its body.
//
//   - 429 Too Many Requests and 529 (Anthropic's "overloaded") are a Wait,
//     unless the body says no waiting ends it: OpenAI's insufficient_quota
//     comes as a 429, and is a Stop.
//   - 502 Bad Gateway, 503 Service Unavailable and 504 Gateway Timeout from
//     the model's API are a Wait, marked Throttle: the server is
//     overloaded or briefly out of reach, which waiting out for a short
//     while cures, and the agent did nothing wrong.
//   - 402 Payment Required is a Stop.
//   - Any status whose body FromText recognises (Anthropic's "Your credit
//     balance is too low", a 400; DashScope's "Repetitive tool calls
//     detected", a Loop, whether it comes as a 400 or a 500) is what the
//     body says.
//   - Other statuses, 500 among them, are no limit: an ordinary failure.
//
// A Wait's Reset is the latest time the headers name: Retry-After (seconds
// or an HTTP date; a date already past means now), retry-after-ms, and the
// reset of every rate-limit window the headers show exhausted, Anthropic's
// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-reset
// (RFC 3339) with -remaining 0, anthropic-ratelimit-unified-reset (Unix
// seconds) with anthropic-ratelimit-unified-status "rejected", and
// OpenAI's x-ratelimit-reset-{requests,tokens} ("6m0s") with
// x-ratelimit-remaining-* 0. Without such headers, the time the body names.
// h may be nil.
func FromHTTP(status int, h http.Header, body []byte, now time.Time, patterns ...Pattern) Limit {
	return fromHTTP(status, h, body, now, patterns).limit()
}

func fromHTTP(status int, h http.Header, body []byte, now time.Time, patterns []Pattern) finding {
	f := scan(string(body), now, patterns)
	switch {
	case f.kind == Stop || f.kind == Loop:
		f.why = httpWhy(status, f.why)
		return f
	case status == http.StatusTooManyRequests || status == 529 || f.kind == Wait || serverBusy(status):
		if f.kind == None {
			f.throttle = true // the status alone: a rate or capacity throttle
		}
		f.kind = Wait
		f.why = httpWhy(status, f.why)
		if w := headerReset(h, now); w.ok {
			f.reset = w
		}
		return f
	case status == http.StatusPaymentRequired:
		return finding{kind: Stop, why: httpWhy(status, "")}
	}
	return finding{}
}

// serverBusy reports whether status is a 502, 503 or 504: the model's
// server overloaded or its front out of reach for a while.
func serverBusy(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// httpWhy is "HTTP 429: <what the body said>", or "HTTP 429 Too Many
// Requests" when it said nothing.
func httpWhy(status int, body string) string {
	switch {
	case status == 0:
		return body
	case body != "":
		return "HTTP " + strconv.Itoa(status) + ": " + body
	case status == 529:
		return "HTTP 529 Overloaded"
	}
	return strings.TrimSpace("HTTP " + strconv.Itoa(status) + " " + http.StatusText(status))
}

// headerReset is the latest reset the headers name (see FromHTTP).
func headerReset(h http.Header, now time.Time) when {
	latest, _, _ := spentWindows(h, now)
	later(&latest)(retryAfter(h, now))
	return latest
}

// later is a reset taker: it keeps in *latest the latest usable reset.
func later(latest *when) func(when) {
	return func(w when) {
		if w.ok && (!latest.ok || w.at.After(latest.at)) {
			*latest = w
		}
	}
}

// unifiedWindow reads the window of a subscription's status header,
// "Anthropic-Ratelimit-Unified-5h-Status": "5h". The overage's and the
// whole's status are no window of their own.
func unifiedWindow(name string) (string, bool) {
	const pre, suf = "Anthropic-Ratelimit-Unified-", "-Status"
	if len(name) <= len(pre)+len(suf) || !strings.HasPrefix(name, pre) || !strings.HasSuffix(name, suf) {
		return "", false
	}
	w := name[len(pre) : len(name)-len(suf)]
	return w, !strings.EqualFold(w, "overage")
}

// retryAfter reads Retry-After (seconds or an HTTP date; a date already
// past means now) and retry-after-ms.
func retryAfter(h http.Header, now time.Time) when {
	var latest when
	take := later(&latest)
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < float64(MaxAhead/time.Millisecond) {
			take(after(now, time.Duration(ms*float64(time.Millisecond))))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s >= 0 && s < MaxAhead.Seconds() {
				take(after(now, time.Duration(s*float64(time.Second))))
			}
		} else if t, err := http.ParseTime(v); err == nil {
			if t.Before(now) {
				t = now
			}
			take(usable(t, now))
		}
	}
	return latest
}

// spentWindows reads the rate-limit windows the headers show spent:
// Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
// output-tokens}-remaining 0, anthropic-ratelimit-unified-status
// "rejected", OpenAI's x-ratelimit-remaining-{requests,tokens} 0. It
// returns the latest of their resets, whether any window is spent (its
// reset given or not), and whether a subscription's usage window is (the
// unified windows: a usage limit, not a throttle).
func spentWindows(h http.Header, now time.Time) (latest when, spent, usage bool) {
	take := later(&latest)
	for _, window := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
		if strings.TrimSpace(h.Get("Anthropic-Ratelimit-"+window+"-Remaining")) != "0" {
			continue
		}
		spent = true
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(h.Get("Anthropic-Ratelimit-"+window+"-Reset"))); err == nil {
			take(usable(t, now))
		}
	}
	if strings.EqualFold(strings.TrimSpace(h.Get("Anthropic-Ratelimit-Unified-Status")), "rejected") {
		spent, usage = true, true
		take(unixTime(strings.TrimSpace(h.Get("Anthropic-Ratelimit-Unified-Reset")), now))
	}
	// A subscription's own windows: anthropic-ratelimit-unified-5h-status,
	// -7d-status, each beside its -reset. The overage's status is no
	// window.
	for name, v := range h {
		w, ok := unifiedWindow(name)
		if !ok || len(v) == 0 || !strings.EqualFold(strings.TrimSpace(v[0]), "rejected") {
			continue
		}
		spent, usage = true, true
		take(unixTime(strings.TrimSpace(h.Get("Anthropic-Ratelimit-Unified-"+w+"-Reset")), now))
	}
	for _, window := range []string{"requests", "tokens"} {
		if strings.TrimSpace(h.Get("X-Ratelimit-Remaining-"+window)) != "0" {
			continue
		}
		spent = true
		if d, ok := parseDuration(h.Get("X-Ratelimit-Reset-" + window)); ok {
			take(after(now, d))
		}
	}
	return latest, spent, usage
}
