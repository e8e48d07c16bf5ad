package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agenttest"
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
