// Package transport is the http.RoundTripper that puts a model SDK's calls
// under a loopbreaker breaker as they happen: each request counts into the
// call budget, the token usage each response reports goes to the spend,
// priced, and a response that is a provider limit puts the limit in force
// before the SDK even returns.
//
//	cb, _ := loopbreaker.New(cfg)
//	httpClient := &http.Client{Transport: transport.New(cb, nil)}
//	client := openai.NewClient(option.WithHTTPClient(httpClient))      // openai-go
//	claude := anthropic.NewClient(option.WithHTTPClient(httpClient))   // anthropic-sdk-go
//
// It reads OpenAI's chat completions and responses, Anthropic's messages
// and Gemini's generateContent, each streamed or not, as the SDK reads
// them: it never buffers a body and never changes what the SDK sees.
package transport

import (
	"io"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/apiusage"
	"github.com/loopbreaker/loopbreaker/internal/limits"
	"github.com/loopbreaker/loopbreaker/internal/windows"
)

// Meter is what a transport reports to: a *loopbreaker.CircuitBreaker, or a
// worker of a fleet that shares one breaker on Redis (the module
// github.com/loopbreaker/loopbreaker/redisstore). Implementations are safe
// for concurrent use: an SDK may send several requests at once.
type Meter interface {
	// Now is the meter's clock, which dates a reset given as a delay
	// (Retry-After: 20).
	Now() time.Time
	// CountCall counts one call, sent now, into the call budget.
	CountCall()
	// AddUsage adds what a call spent: its tokens and the model that
	// answered, for the meter to price.
	AddUsage(u loopbreaker.Usage)
	// ObserveLimit puts a provider limit in force.
	ObserveLimit(l loopbreaker.Limit)
	// LiftLimit lifts the wait or throttle that source put in force: the
	// provider answered a request sent after it.
	LiftLimit(source string)
}

// WindowMeter is a Meter that also hears how much of the provider's usage
// windows (a subscription's 5-hour and weekly limits) is used:
// a *loopbreaker.CircuitBreaker is one. The transport reports the windows
// each response's headers show to a Meter that is a WindowMeter.
type WindowMeter interface {
	Meter
	// ObserveWindow tells the meter how much of one window is used.
	ObserveWindow(w loopbreaker.Window)
}

// New returns an http.RoundTripper that sends requests with base (nil:
// http.DefaultTransport) and reports them to m. Install it with the SDK's
// option for an HTTP client (openai-go and anthropic-sdk-go:
// option.WithHTTPClient(&http.Client{Transport: transport.New(cb, nil)})).
//
// For every request it sends, retries the SDK makes included, it counts
// one call (m.CountCall); a breaker then counts an iteration's calls only
// when [loopbreaker.Iteration.Calls] says how many, so none is counted
// twice. As the SDK reads a response body, it reads the token usage and
// the model that OpenAI (chat completions, responses), Anthropic
// (messages) and Gemini (generateContent) put in it, streamed or not, and
// reports it (m.AddUsage) when the body ends or is closed: the meter
// prices it with its [loopbreaker.Config.Spend.Prices], so that a dollar cap
// holds.
//
// A response that is a provider limit (a 429 with Retry-After or the
// rate-limit headers, Anthropic's 529, a 502, 503 or 504 of the busy
// server, waited out as a throttle, a body such as OpenAI's
// insufficient_quota) is reported (m.ObserveLimit) when its body ends or is
// closed, with the API's host as its [loopbreaker.Limit.Source]. The SDK
// retries such a response itself, under the transport: when a later
// request to the same host, sent after the limit was reported, succeeds,
// the SDK has recovered, and the transport lifts the limit (m.LiftLimit).
// A limit the SDK gave up on (its retries spent, its error returned to the
// host) stays in force until its reset.
//
// When m is a [WindowMeter], the usage windows a response's headers show
// are reported to it (m.ObserveWindow) as the response arrives, a
// refusal's too, with the API's host as their Source: Anthropic's unified
// rate-limit headers of a subscription (anthropic-ratelimit-unified-5h-
// and -7d-utilization, with their -reset), and the Codex backend's
// x-codex-primary- and -secondary-used-percent, with their window's
// minutes and reset, so that [loopbreaker.SpendRules.MaxWindowShare] holds.
//
// It keeps no body: at most one usage object (4 KiB) of a successful
// response, and the first 64 KiB of an error response's body. It never
// refuses a request either: the host asks the breaker before each step, as
// ever.
func New(m Meter, base http.RoundTripper) http.RoundTripper {
	return newTransport(func(*http.Request) Meter { return m }, base)
}

// newTransport returns the transport that reports each request to the
// meter route returns for it.
func newTransport(route func(*http.Request) Meter, base http.RoundTripper) *transport {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, route: route}
}

// transport is the RoundTripper New and Route return.
type transport struct {
	base  http.RoundTripper
	route func(*http.Request) Meter

	mu     sync.Mutex
	limits map[limitKey]uint64 // the limits reported, numbered
}

