// Package agenttest runs the stories that package agent is tested by
// through a model SDK, against a scripted model API on httptest: a loop
// stuck in several ways and given up on, a probe that gets on, a healthy
// task, rate limits and overloads waited out or retried away, a busy
// server waited out briefly, a refusal under the usage policy that stops,
// the provider's refusal of repeated tool calls given up on, and a dollar
// cap. Each SDK's test gives the API's wire format and its SDK as
// an [API] and calls [Run]; every request goes through the real SDK and
// the breaker's transport, and the breaker runs on a fake clock.
package agenttest

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/require"
)

// An API is one model API as the stories need it: its wire format and
// its SDK.
type API struct {
	// Model is the model the agent asks for and the scripted API plays.
	Model string
	// InputPrice and OutputPrice are what Model costs, in US dollars per
	// million input and output tokens.
	InputPrice, OutputPrice float64
	// Answer is the API's response body, to be written as JSON, for turn:
	// the answer to the n-th request (from 1), reporting usage (its
	// Model, InputTokens and OutputTokens).
	Answer func(n int, turn Turn, usage loopbreaker.Usage) any
	// Busy is the API's refusal when it cannot serve a request now, with
	// no header: one a client tries again.
	Busy Refusal
	// RateLimited is the API's refusal when no requests remain until a
	// reset resetIn after now, told in the API's own rate-limit headers.
	RateLimited func(now time.Time, resetIn time.Duration) Refusal
	// Connect starts a conversation with model on task, offering tools,
	// through the SDK: a client on httpClient (an agent.HTTPClient) that
	// sends its requests to baseURL, with maxRetries retries of its own.
	Connect func(httpClient *http.Client, baseURL string, maxRetries int, model string, tools agent.Tools, task string) agent.Model
}

// A Turn is the scripted model's answer to one request: tool calls, or,
// when there are none, a final text; or, when Refusal is set, an HTTP
// error.
type Turn struct {
	Calls   []Call
	Text    string
	Refusal *Refusal
}

// A Call is a tool call of a scripted answer.
type Call struct {
	Tool string
	Args string // JSON
}

// A Refusal is an HTTP error response: its status, headers and body.
type Refusal struct {
	Status int
	Header map[string]string
	Body   string
}

// withHeader returns r with one more header.
func (r Refusal) withHeader(key, value string) Refusal {
	r.Header = maps.Clone(r.Header)
	if r.Header == nil {
		r.Header = map[string]string{}
	}
	r.Header[key] = value
	return r
}

// scriptedAPI plays an API: each request gets the next turn of the
// script, the last one again when it runs out. The n-th answer reports
// 100·n input tokens and 20 output tokens, as a conversation grows.
type scriptedAPI struct {
	api    API
	mu     sync.Mutex
	script []Turn
	served int
}

func (s *scriptedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	turn := s.script[min(s.served, len(s.script)-1)]
	s.served++
	n := s.served
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if turn.Refusal != nil {
		for k, v := range turn.Refusal.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(turn.Refusal.Status)
		_, _ = io.WriteString(w, turn.Refusal.Body)
		return
	}
	_ = json.NewEncoder(w).Encode(s.api.Answer(n, turn, loopbreaker.Usage{Model: s.api.Model, InputTokens: 100 * n, OutputTokens: 20}))
}

// requests is how many requests the API has had.
func (s *scriptedAPI) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// start is when the breaker's clock starts.
var start = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

// A session is one story's agent: a breaker on agent.BreakerConfig with a
// call budget of 100 an hour, on a fake clock; a scripted API; and the
// tools of workspace, which a story may change before run.
type session struct {
	api        API
	server     *scriptedAPI
	url        string
	sdkRetries int
	cb         *loopbreaker.CircuitBreaker
	clock      *loopbreakertest.Clock
	tools      agent.Tools
}

// setup returns a session with a $2 cap whose SDK does not retry, so that
// each turn of the script is one request.
func setup(t *testing.T, api API, script ...Turn) *session {
	return setupWith(t, api, 2, 0, script...)
}

// setupWith is setup with a dollar cap and a number of the SDK's retries
// of the story's own (2 is the SDKs' default).
func setupWith(t *testing.T, api API, maxCostUSD float64, sdkRetries int, script ...Turn) *session {
	t.Helper()
	server := &scriptedAPI{api: api, script: script}
	httpServer := httptest.NewServer(server)
	t.Cleanup(httpServer.Close)
	clock := loopbreakertest.NewClock(start)
	cfg := agent.BreakerConfig(maxCostUSD)
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	cfg.Spend.MaxCallsPerHour = 100
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	return &session{api: api, server: server, url: httpServer.URL, sdkRetries: sdkRetries, cb: cb, clock: clock, tools: workspace(t)}
}

// run runs the agent on task, through the SDK.
func (s *session) run(task string) (string, error) {
	model := s.api.Connect(agent.HTTPClient(s.cb), s.url, s.sdkRetries, s.api.Model, s.tools, task)
	return agent.Run(context.Background(), s.cb, model, s.tools)
}

// causes returns the causes of the breaker's transitions, in order.
func (s *session) causes() []loopbreaker.Cause {
	var cs []loopbreaker.Cause
	for _, tr := range s.cb.Stats().History {
		cs = append(cs, tr.Cause)
	}
	return cs
}

// workspace is agent.OSTools on a small project, parse.go and
// parse_test.go, whose run_tests always passes with the same output (the
// real one's timings would differ from run to run).
func workspace(t *testing.T) agent.Tools {
	dir := t.TempDir()
	for _, name := range []string{"parse.go", "parse_test.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("package parse\n"), 0o644))
	}
	tools := agent.OSTools(dir)
	tools["run_tests"] = func(string) (string, error) { return "ok  \tparse\t0.012s", nil }
	return tools
}

// calls is a turn of tool calls, each a tool's name and its JSON
// arguments.
func calls(toolAndArgs ...string) Turn {
	var t Turn
	for i := 0; i+1 < len(toolAndArgs); i += 2 {
		t.Calls = append(t.Calls, Call{Tool: toolAndArgs[i], Args: toolAndArgs[i+1]})
	}
	return t
}

// answer is a turn with the final text.
func answer(text string) Turn { return Turn{Text: text} }

// refuse is a turn the API refuses.
func refuse(r Refusal) Turn { return Turn{Refusal: &r} }
