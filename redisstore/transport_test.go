package redisstore

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelAPI answers every request with status, header and body, as a model
// provider's API would.
func modelAPI(t *testing.T, status int, header map[string]string, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// call makes one request through client, reading and closing the body as
// an SDK does.
func call(t *testing.T, client *http.Client, url string) {
	t.Helper()
	resp, err := client.Post(url, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
}

const chatCompletion = `{"id":"chatcmpl-1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99}}`

// The core's transport on a fleet worker: each request counts into the
// fleet's budget, each response's usage into the fleet's spend, and a 429
// puts the limit in force for every worker, before anyone records the
// iteration.
func TestATransportOnAWorkerReportsToTheFleet(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 100, MaxTokens: 1000}}}
	agent, other := f.worker("agent", cfg), f.worker("other", cfg)
	client := &http.Client{Transport: transport.New(agent, nil)}
	api := modelAPI(t, http.StatusOK, nil, chatCompletion)

	require.True(t, agent.Check().Allow)
	for range 3 { // one step, three model calls
		call(t, client, api.URL)
	}
	s := other.Stats()
	assert.Equal(t, 3, s.Budget.Used, "three requests: the one Check reserved and two more")
	assert.Equal(t, loopbreaker.Usage{InputTokens: 3 * 82, OutputTokens: 3 * 17}, s.Spend.Total)
	agent.Record(loopbreaker.Iteration{})
	assert.Equal(t, 3, other.Stats().Budget.Used, "the step's calls were counted as they were made")

	require.True(t, agent.Check().Allow)
	agent.Record(loopbreaker.Iteration{})
	assert.Equal(t, 4, other.Stats().Budget.Used, "a step without a model call counts the call Check reserved")

	require.True(t, agent.Check().Allow)
	call(t, client, modelAPI(t, http.StatusTooManyRequests, map[string]string{"Retry-After": "20"},
		`{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","code":"rate_limit_exceeded"}}`).URL)
	d := other.Check()
	require.False(t, d.Allow, "the 429 is in force for every worker at once")
	assert.Equal(t, loopbreaker.ReasonProviderLimit, d.Reason.Kind)
	assert.ErrorIs(t, d.Err(), loopbreaker.ErrProviderLimit)
	assert.InDelta(t, 20*time.Second, d.RetryAfter, float64(2*time.Second), "Retry-After, read on the worker's clock")
	assert.Equal(t, 5, other.Stats().Budget.Used)
}

// A 529 that the SDK's retry on one worker gets past is lifted for the
// whole fleet when the retry's answer comes; the fleet's dollar cap holds
// on the usage the transport prices.
func TestARetriedLimitIsLiftedForTheFleetAndTheSpendIsPriced(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 0.02}}}
	agent, other := f.worker("agent", cfg), f.worker("other", cfg)
	client := &http.Client{Transport: transport.New(agent, nil)}
	var requests atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.WriteHeader(529)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"type":"message","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":1000,"output_tokens":500}}`)
	}))
	t.Cleanup(api.Close)

	require.True(t, agent.Check().Allow)
	call(t, client, api.URL)
	require.ErrorIs(t, other.Check().Err(), loopbreaker.ErrProviderLimit, "the overload holds the fleet as it happens")
	call(t, client, api.URL) // the SDK's retry
	d := other.Check()
	require.True(t, d.Allow, "%v", d.Reason)

	assert.InDelta(t, 0.0105, other.Stats().Spend.Total.CostUSD, 1e-9, "(1000×$3 + 500×$15) per million")
	call(t, client, api.URL)
	require.ErrorIs(t, other.Check().Err(), loopbreaker.ErrSpendCap)
}

// A model with no price, under the fleet's dollar cap: the worker that
// priced it warns of it.
func TestAWorkerWarnsOfAModelWithNoPrice(t *testing.T) {
	f := newFleet(t)
	w := f.worker("agent", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 5}}})
	w.AddUsage(loopbreaker.Usage{InputTokens: 10, Model: "gpt-9"})
	d := w.Check()
	require.True(t, d.Allow)
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, loopbreaker.ReasonUnpricedModel, d.Warnings[0].Kind)
	assert.Contains(t, warningsText(d), `No price for model "gpt-9"`)
}

// The usage windows a response's headers show, through the transport of
// one worker, hold every worker of the fleet at the window share.
func TestATransportOnAWorkerReportsTheUsageWindowsToTheFleet(t *testing.T) {
	f := newFleet(t)
	cfg := Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxWindowShare: 80}}}
	agent, other := f.worker("agent", cfg), f.worker("other", cfg)
	client := &http.Client{Transport: transport.New(agent, nil)}
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	unified := func(fiveHour string) map[string]string {
		return map[string]string{
			"anthropic-ratelimit-unified-status":         "allowed",
			"anthropic-ratelimit-unified-5h-utilization": fiveHour,
			"anthropic-ratelimit-unified-5h-reset":       strconv.FormatInt(reset.Unix(), 10),
			"anthropic-ratelimit-unified-7d-utilization": "0.35",
			"anthropic-ratelimit-unified-7d-reset":       strconv.FormatInt(reset.Add(72*time.Hour).Unix(), 10),
		}
	}
	const message = `{"type":"message","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":5}}`

	require.True(t, agent.Check().Allow)
	api := modelAPI(t, http.StatusOK, unified("0.5"), message)
	call(t, client, api.URL)
	ws := other.Stats().Spend.Windows
	require.Len(t, ws, 2)
	host := strings.TrimPrefix(api.URL, "http://")
	assert.Equal(t, loopbreaker.Window{Length: 5 * time.Hour, Used: 50, Reset: reset, Source: host}, ws[0])
	assert.Equal(t, "weekly window", ws[1].Name())

	call(t, client, modelAPI(t, http.StatusOK, unified("0.83"), message).URL)
	d := other.Check()
	require.False(t, d.Allow, "the share holds every worker as the response arrives")
	assert.Equal(t, "Window share cap reached: 83% of the 5-hour window used (cap: 80%); resets "+reset.Format("2006-01-02 15:04 MST"), d.Reason.String())
	agent.Record(loopbreaker.Iteration{})
}
