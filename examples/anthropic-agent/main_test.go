package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turn is one scripted answer of the model: tool uses (name, JSON input),
// or a final text; or an HTTP error status with headers and error type.
type turn struct {
	uses      [][2]string
	text      string
	status    int
	header    map[string]string
	errorType string
}

// scriptedModel plays the Anthropic messages API: each request gets the
// next turn of the script, the last one again when it runs out.
type scriptedModel struct {
	mu       sync.Mutex
	script   []turn
	requests int
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	m.mu.Lock()
	t := m.script[min(m.requests, len(m.script)-1)]
	m.requests++
	n := m.requests
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if t.status != 0 {
		for k, v := range t.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(t.status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"Overloaded"}}`, t.errorType)
		return
	}
	content := []any{}
	stop := "tool_use"
	for i, u := range t.uses {
		content = append(content, map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, i), "name": u[0], "input": json.RawMessage(u[1]),
		})
	}
	if len(t.uses) == 0 {
		content = append(content, map[string]any{"type": "text", "text": t.text})
		stop = "end_turn"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100 * n, "cache_read_input_tokens": 0, "output_tokens": 20},
	})
}

func (m *scriptedModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

// fakeClock is the breaker's clock; its Sleep moves it on at once.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	c.mu.Unlock()
	return ctx.Err()
}

// workspace is an in-memory project for the tools.
func workspace() Tools {
	files := map[string]string{"parse.go": "package parse\n", "parse_test.go": "package parse\n"}
	return Tools{
		"list_files": func(string) (string, error) { return "parse.go\nparse_test.go", nil },
		"read_file": func(input string) (string, error) {
			var p struct{ Path string }
			if err := jsonArgs(input, &p); err != nil {
				return "", err
			}
			if data, ok := files[p.Path]; ok {
				return data, nil
			}
			return "", fmt.Errorf("open %s: no such file or directory", p.Path)
		},
		"run_tests": func(string) (string, error) { return "ok  \tparse\t0.012s", nil },
	}
}

// start is when the breaker's clock starts.
var start = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

// setup returns an agent on the example's breaker config, with a call
// budget and a $2 cap, whose client talks to the scripted model with the
// SDK's retries off, so that each turn of the script is one request; the
// breaker runs on a fake clock.
func setup(t *testing.T, script []turn, tools Tools) (*agent, *scriptedModel, *fakeClock) {
	t.Helper()
	return setupWith(t, script, tools, 2, option.WithMaxRetries(0))
}

// setupWith is setup with a dollar cap and the SDK's options of the
// test's own (none: the SDK's defaults, two retries).
func setupWith(t *testing.T, script []turn, tools Tools, maxCostUSD float64, opts ...option.RequestOption) (*agent, *scriptedModel, *fakeClock) {
	t.Helper()
	model := &scriptedModel{script: script}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	clock := &fakeClock{now: start}
	cfg := breakerConfig(maxCostUSD)
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	cfg.Spend.MaxCallsPerHour = 100
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	a := newAgent(cb, tools, "claude-sonnet-4-5", append([]option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("test-key")}, opts...)...)
	return a, model, clock
}

// causes returns the causes of the breaker's transitions, in order.
func causes(cb *loopbreaker.CircuitBreaker) []loopbreaker.Cause {
	var cs []loopbreaker.Cause
	for _, tr := range cb.Stats().History {
		cs = append(cs, tr.Cause)
	}
	return cs
}

// The model runs the tests and reads the same file in turn, and nothing
// changes: the breaker opens once the two steps have alternated three
// times, OpenHands' "action, observation pattern". After each cooldown one
// probe turn runs, and alternates again; at the third opening in a row the
// breaker gives up, and the agent stops with the reason.
func TestStuckAlternationIsGivenUpOn(t *testing.T) {
	runTests := turn{uses: [][2]string{{"run_tests", `{}`}}}
	readParse := turn{uses: [][2]string{{"read_file", `{"path": "parse.go"}`}}}
	a, model, clock := setup(t, []turn{runTests, readParse, runTests, readParse, runTests, readParse, runTests, readParse}, workspace())
	_, err := a.run(context.Background(), "Make the tests pass.")
	require.ErrorIs(t, err, errStopped)
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), "Gave up: the circuit opened 3 times in a row without recovering (threshold: 3): Alternating actions")
	assert.Contains(t, err.Error(), `run_tests {} | read_file {"path":"parse.go"}`, "the input as the SDK decoded it")
	assert.Equal(t, 6+2, model.count(), "six steps, then a probe after each of two cooldowns")
	assert.Equal(t, []time.Duration{30 * time.Second, 30 * time.Second}, clock.slept)
	h := a.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, loopbreaker.ReasonAlternatingActions, h[0].Reason.Kind, "the first opening")
}

// The same alternation, but the probe after the cooldown answers: the
// circuit closes and the agent finishes.
func TestAProbeThatGetsOnFinishes(t *testing.T) {
	runTests := turn{uses: [][2]string{{"run_tests", `{}`}}}
	readParse := turn{uses: [][2]string{{"read_file", `{"path": "parse.go"}`}}}
	a, model, clock := setup(t, []turn{runTests, readParse, runTests, readParse, runTests, readParse, {text: "parse.go is fine."}}, workspace())
	answer, err := a.run(context.Background(), "Make the tests pass.")
	require.NoError(t, err)
	assert.Equal(t, "parse.go is fine.", answer)
	assert.Equal(t, 7, model.count())
	assert.Equal(t, []time.Duration{30 * time.Second}, clock.slept)
	assert.Equal(t, loopbreaker.Closed, a.cb.Stats().State)
}

// The model reads a file that is not there: the third failure opens the
// circuit, the two probes read it again, and the breaker gives up.
func TestSameFailingToolUseIsGivenUpOn(t *testing.T) {
	a, model, _ := setup(t, []turn{{uses: [][2]string{{"read_file", `{"path":"report.csv"}`}}}}, workspace())
	_, err := a.run(context.Background(), "Summarise report.csv.")
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), `read_file {"path":"report.csv"}`)
	assert.Equal(t, 3+2, model.count())
	h := a.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, `Same action failed 3 times in a row (threshold: 3, error 8d08d11a): read_file {"path":"report.csv"}`, h[0].Reason.String())
}

// A healthy task with two tool uses in one turn: the breaker lets it
// finish.
func TestHealthyTaskFinishes(t *testing.T) {
	a, model, _ := setup(t, []turn{
		{uses: [][2]string{{"list_files", `{}`}}},
		{uses: [][2]string{{"read_file", `{"path":"parse.go"}`}, {"run_tests", `{}`}}},
		{text: "The tests pass."},
	}, workspace())
	answer, err := a.run(context.Background(), "Do the tests pass?")
	require.NoError(t, err)
	assert.Equal(t, "The tests pass.", answer)
	assert.Equal(t, 3, model.count())
	assert.Equal(t, loopbreaker.Closed, a.cb.Stats().State)
	assert.Equal(t, 3, a.cb.Stats().Budget.Used)
}

// Anthropic answers 529 overloaded with Retry-After: the transport counts
// the call and reports it, the agent waits on the breaker's clock and
// finishes.
func TestOverloadIsWaitedOut(t *testing.T) {
	a, model, clock := setup(t, []turn{
		{status: 529, errorType: "overloaded_error", header: map[string]string{"Retry-After": "15"}},
		{uses: [][2]string{{"list_files", `{}`}}},
		{text: "Two files."},
	}, workspace())
	answer, err := a.run(context.Background(), "How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", answer)
	assert.Equal(t, 3, model.count())
	assert.Equal(t, 3, a.cb.Stats().Budget.Used, "the refused request counted too")
	assert.Equal(t, []time.Duration{15 * time.Second}, clock.slept, "the breaker waited out the Retry-After, on its clock")
	h := a.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, loopbreaker.CauseProviderLimit, h[0].Cause, "the transport reported the limit as it happened")
}

// Anthropic answers 529 overloaded, with no Retry-After. The SDK, with its
// default retries, tries again after half a second or so and gets its
// answer: the transport reported the overload as it happened, and lifted
// it when the retry succeeded, so the loop goes on at once.
func TestAnOverloadTheSDKRetriedAwayDoesNotHoldTheLoop(t *testing.T) {
	a, model, clock := setupWith(t, []turn{
		{status: 529, errorType: "overloaded_error"},
		{uses: [][2]string{{"list_files", `{}`}}},
		{text: "Two files."},
	}, workspace(), 2)
	answer, err := a.run(context.Background(), "How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", answer)
	assert.Equal(t, 3, model.count(), "the SDK's own retry is the second request")
	assert.Empty(t, clock.slept, "nothing was waited out")
	assert.Equal(t, []loopbreaker.Cause{loopbreaker.CauseProviderLimit, loopbreaker.CauseLimitLifted}, causes(a.cb))
	d := a.cb.Check()
	assert.True(t, d.Allow, "%v", d.Reason)
}

// Anthropic refuses with 429 and its rate-limit headers, a reset 30
// seconds off, every time: the SDK retries twice and gives up, and its
// error reaches the agent. That limit is in force until its reset: the
// loop waits it out, on the breaker's clock, then goes on.
func TestARateLimitTheSDKGaveUpOnHoldsTheLoopUntilItsReset(t *testing.T) {
	limited := turn{status: 429, errorType: "rate_limit_error", header: map[string]string{
		"retry-after-ms":                         "1", // the SDK's pause between its tries
		"anthropic-ratelimit-requests-remaining": "0",
		"anthropic-ratelimit-requests-reset":     start.Add(30 * time.Second).Format(time.RFC3339),
	}}
	a, model, clock := setupWith(t, []turn{limited, limited, limited,
		{uses: [][2]string{{"list_files", `{}`}}},
		{text: "Two files."},
	}, workspace(), 2)
	answer, err := a.run(context.Background(), "How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", answer)
	assert.Equal(t, 5, model.count(), "three tries of the SDK, then two turns")
	assert.Equal(t, []time.Duration{30 * time.Second}, clock.slept, "the loop waited for the reset")
	assert.NotContains(t, causes(a.cb), loopbreaker.CauseLimitLifted)
}

// Each turn costs what claude-sonnet-4-5 charges for the usage the
// response reports ($3 per million input tokens, $15 per million output
// tokens): with a cap of a tenth of a cent, the second turn spends it, and
// the agent stops before the third.
func TestADollarCapStopsTheAgent(t *testing.T) {
	a, model, _ := setupWith(t, []turn{
		{uses: [][2]string{{"list_files", `{}`}}},
		{uses: [][2]string{{"read_file", `{"path":"parse.go"}`}}},
		{uses: [][2]string{{"run_tests", `{}`}}},
		{text: "never reached"},
	}, workspace(), 0.001, option.WithMaxRetries(0))
	_, err := a.run(context.Background(), "Do the tests pass?")
	require.ErrorIs(t, err, loopbreaker.ErrSpendCap)
	assert.Contains(t, err.Error(), "Spend cap reached: $0.0015 over the loop's life (cap: $0.001)")
	assert.Equal(t, 2, model.count())
	assert.InDelta(t, (100*3+20*15+200*3+20*15)/1e6, a.cb.Stats().Spend.Total.CostUSD, 1e-12)
}
