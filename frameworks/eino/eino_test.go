package einobreaker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/require"

	einobreaker "github.com/loopbreaker/loopbreaker/frameworks/eino"
	"github.com/loopbreaker/loopbreaker/internal/frameworktest"
)

// scriptedModel is an Eino model.ToolCallingChatModel that answers from a
// story's script.
type scriptedModel struct {
	script *frameworktest.Script
	ids    *atomic.Int64
}

func (m *scriptedModel) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	turn := m.script.Next(requestText(input))
	if turn.Err != nil {
		return nil, turn.Err
	}
	msg := &schema.Message{
		Role:    schema.Assistant,
		Content: turn.Text,
		ResponseMeta: &schema.ResponseMeta{Usage: &schema.TokenUsage{
			PromptTokens: frameworktest.Usage.InputTokens, CompletionTokens: frameworktest.Usage.OutputTokens}},
	}
	for _, c := range turn.Calls {
		id := fmt.Sprintf("call-%d", m.ids.Add(1))
		msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: c.Tool, Arguments: c.Args}})
	}
	return msg, nil
}

func (m *scriptedModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

// requestText is everything a request carries, as text.
func requestText(input []*schema.Message) string {
	var b strings.Builder
	for _, m := range input {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "call: %s %s\n", c.Function.Name, c.Function.Arguments)
		}
	}
	return b.String()
}

// storyTool is one of the stories' tools as an Eino tool.
type storyTool struct {
	name string
	run  *frameworktest.Tools
}

func (t storyTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: t.name, Desc: t.name}, nil
}

func (t storyTool) InvokableRun(_ context.Context, args string, _ ...tool.Option) (string, error) {
	return t.run.Run(t.name, args)
}

func tools(run *frameworktest.Tools) []tool.BaseTool {
	var ts []tool.BaseTool
	for _, name := range frameworktest.Names {
		ts = append(ts, storyTool{name: name, run: run})
	}
	return ts
}

// The stories through Eino's own runner: a ChatModelAgent on the scripted
// model with the breaker's middleware, tools run by Eino's ToolsNode (in
// parallel when a turn makes several calls), a model retry that gives up
// on the breaker's stops.
func TestStoriesThroughTheEinoRunner(t *testing.T) {
	frameworktest.Run(t, func(t *testing.T, s frameworktest.Setup) frameworktest.Result {
		ctx := context.Background()
		lb, err := einobreaker.NewWithOptions(einobreaker.Options{Sessions: s.Options, Model: frameworktest.Model})
		require.NoError(t, err)
		agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
			Name:          "coder",
			Description:   "a coder",
			Model:         &scriptedModel{script: s.Model, ids: new(atomic.Int64)},
			ToolsConfig:   adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools(s.Tools)}},
			MaxIterations: 100,
			Handlers:      []adk.ChatModelAgentMiddleware{lb.Middleware()},
			ModelRetryConfig: &adk.ModelRetryConfig{
				MaxRetries:  1,
				ShouldRetry: einobreaker.ShouldRetry,
				BackoffFunc: func(context.Context, int) time.Duration { return 0 },
			},
		})
		require.NoError(t, err)
		runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
		var res frameworktest.Result
		for range max(s.Story.Runs, 1) {
			res.Errs = append(res.Errs, run(einobreaker.WithSession(ctx, s.Session), runner))
		}
		res.Session, err = lb.Session(ctx, s.Session)
		require.NoError(t, err)
		return res
	})
}

// run runs the agent on one user message and returns the run's error.
func run(ctx context.Context, runner *adk.Runner) error {
	var errs []error
	iter := runner.Query(ctx, "go on")
	for {
		ev, ok := iter.Next()
		if !ok {
			return errors.Join(errs...)
		}
		if ev.Err != nil {
			errs = append(errs, ev.Err)
		}
	}
}

// The stories through the older ReAct agent (flow/agent/react): its model
// wrapped, the breaker's tool middleware in its ToolsConfig.
func TestStoriesThroughTheReActAgent(t *testing.T) {
	frameworktest.Run(t, func(t *testing.T, s frameworktest.Setup) frameworktest.Result {
		ctx := context.Background()
		lb, err := einobreaker.NewWithOptions(einobreaker.Options{Sessions: s.Options, Model: frameworktest.Model})
		require.NoError(t, err)
		agent, err := react.NewAgent(ctx, &react.AgentConfig{
			ToolCallingModel: lb.Model(&scriptedModel{script: s.Model, ids: new(atomic.Int64)}),
			ToolsConfig: compose.ToolsNodeConfig{
				Tools:               tools(s.Tools),
				ToolCallMiddlewares: []compose.ToolMiddleware{lb.ToolMiddleware()},
			},
			MaxStep: 400,
		})
		require.NoError(t, err)
		var res frameworktest.Result
		for range max(s.Story.Runs, 1) {
			_, err := agent.Generate(einobreaker.WithSession(ctx, s.Session), []*schema.Message{schema.UserMessage("go on")})
			res.Errs = append(res.Errs, err)
		}
		res.Session, err = lb.Session(ctx, s.Session)
		require.NoError(t, err)
		return res
	})
}
