// Command openai is the agent of package agent on openai-go, OpenAI's
// Chat Completions API, with a loopbreaker.CircuitBreaker watching it step
// by step. It works on a directory with three tools (list_files,
// read_file, run_tests) until the model answers without calling a tool.
//
//	OPENAI_API_KEY=... go run ./examples/sdk-agents/openai -dir ~/src/project "Why does TestParse fail?"
//
// What is OpenAI's is here: the SDK's client, with the breaker's
// transport as its HTTP transport, which reads OpenAI's token usage and
// rate-limit headers; and a conversation on the Chat Completions API. The
// loop that waits for the breaker and records each tool call as a step is
// agent.Run.
package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func main() {
	agent.Main("openai", "gpt-4.1-mini", func(httpClient *http.Client, model string, tools agent.Tools, task string) agent.Model {
		// httpClient sends the SDK's requests through the breaker's
		// transport; the API key is OPENAI_API_KEY, from the environment.
		client := openai.NewClient(option.WithHTTPClient(httpClient))
		return newConversation(client, model, tools, task)
	})
}

// conversation is an agent.Model on the Chat Completions API.
type conversation struct {
	client   openai.Client
	model    string
	tools    []openai.ChatCompletionToolUnionParam
	messages []openai.ChatCompletionMessageParamUnion
}

// newConversation starts a conversation with model on task, offering it
// tools.
func newConversation(client openai.Client, model string, tools agent.Tools, task string) *conversation {
	c := &conversation{client: client, model: model}
	for _, spec := range tools.Specs() {
		c.tools = append(c.tools, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:        spec.Name,
			Description: openai.String(spec.Description),
			Parameters:  openai.FunctionParameters{"type": "object", "properties": spec.Properties},
		}))
	}
	c.messages = append(c.messages, openai.SystemMessage(agent.Instructions), openai.UserMessage(task))
	return c
}

// errNoChoice is Send's error when a response has no choice to read.
var errNoChoice = errors.New("the model returned no choice")

// Send sends the conversation, and reads the first choice's tool calls,
// or its text when there are none.
func (c *conversation) Send(ctx context.Context) (agent.Answer, error) {
	resp, err := c.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    c.model,
		Messages: c.messages,
		Tools:    c.tools,
	})
	if err != nil {
		return agent.Answer{}, err
	}
	if len(resp.Choices) == 0 {
		return agent.Answer{}, errNoChoice
	}
	msg := resp.Choices[0].Message
	c.messages = append(c.messages, msg.ToParam())
	answer := agent.Answer{Text: msg.Content}
	for _, call := range msg.ToolCalls {
		answer.Calls = append(answer.Calls, agent.Call{ID: call.ID, Tool: call.Function.Name, Args: call.Function.Arguments})
	}
	return answer, nil
}

// AddResults adds each result as a tool message.
func (c *conversation) AddResults(results []agent.Result) {
	for _, r := range results {
		c.messages = append(c.messages, openai.ToolMessage(r.Content(), r.CallID))
	}
}
