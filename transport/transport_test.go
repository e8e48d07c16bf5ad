package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/loopbreaker/loopbreaker/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start is when the tests' clocks start.
var start = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

// newBreaker returns a breaker for cfg on a fresh fake clock.
func newBreaker(t *testing.T, cfg loopbreaker.Config) (*loopbreaker.CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	clock := loopbreakertest.NewClock(start)
	cfg.Now = clock.Now
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	return cb, clock
}

// meterLog is a Meter of a host's own: it writes down what it is told.
type meterLog struct {
	mu     sync.Mutex
	calls  int
	usage  []loopbreaker.Usage
	limits []loopbreaker.Limit
	lifts  []string
}

func (m *meterLog) Now() time.Time { return start }

func (m *meterLog) CountCall() {
	m.mu.Lock()
	m.calls++
	m.mu.Unlock()
}

func (m *meterLog) AddUsage(u loopbreaker.Usage) {
	m.mu.Lock()
	m.usage = append(m.usage, u)
	m.mu.Unlock()
}

func (m *meterLog) LiftLimit(source string) {
	m.mu.Lock()
	m.lifts = append(m.lifts, source)
	m.mu.Unlock()
}

func (m *meterLog) ObserveLimit(l loopbreaker.Limit) {
	m.mu.Lock()
	m.limits = append(m.limits, l)
	m.mu.Unlock()
}

// A breaker and a fleet's worker are Meters; so is a host's own. A breaker
// hears the usage windows too.
var (
	_ transport.Meter       = (*loopbreaker.CircuitBreaker)(nil)
	_ transport.Meter       = (*meterLog)(nil)
	_ transport.WindowMeter = (*loopbreaker.CircuitBreaker)(nil)
)

// Responses in the providers' wire formats.
const (
	openAIChatBody = `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"gpt-4.1",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_files","arguments":"{\"dir\":\".\"}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99}}`
	openAIStreamBody = "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}],\"usage\":null}\n\n" +
		"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n" +
		"data: [DONE]\n\n"
	anthropicBody = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":120,"cache_read_input_tokens":30,"output_tokens":4}}`
	anthropicStreamBody = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":50,\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":12}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// serve answers every request with status, header and body, flushing
// each SSE event as its own write.
func serve(t *testing.T, status int, header map[string]string, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		for _, event := range strings.SplitAfter(body, "\n\n") {
			_, _ = io.WriteString(w, event)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fetch makes one request through client, reading and closing the body
// as an SDK does.
func fetch(t *testing.T, client *http.Client, url string) {
	t.Helper()
	resp, err := client.Get(url)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
}

// none stands for no limit in the table below.
const none = loopbreaker.LimitKind(255)

func TestTransportReadsUsageAndLimits(t *testing.T) {
	now := start
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		usage  []loopbreaker.Usage
		limit  loopbreaker.LimitKind
		reset  time.Time
	}{
		{"an OpenAI chat completion", 200, map[string]string{"Content-Type": "application/json"}, openAIChatBody, []loopbreaker.Usage{{InputTokens: 82, OutputTokens: 17, Model: "gpt-4.1"}}, none, time.Time{}},
		{"an OpenAI stream with include_usage", 200, map[string]string{"Content-Type": "text/event-stream"}, openAIStreamBody, []loopbreaker.Usage{{InputTokens: 9, OutputTokens: 2}}, none, time.Time{}},
		{"an Anthropic message", 200, nil, anthropicBody, []loopbreaker.Usage{{InputTokens: 150, OutputTokens: 4, CacheReadTokens: 30, Model: "claude-sonnet-4-5"}}, none, time.Time{}},
		{"an Anthropic stream", 200, map[string]string{"Content-Type": "text/event-stream"}, anthropicStreamBody, []loopbreaker.Usage{{InputTokens: 50, OutputTokens: 12}}, none, time.Time{}},
		{"OpenAI's 429 with Retry-After", 429, map[string]string{"Retry-After": "20"},
			`{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","code":"rate_limit_exceeded"}}`, nil, loopbreaker.LimitThrottle, now.Add(20 * time.Second)},
		{"Anthropic's 529", 529, map[string]string{"Retry-After": "7"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, nil, loopbreaker.LimitThrottle, now.Add(7 * time.Second)},
		{"OpenAI's insufficient_quota is no wait", 429, nil,
			`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, nil, loopbreaker.LimitStop, time.Time{}},
		{"a 500 is an ordinary failure", 500, nil, `{"error":{"message":"server error"}}`, nil, none, time.Time{}},
		{"a 502 from the model's host is a brief throttle", 502, nil, "<html>Bad Gateway</html>", nil, loopbreaker.LimitThrottle, time.Time{}},
		{"Gemini's 503 with Retry-After", 503, map[string]string{"Retry-After": "15"},
			`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, nil, loopbreaker.LimitThrottle, now.Add(15 * time.Second)},
		{"a 504", 504, nil, "", nil, loopbreaker.LimitThrottle, time.Time{}},
		{"a refusal of repeated tool calls is no limit: the host's Record opens the circuit", 400, nil,
			`{"error":{"message":"Repetitive tool calls detected in the conversation history."}}`, nil, none, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, tt.status, tt.header, tt.body)
			rep := &meterLog{}
			client := &http.Client{Transport: transport.New(rep, nil)}
			resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, tt.body, string(got), "the SDK reads the body as it was sent")
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, 1, rep.calls)
			assert.Equal(t, tt.usage, rep.usage)
			if tt.limit == none {
				assert.Empty(t, rep.limits)
				return
			}
			require.Len(t, rep.limits, 1, "reported once, at the end of the body, not again at Close")
			assert.Equal(t, tt.limit, rep.limits[0].Kind)
			assert.Equal(t, tt.reset, rep.limits[0].Reset)
			assert.Equal(t, strings.TrimPrefix(srv.URL, "http://"), rep.limits[0].Source, "the API's host")
		})
	}
}

