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

	"github.com/loopbreaker/loopbreaker"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turn is one scripted answer of the model: tool calls (name, JSON
// arguments), or a final text; or an HTTP error status with headers.
type turn struct {
	calls  [][2]string
	text   string
	status int
	header map[string]string
}

// scriptedModel plays the OpenAI chat completions API: each request gets
// the next turn of the script, the last one again when it runs out.
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
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		return
	}
	var calls []map[string]any
	for i, c := range t.calls {
		calls = append(calls, map[string]any{
			"id": fmt.Sprintf("call_%d_%d", n, i), "type": "function",
			"function": map[string]any{"name": c[0], "arguments": c[1]},
		})
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	finish := "tool_calls"
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	} else {
		msg["content"], finish = t.text, "stop"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1741569952, "model": "gpt-4.1-mini",
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100 * n, "completion_tokens": 20, "total_tokens": 100*n + 20},
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
		"read_file": func(args string) (string, error) {
			var p struct{ Path string }
			if err := jsonArgs(args, &p); err != nil {
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
	a := newAgent(cb, tools, "gpt-4.1-mini", append([]option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("test-key")}, opts...)...)
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

// The model lists an empty output directory again and again: the breaker
// opens before its fifth turn, as the same call with the same result four
// times in a row is OpenHands' first kind of stuck. After each cooldown one
// probe turn lists it again; at the third opening in a row the breaker
// gives up, and the agent stops with the reason.
func TestStuckToolLoopIsGivenUpOn(t *testing.T) {
	tools := workspace()
	tools["list_files"] = func(string) (string, error) { return "", nil }
	a, model, clock := setup(t, []turn{{calls: [][2]string{{"list_files", `{"dir": "out"}`}}}}, tools)
	_, err := a.run(context.Background(), "Summarise the report in out/.")
	require.ErrorIs(t, err, errStopped)
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Contains(t, err.Error(), `Gave up: the circuit opened 3 times in a row without recovering (threshold: 3): Same action with the same observation 6 times in a row (threshold: 4): list_files {"dir": "out"}`)
	assert.Equal(t, 4+2, model.count(), "four turns, then a probe after each of two cooldowns")
	assert.Equal(t, []time.Duration{30 * time.Second, 30 * time.Second}, clock.slept)
	s := a.cb.Stats()
	assert.Equal(t, loopbreaker.ReasonGaveUp, s.Reason.Kind)
	assert.Equal(t, loopbreaker.ReasonRepeatedActionObservation, s.Reason.Last)
	assert.Equal(t, 6, s.Budget.Used, "each request counted once, by the transport")
}

// The model reads a file that is not there: the third failure opens the
// circuit, the two probes read it again, and the breaker gives up.
func TestSameFailingCallIsGivenUpOn(t *testing.T) {
	a, model, _ := setup(t, []turn{{calls: [][2]string{{"read_file", `{"path":"report.csv"}`}}}}, workspace())
	_, err := a.run(context.Background(), "Summarise report.csv.")
	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	assert.Equal(t, 3+2, model.count())
	h := a.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Contains(t, h[0].Reason.String(), "Same action failed 3 times in a row")
}

// A healthy task: list, read two files, a failed read of a file that is
// not there, run the tests, answer. The breaker lets it finish.
func TestHealthyTaskFinishes(t *testing.T) {
	a, model, _ := setup(t, []turn{
		{calls: [][2]string{{"list_files", `{}`}}},
		{calls: [][2]string{{"read_file", `{"path":"parse.go"}`}, {"read_file", `{"path":"parse_test.go"}`}}},
		{calls: [][2]string{{"read_file", `{"path":"parse_fuzz_test.go"}`}}},
		{calls: [][2]string{{"run_tests", `{}`}}},
		{text: "The tests pass; parse.go is fine."},
	}, workspace())
	answer, err := a.run(context.Background(), "Do the tests pass?")
	require.NoError(t, err)
	assert.Equal(t, "The tests pass; parse.go is fine.", answer)
	assert.Equal(t, 5, model.count())
	s := a.cb.Stats()
	assert.Equal(t, loopbreaker.Closed, s.State)
	assert.Equal(t, 5, s.Budget.Used)
}

// The API answers 429 with Retry-After: the transport counts the call and
// reports the limit, the agent waits (on the breaker's clock, no real
// waiting) and goes on to finish.
func TestRateLimitIsWaitedOut(t *testing.T) {
	a, model, clock := setup(t, []turn{
		{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "20", "X-Ratelimit-Remaining-Requests": "0"}},
		{calls: [][2]string{{"list_files", `{}`}}},
		{text: "Two files."},
	}, workspace())
	answer, err := a.run(context.Background(), "How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", answer)
	assert.Equal(t, 3, model.count())
	assert.Equal(t, 3, a.cb.Stats().Budget.Used, "the refused request counted too")
	assert.Equal(t, []time.Duration{20 * time.Second}, clock.slept, "the breaker waited out the Retry-After, on its clock")
	h := a.cb.Stats().History
	require.NotEmpty(t, h)
	assert.Equal(t, loopbreaker.CauseProviderLimit, h[0].Cause, "the transport reported the limit as it happened")
}

