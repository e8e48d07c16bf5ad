package genkitbreaker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/stretchr/testify/require"

	genkitbreaker "github.com/loopbreaker/loopbreaker/frameworks/genkit"
	"github.com/loopbreaker/loopbreaker/internal/frameworktest"
)

// TestMain keeps Genkit's log of its start out of the tests' output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

// scriptedModel defines a Genkit model that answers from a story's script.
func scriptedModel(g *genkit.Genkit, script *frameworktest.Script) ai.Model {
	return genkit.DefineModelAction(g, frameworktest.Model, &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(_ context.Context, req *ai.ModelRequest, _ map[string]any, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			turn := script.Next(requestText(req.Messages))
			if turn.Err != nil {
				return nil, turn.Err
			}
			msg := &ai.Message{Role: ai.RoleModel}
			for _, c := range turn.Calls {
				var input map[string]any
				if err := json.Unmarshal([]byte(c.Args), &input); err != nil {
					return nil, err
				}
				msg.Content = append(msg.Content, ai.NewToolRequestPart(&ai.ToolRequest{Name: c.Tool, Input: input}))
			}
			if len(turn.Calls) == 0 {
				msg.Content = append(msg.Content, ai.NewTextPart(turn.Text))
			}
			return &ai.ModelResponse{
				Message:      msg,
				FinishReason: ai.FinishReasonStop,
				Usage:        &ai.GenerationUsage{InputTokens: frameworktest.Usage.InputTokens, OutputTokens: frameworktest.Usage.OutputTokens},
			}, nil
		})
}

// requestText is everything a request carries, as text.
func requestText(msgs []*ai.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Content {
			switch {
			case p.IsText():
				fmt.Fprintf(&b, "%s: %s\n", m.Role, p.Text)
			case p.IsToolRequest():
				in, _ := json.Marshal(p.ToolRequest.Input)
				fmt.Fprintf(&b, "call: %s %s\n", p.ToolRequest.Name, in)
			case p.IsToolResponse():
				fmt.Fprintf(&b, "result: %v\n", p.ToolResponse.Output)
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

// tools defines the stories' tools as Genkit tools.
func tools(g *genkit.Genkit, run *frameworktest.Tools) []ai.ToolRef {
	var ts []ai.ToolRef
	for _, name := range frameworktest.Names {
		ts = append(ts, genkit.DefineTool(g, name, name, func(_ *ai.ToolContext, a toolArgs) (string, error) {
			args, _ := json.Marshal(a)
			return run.Run(name, string(args))
		}))
	}
	return ts
}

// The stories through Genkit's own Generate and its tool loop: the
// scripted model, the breaker's middleware through ai.WithUse, tools run by
// Genkit (at once when a turn makes several calls).
func TestStoriesThroughGenkitsGenerate(t *testing.T) {
	frameworktest.Run(t, func(t *testing.T, s frameworktest.Setup) frameworktest.Result {
		ctx := context.Background()
		lb, err := genkitbreaker.NewWithOptions(genkitbreaker.Options{Sessions: s.Options})
		require.NoError(t, err)
		g := genkit.Init(ctx)
		m := scriptedModel(g, s.Model)
		ts := tools(g, s.Tools)
		var res frameworktest.Result
		for range max(s.Story.Runs, 1) {
			_, err := genkit.Generate(genkitbreaker.WithSession(ctx, s.Session), g,
				ai.WithModel(m), ai.WithPrompt("go on"), ai.WithTools(ts...), ai.WithMaxTurns(100), ai.WithUse(lb.Middleware()))
			res.Errs = append(res.Errs, err)
		}
		res.Session, err = lb.Session(ctx, s.Session)
		require.NoError(t, err)
		return res
	})
}
