package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agenttest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestTheAgentOnTheChatCompletionsAPI runs the agent's stories through
// openai-go against a scripted Chat Completions API.
func TestTheAgentOnTheChatCompletionsAPI(t *testing.T) {
	agenttest.Run(t, chatCompletionsAPI)
}

// rateLimitBody is the Chat Completions API's body of a 429.
const rateLimitBody = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`

// chatCompletionsAPI is OpenAI's Chat Completions API, as the stories
// need it.
var chatCompletionsAPI = agenttest.API{
	Model:      "gpt-4.1-mini",
	InputPrice: 0.40, OutputPrice: 1.60, // gpt-4.1-mini's list prices
	Answer: func(n int, turn agenttest.Turn, usage loopbreaker.Usage) any {
		var calls []map[string]any
		for i, call := range turn.Calls {
			calls = append(calls, map[string]any{
				"id": fmt.Sprintf("call_%d_%d", n, i), "type": "function",
				"function": map[string]any{"name": call.Tool, "arguments": call.Args},
			})
		}
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		finish := "tool_calls"
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		} else {
			msg["content"], finish = turn.Text, "stop"
		}
		return map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1741569952, "model": usage.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage": map[string]any{
				"prompt_tokens": usage.InputTokens, "completion_tokens": usage.OutputTokens, "total_tokens": usage.Tokens(),
			},
		}
	},
	Busy: agenttest.Refusal{Status: http.StatusTooManyRequests, Body: rateLimitBody},
	RateLimited: func(_ time.Time, resetIn time.Duration) agenttest.Refusal {
		return agenttest.Refusal{
			Status: http.StatusTooManyRequests,
			Header: map[string]string{
				"x-ratelimit-remaining-requests": "0",
				"x-ratelimit-reset-requests":     resetIn.String(),
			},
			Body: rateLimitBody,
		}
	},
	Connect: func(httpClient *http.Client, baseURL string, maxRetries int, model string, tools agent.Tools, task string) agent.Model {
		client := openai.NewClient(option.WithHTTPClient(httpClient), option.WithBaseURL(baseURL), option.WithAPIKey("test-key"), option.WithMaxRetries(maxRetries))
		return newConversation(client, model, tools, task)
	},
}
