package loopbreaker

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/apiusage"
	"github.com/loopbreaker/loopbreaker/internal/limits"
)

// Transport returns an http.RoundTripper for a model SDK's HTTP client
// that reports each call to the breaker as it happens. base makes the
// requests; nil means http.DefaultTransport. Install it with the SDK's
// option for an HTTP client (openai-go and anthropic-sdk-go:
// option.WithHTTPClient(&http.Client{Transport: cb.Transport(nil)})).
//
// For every request it sends, retries the SDK makes included, it counts
// one call into the call budget ([Config.MaxCallsPerHour]); a breaker
// with a transport then counts an iteration's calls only when
// [Iteration.Calls] says how many, so none is counted twice. As the SDK
// reads a response body, it reads the token usage and the model that
// OpenAI (chat completions, responses), Anthropic (messages) and Gemini
// (generateContent) put in it, streamed or not, and reports it when the
// body ends or is closed, priced with [Config.Prices], so that
// [Config.MaxCostUSD] holds.
//
// A response that is a provider limit (429 with Retry-After or the
// rate-limit headers, Anthropic's 529, a body such as OpenAI's
// insufficient_quota) is reported when its body ends or is closed, with
// the API's host as its [Limit.Source]. The SDK retries such a response
// itself, under the transport: when a later request to the same host,
// sent after the limit was reported, succeeds, the SDK has recovered, and
// the transport lifts the limit ([CircuitBreaker.LiftLimit]). A limit the
// SDK gave up on (its retries spent, its error returned to the host) stays
// in force until its reset.
//
// It never changes what the SDK sees: the same response, its body's bytes
// passing through as they come, and the same errors. It keeps no body:
// at most one usage object (4 KiB) of a successful response, and the first
// 64 KiB of an error response's body. It never refuses a request either:
// the host asks Check before each step, as ever.
func (b *CircuitBreaker) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	b.mu.Lock()
	b.callsByTransport = true
	b.mu.Unlock()
	return &transport{base: base, to: b}
}

// Meter is what a transport reports a model SDK's calls to as they
// happen: a call sent, the usage a response reported, a limit a response
// was. [*CircuitBreaker] is a Meter, and so is a worker of a fleet that
// shares one breaker on Redis (the module
// github.com/loopbreaker/loopbreaker/redisstore), so [NewTransport] makes
// one transport for either. Implementations are safe for concurrent use:
// an SDK may send several requests at once.
type Meter interface {
	// CountCall counts one call, sent now, into the call budget
	// ([CircuitBreaker.CountCall]).
	CountCall()
	// AddUsage adds what a call spent ([CircuitBreaker.AddUsage]).
	AddUsage(u Usage)
	// ObserveLimit puts a provider limit in force ([CircuitBreaker.ObserveLimit]).
	ObserveLimit(l Limit)
	// LiftLimit lifts the wait or throttle that source put in force: the
	// provider answered a request sent after it ([CircuitBreaker.LiftLimit]).
	LiftLimit(source string)
}

// NewTransport returns the transport that [CircuitBreaker.Transport]
// returns, reporting to m: each request it sends is m.CountCall, the usage
// a response reports m.AddUsage (with its Model, for m to price), a
// response that is a provider limit m.ObserveLimit, a success after one
// m.LiftLimit. base makes the requests; nil means
// http.DefaultTransport. now is the clock that turns a reset given as a
// delay (Retry-After: 20) into a time; nil means, for a *CircuitBreaker,
// its [Config.Now] (NewTransport(base, cb, nil) is cb.Transport(base)),
// and time.Now for any other Meter.
func NewTransport(base http.RoundTripper, m Meter, now func() time.Time) http.RoundTripper {
	b, isBreaker := m.(*CircuitBreaker)
	if isBreaker && now == nil {
		return b.Transport(base)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	if now == nil {
		now = time.Now
	}
	if isBreaker {
		b.mu.Lock()
		b.callsByTransport = true
		b.mu.Unlock()
	}
	return &transport{base: base, to: meterReporter{m: m, clock: now}}
}

// reporter is what a transport reports to: the breaker, or a test's fake.
type reporter interface {
	now() time.Time
	reportCall(at time.Time)
	reportUsage(u apiusage.Usage)
	reportLimit(l limits.Limit, source string)
	liftLimit(source string)
}

// transport is the RoundTripper that Transport returns.
type transport struct {
	base http.RoundTripper
	to   reporter

	mu     sync.Mutex
	limits map[string]uint64 // by host: the limits reported, numbered
}

// RoundTrip counts the call, sends the request with the base transport,
// and watches the response's body. A success from a host whose limit this
// transport reported before the request was sent lifts the limit.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	before := t.limitsOf(host)
	t.to.reportCall(t.to.now())
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && before > 0 && t.limitsOf(host) == before {
		t.to.liftLimit(host)
	}
	if resp.Body == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, nil
	}
	resp.Body = &watchedBody{body: resp.Body, status: resp.StatusCode, header: resp.Header, host: host, t: t}
	return resp, nil
}

// limitsOf returns how many limits the transport reported of host.
func (t *transport) limitsOf(host string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits[host]
}

// reportLimit reports l, which host's response was.
func (t *transport) reportLimit(l limits.Limit, host string) {
	t.mu.Lock()
	if t.limits == nil {
		t.limits = make(map[string]uint64)
	}
	t.limits[host]++
	t.mu.Unlock()
	t.to.reportLimit(l, host)
}

// watchedBody passes a response body through and reads what it reports.
type watchedBody struct {
	body   io.ReadCloser
	status int
	header http.Header
	host   string
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

	at := w.t.to.now()
	if w.status >= http.StatusBadRequest {
		if l := limits.FromHTTP(w.status, w.header, errBody, at); l.Kind != limits.None {
			w.t.reportLimit(l, w.host)
		}
		return
	}
	if found {
		w.t.to.reportUsage(u)
	}
}
