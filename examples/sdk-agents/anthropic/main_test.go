package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agenttest"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheAgentOnTheMessagesAPI runs the agent's stories through
// anthropic-sdk-go against a scripted Messages API.
func TestTheAgentOnTheMessagesAPI(t *testing.T) {
	agenttest.Run(t, messagesAPI)
}

// messagesAPI is Anthropic's Messages API, as the stories need it.
var messagesAPI = agenttest.API{
	Model:      "claude-sonnet-4-5",
	InputPrice: 3, OutputPrice: 15, // claude-sonnet-4-5's list prices
	Answer: func(n int, turn agenttest.Turn, usage loopbreaker.Usage) any {
		content := []any{}
		stop := "tool_use"
		for i, call := range turn.Calls {
			content = append(content, map[string]any{
				"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, i), "name": call.Tool, "input": json.RawMessage(call.Args),
			})
		}
		if len(turn.Calls) == 0 {
			content = append(content, map[string]any{"type": "text", "text": turn.Text})
			stop = "end_turn"
		}
		return map[string]any{
			"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": usage.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": usage.InputTokens, "cache_read_input_tokens": 0, "output_tokens": usage.OutputTokens},
		}
	},
	Busy: agenttest.Refusal{Status: 529, Body: errorBody("overloaded_error", "Overloaded")},
	RateLimited: func(now time.Time, resetIn time.Duration) agenttest.Refusal {
		return agenttest.Refusal{
			Status: http.StatusTooManyRequests,
			Header: map[string]string{
				"anthropic-ratelimit-requests-remaining": "0",
				"anthropic-ratelimit-requests-reset":     now.Add(resetIn).Format(time.RFC3339),
			},
			Body: errorBody("rate_limit_error", "This request would exceed the rate limit."),
		}
	},
	Connect: func(httpClient *http.Client, baseURL string, maxRetries int, model string, tools agent.Tools, task string) agent.Model {
		client := anthropic.NewClient(option.WithHTTPClient(httpClient), option.WithBaseURL(baseURL), option.WithAPIKey("test-key"), option.WithMaxRetries(maxRetries))
		return newConversation(client, model, tools, task)
	},
}

// errorBody is the Messages API's error body.
func errorBody(errorType, message string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, errorType, message)
}

// A subscriber's loop may use 80% of the 5-hour window. The Messages API
// answers the agent's first turn with the window 85% used, as its unified
// rate-limit headers say: the transport under anthropic-sdk-go reads them,
// the agent's next Wait sleeps until the window resets, an hour later on
// the breaker's clock, and the agent then finishes its task.
func TestTheAgentWaitsForTheWindowsReset(t *testing.T) {
	clock := loopbreakertest.NewClock(time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC))
	reset := clock.Now().Add(time.Hour)
	turns := []agenttest.Turn{{Calls: []agenttest.Call{{Tool: "list_files", Args: `{}`}}}, {Text: "Two files."}}
	used := []string{"0.85", "0.02"}
	resets := []time.Time{reset, reset.Add(5 * time.Hour)} // the window that began at the reset
	var mu sync.Mutex
	served := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		n := min(served, len(turns)-1)
		served++
		mu.Unlock()
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("anthropic-ratelimit-unified-status", "allowed")
		h.Set("anthropic-ratelimit-unified-5h-utilization", used[n])
		h.Set("anthropic-ratelimit-unified-5h-reset", strconv.FormatInt(resets[n].Unix(), 10))
		h.Set("anthropic-ratelimit-unified-7d-utilization", "0.4")
		h.Set("anthropic-ratelimit-unified-7d-reset", strconv.FormatInt(reset.Add(72*time.Hour).Unix(), 10))
		_ = json.NewEncoder(w).Encode(messagesAPI.Answer(n+1, turns[n], loopbreaker.Usage{Model: messagesAPI.Model, InputTokens: 100, OutputTokens: 20}))
	}))
	t.Cleanup(api.Close)

	cfg := agent.BreakerConfig(2)
	cfg.Spend.MaxWindowShare = 80
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	dir := t.TempDir()
	tools := agent.OSTools(dir)
	model := messagesAPI.Connect(agent.HTTPClient(cb), api.URL, 0, messagesAPI.Model, tools, "How many files?")
	got, err := agent.Run(context.Background(), cb, model, tools)
	require.NoError(t, err)
	assert.Equal(t, "Two files.", got)
	assert.Equal(t, []time.Duration{time.Hour}, clock.Slept(), "the window's reset, on the breaker's clock")
	ws := cb.Stats().Spend.Windows
	require.Len(t, ws, 2, "the 5-hour and the weekly window, as the last answer said them")
	assert.Equal(t, 2.0, ws[0].Used)
	assert.Equal(t, 5*time.Hour, ws[0].Length)
}