// limitKey names the limits of one host reported to one meter.
type limitKey struct {
	m    Meter
	host string
}

// maxLimitKeys bounds the meters and hosts whose limits a transport keeps
// count of, so that routed sessions that come and go leave nothing
// behind. A count dropped only means that a limit the SDK retried away is
// waited out to its reset instead of lifted at once.
const maxLimitKeys = 4096

// RoundTrip counts the call, sends the request with the base transport,
// and watches the response's body. A success from a host whose limit this
// transport reported to the same meter before the request was sent lifts
// the limit.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	m := t.route(req)
	if req.Header.Get(RouteHeader) != "" {
		req = req.Clone(req.Context())
		req.Header.Del(RouteHeader)
	}
	if m == nil {
		return t.base.RoundTrip(req)
	}
	key := limitKey{host: req.URL.Host}
	if reflect.TypeOf(m).Comparable() {
		key.m = m
	}
	before := t.limitsOf(key)
	m.CountCall()
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && before > 0 && t.limitsOf(key) == before {
		t.forget(key)
		m.LiftLimit(key.host)
	}
	if wm, ok := m.(WindowMeter); ok {
		for _, w := range windows.FromHeader(resp.Header, key.host) {
			wm.ObserveWindow(w)
		}
	}
	if resp.Body == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, nil
	}
	resp.Body = &watchedBody{body: resp.Body, status: resp.StatusCode, header: resp.Header, key: key, m: m, t: t}
	return resp, nil
}

// limitsOf returns how many limits the transport reported of key's host to
// its meter.
func (t *transport) limitsOf(key limitKey) uint64 {
	if key.m == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits[key]
}

// forget drops the count of key: its limit is lifted.
func (t *transport) forget(key limitKey) {
	t.mu.Lock()
	delete(t.limits, key)
	t.mu.Unlock()
}

// reportLimit reports l, which key's host's response was, to m.
func (t *transport) reportLimit(l limits.Limit, key limitKey, m Meter) {
	lim, ok := publicLimit(l)
	if !ok {
		return
	}
	lim.Source = key.host
	if key.m != nil {
		t.mu.Lock()
		if t.limits == nil {
			t.limits = make(map[limitKey]uint64)
		}
		if _, ok := t.limits[key]; !ok && len(t.limits) >= maxLimitKeys {
			for k := range t.limits {
				delete(t.limits, k)
				break
			}
		}
		t.limits[key]++
		t.mu.Unlock()
	}
	m.ObserveLimit(lim)
}

// publicLimit returns a limit internal/limits read as the breaker takes
// it; false for none.
func publicLimit(l limits.Limit) (loopbreaker.Limit, bool) {
	switch l.Kind {
	case limits.Wait:
		kind := loopbreaker.LimitWait
		if l.Throttle {
			kind = loopbreaker.LimitThrottle
		}
		return loopbreaker.Limit{Kind: kind, Reset: l.Reset, Why: l.Why}, true
	case limits.Stop:
		return loopbreaker.Limit{Kind: loopbreaker.LimitStop, Why: l.Why}, true
	}
	return loopbreaker.Limit{}, false
}

// watchedBody passes a response body through and reads what it reports.
type watchedBody struct {
	body   io.ReadCloser
	status int
	header http.Header
	key    limitKey
	m      Meter
	t      *transport

	mu       sync.Mutex
	usage    apiusage.Scanner // of a successful response
	errBody  []byte           // the first limits.MaxScan bytes of an error response
	finished bool
}

// Read reads from the body and watches what it read.
func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 || err != nil {
		w.mu.Lock()
		if n > 0 && !w.finished {
			w.watch(p[:n])
		}
		w.mu.Unlock()
	}
	if err == io.EOF {
		w.finish()
	}
	return n, err
}

// watch reads the bytes the SDK read. Called with w.mu held.
func (w *watchedBody) watch(p []byte) {
	if w.status >= http.StatusBadRequest {
		if room := limits.MaxScan - len(w.errBody); room > 0 {
			w.errBody = append(w.errBody, p[:min(room, len(p))]...)
		}
		return
	}
	_, _ = w.usage.Write(p)
}

// Close reports what was read, then closes the body.
func (w *watchedBody) Close() error {
	w.finish()
	return w.body.Close()
}

// finish reports the response's usage, or the limit it is, once: when the
// body ends or is closed, whichever comes first.
func (w *watchedBody) finish() {
	w.mu.Lock()
	if w.finished {
		w.mu.Unlock()
		return
	}
	w.finished = true
	u, found := w.usage.Usage()
	errBody := w.errBody
	w.errBody = nil
	w.mu.Unlock()

	if w.status >= http.StatusBadRequest {
		if l := limits.FromHTTP(w.status, w.header, errBody, w.m.Now()); l.Kind != limits.None {
			w.t.reportLimit(l, w.key, w.m)
		}
		return
	}
	if found {
		w.m.AddUsage(loopbreaker.Usage{
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Model: u.Model,
			CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		})
	}
}