// A body the SDK closes before its end is reported with what was read.
func TestTransportReportsABodyClosedEarly(t *testing.T) {
	srv := serve(t, 200, nil, anthropicStreamBody)
	rep := &meterLog{}
	client := &http.Client{Transport: transport.New(rep, nil)}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	first := make([]byte, strings.Index(anthropicStreamBody, "event: content_block_delta"))
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, resp.Body.Close(), "closing twice is the base body's business")
	assert.Equal(t, []loopbreaker.Usage{{InputTokens: 50, OutputTokens: 1}}, rep.usage)
}

// Every request counts, the SDK's retries included; an error before any
// response counts too (the request was sent, or tried).
func TestTransportCountsRetriesAsCalls(t *testing.T) {
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts++
		if attempts < 3 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, openAIChatBody)
	}))
	defer srv.Close()
	cb, _ := newBreaker(t, loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 10}})
	client := &http.Client{Transport: transport.New(cb, nil)}
	for range 3 { // the SDK retrying
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	assert.Equal(t, 3, cb.Stats().Budget.Used)
	cb.Record(loopbreaker.Iteration{}) // the step says nothing of its calls: counted already
	assert.Equal(t, 3, cb.Stats().Budget.Used)
	cb.Record(loopbreaker.Iteration{Calls: 2}) // a step that says so counts
	assert.Equal(t, 5, cb.Stats().Budget.Used)
}

// Read and Close from two goroutines (an SDK cancelling a stream) race
// with nothing.
func TestTransportBodyReadAndCloseConcurrently(t *testing.T) {
	srv := serve(t, 200, nil, strings.Repeat(openAIStreamBody, 200))
	rep := &meterLog{}
	client := &http.Client{Transport: transport.New(rep, nil)}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	_ = resp.Body.Close()
	<-done
	assert.LessOrEqual(t, len(rep.usage), 1)
}

