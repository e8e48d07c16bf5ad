// Command genkit runs a Firebase Genkit tool loop whose model (a scripted
// stand-in, so that it runs offline) goes on reading a file that is not
// there. The breaker's middleware warns the model after the second
// failure, and after the third Generate ends with the reason:
//
//	go run ./examples/frameworks/genkit
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/loopbreaker/loopbreaker"
	genkitbreaker "github.com/loopbreaker/loopbreaker/frameworks/genkit"
)

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "genkit:", err)
		os.Exit(1)
	}
}

// run runs the tool loop on one message and prints what happened.
func run(w io.Writer) error {
	ctx := context.Background()
	cfg, _ := loopbreaker.Preset("tool-steps") // OpenHands' thresholds for a tool-calling agent; a known name: no error
	lb, err := genkitbreaker.New(cfg, nil)     // a breaker per session; a Store keeps them across restarts
	if err != nil {
		return err
	}
	g := genkit.Init(ctx)
	readFile := genkit.DefineTool(g, "read_file", "Read a file.", func(_ *ai.ToolContext, in struct {
		Path string `json:"path"`
	}) (string, error) {
		fmt.Fprintf(w, "read_file %s\n", in.Path)
		return "", fmt.Errorf("open %s: no such file or directory", in.Path)
	})
	stubborn := genkit.DefineModelAction(g, "example/stubborn", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}}, stubbornModel(w))
	_, err = genkit.Generate(genkitbreaker.WithSession(ctx, "ada/chat-1"), g,
		ai.WithModel(stubborn), ai.WithPrompt("Summarise report.csv."), ai.WithTools(readFile), ai.WithMaxTurns(20),
		ai.WithUse(lb.Middleware()))
	switch {
	case errors.Is(err, loopbreaker.ErrOpen):
		fmt.Fprintln(w, "the agent was stopped:", why(err))
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintln(w, "the agent answered")
	return nil
}

// stubbornModel stands in for a model stuck on one idea: it reads
// report.csv, whatever the result says. It prints the warnings it reads.
func stubbornModel(w io.Writer) ai.ModelActionFunc[map[string]any] {
	warned := map[string]bool{}
	return func(_ context.Context, req *ai.ModelRequest, _ map[string]any, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		for _, m := range req.Messages {
			for _, p := range m.Content {
				if p.IsToolResponse() {
					out := fmt.Sprint(p.ToolResponse.Output)
					if _, warning, ok := strings.Cut(out, "loopbreaker warning: "); ok && !warned[warning] {
						warned[warning] = true
						fmt.Fprintln(w, "the model was warned: loopbreaker warning:", warning)
					}
				}
			}
		}
		call := &ai.ToolRequest{Name: "read_file", Input: map[string]any{"path": "report.csv"}}
		return &ai.ModelResponse{Message: ai.NewMessage(ai.RoleModel, nil, ai.NewToolRequestPart(call)), FinishReason: ai.FinishReasonStop}, nil
	}
}

// why is the breaker's reason for a stop.
func why(err error) string {
	var refused *loopbreaker.RefusedError
	if errors.As(err, &refused) {
		return refused.Reason.String()
	}
	return err.Error()
}
