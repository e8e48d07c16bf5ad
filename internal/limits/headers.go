package limits

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// Rate-limit headers dumped into a text: a log line, an SDK's error object,
// a curl -v transcript. They are read as FromHTTP reads a response's (see
// spentWindows and retryAfter): a window the headers show spent is a
// throttle by itself, lifted at its reset ("remaining 0 beside its
// reset"), and a throttle a region shows otherwise lifts at the latest
// reset its headers name. Only the model providers' own header names
// count: GitHub's X-RateLimit-Remaining and Docker Hub's
// RateLimit-Remaining are other services' limits.

// headerPair finds a rate-limit header and its value in the ways a text
// dumps them: "anthropic-ratelimit-requests-remaining: 0",
// "'anthropic-ratelimit-requests-reset': '2024-03-26T20:00:00Z'",
// "retry-after: 16", "[x-ratelimit-reset-tokens, 0]",
// "anthropic-ratelimit-unified-status = rejected",
// "anthropic-ratelimit-unified-5h-status=rejected".
var headerPair = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b((?:anthropic|x)-ratelimit-[a-z0-9-]+|retry-after(?:-ms)?)\\?["']?\s*(?:[:=]|,\s)\s*\\?["']?([^\s"'\\,\]})]+)`)
})

// headerRule is the sign of a window dumped headers show spent;
// usageHeaderRule of a subscription's usage window (Anthropic's unified
// windows) they show rejected.
var (
	headerRule      = rule{kind: Wait, throttle: true, why: "rate-limit headers: a window spent"}
	usageHeaderRule = rule{kind: Wait, why: "rate-limit headers: a usage window rejected"}
)

// dumpedHeaders reads the rate-limit headers a text shows, and where the
// first of them begins; nil when it shows none. lower is text in lower
// case, to look for them cheaply first.
func dumpedHeaders(text, lower string) (http.Header, int) {
	if !strings.Contains(lower, "ratelimit-") && !strings.Contains(lower, "retry-after") {
		return nil, 0
	}
	var h http.Header
	first := 0
	for _, m := range headerPair().FindAllStringSubmatchIndex(text, maxHeaders) {
		if h == nil {
			h, first = http.Header{}, m[0]
		}
		h.Set(text[m[2]:m[3]], text[m[4]:m[5]])
	}
	return h, first
}

// maxHeaders bounds the header pairs read in one region.
const maxHeaders = 64