func ExampleNew() {
	// A model API that answers with its token usage (a test server here).
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[],"usage":{"prompt_tokens":82,"completion_tokens":17}}`)
	}))
	defer api.Close()

	cb, _ := loopbreaker.New(loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 100}})
	// With openai-go or anthropic-sdk-go:
	//   client := openai.NewClient(option.WithHTTPClient(&http.Client{Transport: transport.New(cb, nil)}))
	httpClient := &http.Client{Transport: transport.New(cb, nil)}
	resp, err := httpClient.Post(api.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Println("calls this hour:", cb.Stats().Budget.Used)
	// Output:
	// calls this hour: 1
}

// BenchmarkTransport measures the bytes per second an SDK reads through
// the transport, against the same client without it, on an Anthropic
// stream of 1 MiB.
func BenchmarkTransport(b *testing.B) {
	var body bytes.Buffer
	for body.Len() < 1<<20 {
		body.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lorem ipsum dolor sit amet, consectetur adipiscing elit\"}}\n\n")
	}
	body.WriteString(anthropicStreamBody)
	payload := body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(payload) }))
	defer srv.Close()
	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"direct", http.DefaultTransport},
		{"transport", transport.New(&meterLog{}, nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: bc.rt}
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for range b.N {
				resp, err := client.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, buf)
				_ = resp.Body.Close()
			}
		})
	}
}

// Through a real breaker: the token usage a response carries goes to the
// spend as it streams past, and a 429 with Retry-After puts a provider
// limit in force before the host records anything, so every Check waits
// it out.
func TestTransportFeedsTheSpendAndTheProviderLimit(t *testing.T) {
	cb, clock := newBreaker(t, loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxTokens: 1000}})
	client := &http.Client{Transport: transport.New(cb, nil)}

	fetch(t, client, serve(t, http.StatusOK, map[string]string{"Content-Type": "text/event-stream"}, anthropicStreamBody).URL)
	spend := cb.Stats().Spend
	assert.Equal(t, 50, spend.Total.InputTokens)
	assert.Equal(t, 12, spend.Total.OutputTokens)

	fetch(t, client, serve(t, http.StatusTooManyRequests, map[string]string{"Retry-After": "20"}, `{"error":{"type":"rate_limit_error"}}`).URL)
	d := cb.Check()
	require.False(t, d.Allow, "the limit is in force before any Record")
	assert.Equal(t, loopbreaker.ReasonProviderLimit, d.Reason.Kind)
	assert.Equal(t, 20*time.Second, d.RetryAfter)
	assert.ErrorIs(t, d.Err(), loopbreaker.ErrProviderLimit)

	clock.Advance(20 * time.Second)
	assert.True(t, cb.Check().Allow, "and lifts at the reset")
}

// A model SDK retries a 529 under the transport, and the retry succeeds:
// the limit the transport reported is lifted when the answer comes, so
// the next Check goes on. The history tells both.
func TestALimitIsLiftedWhenTheRetryUnderTheTransportSucceeds(t *testing.T) {
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.WriteHeader(529)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		_, _ = io.WriteString(w, anthropicBody)
	}))
	t.Cleanup(srv.Close)
	b, _ := newBreaker(t, loopbreaker.Config{})
	client := &http.Client{Transport: transport.New(b, nil)}

	fetch(t, client, srv.URL)
	d := b.Check()
	require.ErrorIs(t, d.Err(), loopbreaker.ErrProviderLimit, "the 529 is in force as it happens")
	assert.Equal(t, 5*time.Minute, d.RetryAfter)

	fetch(t, client, srv.URL) // the SDK's retry
	d = b.Check()
	assert.True(t, d.Allow, "%v", d.Reason)
	h := b.Stats().History
	require.Len(t, h, 2)
	assert.Equal(t, loopbreaker.CauseProviderLimit, h[0].Cause)
	assert.Equal(t, loopbreaker.CauseLimitLifted, h[1].Cause)
	assert.Equal(t, loopbreaker.ReasonProviderLimit, h[1].Reason.Kind, "the lifted limit's reason")
	assert.Contains(t, h[1].String(), "limit_lifted: Provider limit: HTTP 529")
}

// An answer to a request sent before the limit was reported is no sign
// that the provider recovered: it lifts nothing.
func TestASuccessSentBeforeTheLimitLiftsNothing(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(arrived)
			<-release
			_, _ = io.WriteString(w, anthropicBody)
			return
		}
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`)
	}))
	t.Cleanup(srv.Close)
	b, _ := newBreaker(t, loopbreaker.Config{})
	client := &http.Client{Transport: transport.New(b, nil)}

	slow := make(chan struct{})
	go func() {
		defer close(slow)
		fetch(t, client, srv.URL+"/slow")
	}()
	<-arrived
	fetch(t, client, srv.URL+"/limited")
	close(release)
	<-slow

	d := b.Check()
	require.ErrorIs(t, d.Err(), loopbreaker.ErrProviderLimit)
	assert.Equal(t, 20*time.Second, d.RetryAfter)
}