// OpenAI answers 429 with no Retry-After. The SDK, with its default
// retries, tries again after half a second or so and gets its answer: the
// transport reported the limit as it happened, and lifted it when the
// retry succeeded, so the loop goes on at once.
func TestARateLimitTheSDKRetriedAwayDoesNotHoldTheLoop(t *testing.T) {
	a, model, clock := setupWith(t, []turn{
		{status: http.StatusTooManyRequests},
		{calls: [][2]string{{"list_files", `{}`}}},
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

// OpenAI refuses with 429 and its rate-limit headers, the requests' reset
// 30 seconds off, every time: the SDK retries twice and gives up, and its
// error reaches the agent. That limit is in force until its reset: the
// loop waits it out, on the breaker's clock, then goes on.
func TestARateLimitTheSDKGaveUpOnHoldsTheLoopUntilItsReset(t *testing.T) {
	limited := turn{status: http.StatusTooManyRequests, header: map[string]string{
		"retry-after-ms":                 "1", // the SDK's pause between its tries
		"x-ratelimit-remaining-requests": "0",
		"x-ratelimit-reset-requests":     "30s",
	}}
	a, model, clock := setupWith(t, []turn{limited, limited, limited,
		{calls: [][2]string{{"list_files", `{}`}}},
		{text: "Two files."},
	}, workspace(), 2)
	answer, err := a.run(context.Background(), "How many files?")
	require.NoError(t, err)
	assert.Equal(t, "Two files.", answer)
	assert.Equal(t, 5, model.count(), "three tries of the SDK, then two turns")
	assert.Equal(t, []time.Duration{30 * time.Second}, clock.slept, "the loop waited for the reset")
	assert.NotContains(t, causes(a.cb), loopbreaker.CauseLimitLifted)
}

// Each turn costs what gpt-4.1-mini charges for the usage the response
// reports ($0.40 per million input tokens, $1.60 per million output
// tokens): with a cap of $0.00015, the second turn spends it, and the agent
// stops before the third.
func TestADollarCapStopsTheAgent(t *testing.T) {
	a, model, _ := setupWith(t, []turn{
		{calls: [][2]string{{"list_files", `{}`}}},
		{calls: [][2]string{{"read_file", `{"path":"parse.go"}`}}},
		{calls: [][2]string{{"run_tests", `{}`}}},
		{text: "never reached"},
	}, workspace(), 0.00015, option.WithMaxRetries(0))
	_, err := a.run(context.Background(), "Do the tests pass?")
	require.ErrorIs(t, err, loopbreaker.ErrSpendCap)
	assert.Equal(t, 2, model.count())
	assert.InDelta(t, (100*0.40+20*1.60+200*0.40+20*1.60)/1e6, a.cb.Stats().Spend.Total.CostUSD, 1e-12)
}
