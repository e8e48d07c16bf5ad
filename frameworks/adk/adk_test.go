package adkbreaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	adkbreaker "github.com/loopbreaker/loopbreaker/frameworks/adk"
	"github.com/loopbreaker/loopbreaker/internal/frameworktest"
)

// scriptedModel is an ADK model.LLM that answers from a story's script.
type scriptedModel struct{ script *frameworktest.Script }

func (m *scriptedModel) Name() string { return frameworktest.Model }

func (m *scriptedModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		turn := m.script.Next(requestText(req.Contents))
		if turn.Err != nil {
			yield(nil, turn.Err)
			return
		}
		content := &genai.Content{Role: genai.RoleModel}
		for _, c := range turn.Calls {
			var args map[string]any
			if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
				yield(nil, err)
				return
			}
			content.Parts = append(content.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: c.Tool, Args: args}})
		}
		if len(turn.Calls) == 0 {
			content.Parts = append(content.Parts, genai.NewPartFromText(turn.Text))
		}
		yield(&model.LLMResponse{
			Content:       content,
			ModelVersion:  frameworktest.Model,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1000, CandidatesTokenCount: 100},
		}, nil)
	}
}

// requestText is everything a request carries, as text: the messages, the
// calls and the tools' results.
func requestText(contents []*genai.Content) string {
	var b strings.Builder
	for _, c := range contents {
		for _, p := range c.Parts {
			switch {
			case p.Text != "":
				b.WriteString(c.Role + ": " + p.Text + "\n")
			case p.FunctionCall != nil:
				args, _ := json.Marshal(p.FunctionCall.Args)
				b.WriteString("call: " + p.FunctionCall.Name + " " + string(args) + "\n")
			case p.FunctionResponse != nil:
				for k, v := range p.FunctionResponse.Response {
					fmt.Fprintf(&b, "result: %s: %v\n", k, v)
				}
			}
		}
	}
	return b.String()
}

// toolArgs are the arguments of the stories' tools.
type toolArgs struct {
	Path string `json:"path,omitempty"`
	Old  string `json:"old,omitempty"`
	Diff string `json:"diff,omitempty"`
}

// tools are the stories' tools as ADK function tools.
func tools(t *testing.T, run *frameworktest.Tools) []tool.Tool {
	var ts []tool.Tool
	for _, name := range frameworktest.Names {
		ft, err := functiontool.New(functiontool.Config{Name: name, Description: name},
			func(_ agent.Context, a toolArgs) (map[string]any, error) {
				args, _ := json.Marshal(a)
				out, err := run.Run(name, string(args))
				if err != nil {
					return nil, err
				}
				return map[string]any{"output": out}, nil
			})
		require.NoError(t, err)
		ts = append(ts, ft)
	}
	return ts
}

// The stories through ADK's own runner: an LLM agent on the scripted
// model, the breaker's plugin installed, tools run by ADK (in parallel
// when a turn makes several calls).
func TestStoriesThroughTheADKRunner(t *testing.T) {
	frameworktest.Run(t, func(t *testing.T, s frameworktest.Setup) frameworktest.Result {
		lb, err := adkbreaker.NewWithOptions(adkbreaker.Options{Sessions: s.Options})
		require.NoError(t, err)
		a, err := llmagent.New(llmagent.Config{
			Name:  "coder",
			Model: &scriptedModel{script: s.Model},
			Tools: tools(t, s.Tools),
		})
		require.NoError(t, err)
		r, err := runner.New(runner.Config{
			AppName:           "app",
			Agent:             a,
			SessionService:    session.InMemoryService(),
			AutoCreateSession: true,
			PluginConfig:      runner.PluginConfig{Plugins: []*plugin.Plugin{lb.Plugin()}},
		})
		require.NoError(t, err)
		var res frameworktest.Result
		for range max(s.Story.Runs, 1) {
			res.Errs = append(res.Errs, run(r, "go on"))
		}
		res.Session, err = lb.Session(context.Background(), "app/user-1/chat-1")
		require.NoError(t, err)
		return res
	})
}

// run runs the agent on one user message and returns the run's error.
func run(r *runner.Runner, message string) error {
	var errs []error
	for _, err := range r.Run(context.Background(), "user-1", "chat-1", genai.NewContentFromText(message, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