// A dollar cap trips on the usage a transport reads, priced: each
// response of claude-sonnet-4-5 costs (1000×3 + 500×15)/1e6 = $0.0105,
// and a $0.02 cap is spent by the second. The host's table wins over the
// built-in one.
func TestADollarCapTripsOnTheUsageTheTransportReads(t *testing.T) {
	body := `{"type":"message","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"ok"}],` +
		`"usage":{"input_tokens":1000,"output_tokens":500}}`
	srv := serve(t, http.StatusOK, nil, body)
	b, _ := newBreaker(t, loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 0.02}})
	client := &http.Client{Transport: transport.New(b, nil)}
	fetch(t, client, srv.URL)
	d := b.Check()
	require.True(t, d.Allow)
	assert.InDelta(t, 0.0105, b.Stats().Spend.Total.CostUSD, 1e-12)
	fetch(t, client, srv.URL)
	d = b.Check()
	require.ErrorIs(t, d.Err(), loopbreaker.ErrSpendCap)
	assert.Equal(t, "Spend cap reached: $0.021 over the loop's life (cap: $0.02)", d.Reason.String())
	_, err := b.Wait(context.Background())
	require.ErrorIs(t, err, loopbreaker.ErrSpendCap, "no waiting ends a cap of the loop's life")

	own := loopbreaker.DefaultPrices()
	own["claude-sonnet-4-5"] = loopbreaker.Price{Input: 1, Output: 1}
	b, _ = newBreaker(t, loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 0.02, Prices: own}})
	b.AddUsage(loopbreaker.Usage{InputTokens: 1000, OutputTokens: 500, Model: "claude-sonnet-4-5-20250929"})
	assert.InDelta(t, 0.0015, b.Stats().Spend.Total.CostUSD, 1e-12)
}

// A subscription's responses say how much of the 5-hour and weekly windows
// is used: the transport reports it as each response arrives, and at the
// share the loop may use, the next Check refuses until the window resets.
func TestTransportFeedsTheWindowShare(t *testing.T) {
	cb, clock := newBreaker(t, loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxWindowShare: 80}})
	client := &http.Client{Transport: transport.New(cb, nil)}
	reset := start.Add(2 * time.Hour)
	unified := func(fiveHour string) map[string]string {
		return map[string]string{
			"anthropic-ratelimit-unified-status":         "allowed",
			"anthropic-ratelimit-unified-5h-utilization": fiveHour,
			"anthropic-ratelimit-unified-5h-reset":       fmt.Sprint(reset.Unix()),
			"anthropic-ratelimit-unified-7d-utilization": "0.35",
			"anthropic-ratelimit-unified-7d-reset":       fmt.Sprint(start.Add(96 * time.Hour).Unix()),
		}
	}
	srv := serve(t, http.StatusOK, unified("0.5"), anthropicBody)
	fetch(t, client, srv.URL)
	d := cb.Check()
	require.True(t, d.Allow)
	ws := cb.Stats().Spend.Windows
	require.Len(t, ws, 2)
	host := strings.TrimPrefix(srv.URL, "http://")
	assert.Equal(t, loopbreaker.Window{Length: 5 * time.Hour, Used: 50, Reset: reset, Source: host}, ws[0])
	assert.Equal(t, 7*24*time.Hour, ws[1].Length)

	fetch(t, client, serve(t, http.StatusOK, unified("0.83"), anthropicBody).URL)
	d = cb.Check()
	require.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonWindowShare, d.Reason.Kind)
	assert.Equal(t, "Window share cap reached: 83% of the 5-hour window used (cap: 80%); resets 2026-01-19 11:00 UTC", d.Reason.String())
	assert.Equal(t, 2*time.Hour, d.RetryAfter)
	clock.Advance(2 * time.Hour)
	assert.True(t, cb.Check().Allow, "the window reset")

	rep := &meterLog{}
	fetch(t, &http.Client{Transport: transport.New(rep, nil)}, srv.URL)
	assert.Len(t, rep.usage, 1, "a Meter that hears no windows is told the rest")
}
