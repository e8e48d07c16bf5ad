// Command anthropic is the agent of package agent on anthropic-sdk-go,
// Anthropic's Messages API, with a loopbreaker.CircuitBreaker watching it
// step by step. It works on a directory with three tools (list_files,
// read_file, run_tests) until the model answers without calling a tool.
//
//	ANTHROPIC_API_KEY=... go run ./examples/sdk-agents/anthropic -dir ~/src/project "Why does TestParse fail?"
//
// What is Anthropic's is here: the SDK's client, with the breaker's
// transport as its HTTP transport, which reads Anthropic's token usage,
// rate-limit headers and 529 "overloaded"; and a conversation on the
// Messages API. The loop that waits for the breaker and records each tool
// use as a step is agent.Run.
package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/loopbreaker/loopbreaker/examples/sdk-agents/agent"
)

func main() {
	agent.Main("anthropic", "claude-sonnet-4-5", func(httpClient *http.Client, model string, tools agent.Tools, task string) agent.Model {
		// httpClient sends the SDK's requests through the breaker's
		// transport; the API key is ANTHROPIC_API_KEY, from the environment.
		client := anthropic.NewClient(option.WithHTTPClient(httpClient))
		return newConversation(client, model, tools, task)
	})
}

// conversation is an agent.Model on the Messages API.
type conversation struct {
	client   anthropic.Client
	model    string
	tools    []anthropic.ToolUnionParam
	messages []anthropic.MessageParam
}

// newConversation starts a conversation with model on task, offering it
// tools.
func newConversation(client anthropic.Client, model string, tools agent.Tools, task string) *conversation {
	c := &conversation{client: client, model: model}
	for _, spec := range tools.Specs() {
		c.tools = append(c.tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        spec.Name,
			Description: anthropic.String(spec.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: spec.Properties},
		}})
	}
	c.messages = append(c.messages, anthropic.NewUserMessage(anthropic.NewTextBlock(task)))
	return c
}

// Send sends the conversation, and reads the answer's tool uses, or its
// text when there are none.
func (c *conversation) Send(ctx context.Context) (agent.Answer, error) {
	msg, err := c.client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     anthropic.Model(c.model),
		MaxTokens: 1024,
		System:    []anthropic.TextBlockParam{{Text: agent.Instructions}},
		Messages:  c.messages,
		Tools:     c.tools,
	})
	if err != nil {
		return agent.Answer{}, err
	}
	c.messages = append(c.messages, msg.ToParam())
	var answer agent.Answer
	var text strings.Builder
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "tool_use":
			answer.Calls = append(answer.Calls, agent.Call{ID: block.ID, Tool: block.Name, Args: string(block.Input)})
		}
	}
	answer.Text = text.String()
	return answer, nil
}

// AddResults adds the results as one user message of tool results, a
// failed tool's marked as an error.
func (c *conversation) AddResults(results []agent.Result) {
	blocks := make([]anthropic.ContentBlockParamUnion, len(results))
	for i, r := range results {
		blocks[i] = anthropic.NewToolResultBlock(r.CallID, r.Content(), r.Err != nil)
	}
	c.messages = append(c.messages, anthropic.NewUserMessage(blocks...))
}
