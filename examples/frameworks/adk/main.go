// Command adk runs a Google ADK agent whose model (a scripted stand-in, so
// that it runs offline) goes on reading a file that is not there. The
// breaker's plugin warns the model after the second failure, and after the
// third the run ends with the reason:
//
//	go run ./examples/frameworks/adk
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/loopbreaker/loopbreaker"
	adkbreaker "github.com/loopbreaker/loopbreaker/frameworks/adk"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adk:", err)
		os.Exit(1)
	}
}

// run runs the agent on one message and prints what happened.
func run(w io.Writer) error {
	cfg, _ := loopbreaker.Preset("tool-steps") // OpenHands' thresholds for a tool-calling agent; a known name: no error
	lb, err := adkbreaker.New(cfg, nil)        // a breaker per ADK session; a Store keeps them across restarts
	if err != nil {
		return err
	}
	readFile, err := functiontool.New(functiontool.Config{Name: "read_file", Description: "Read a file."}, readFileTool(w))
	if err != nil {
		return err
	}
	coder, err := llmagent.New(llmagent.Config{Name: "coder", Model: stubbornModel{}, Tools: []tool.Tool{readFile}})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{
		AppName: "example", Agent: coder, SessionService: session.InMemoryService(), AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{lb.Plugin()}},
	})
	if err != nil {
		return err
	}
	msg := genai.NewContentFromText("Summarise report.csv.", genai.RoleUser)
	for ev, err := range r.Run(context.Background(), "ada", "chat-1", msg, agent.RunConfig{}) {
		switch {
		case errors.Is(err, loopbreaker.ErrOpen):
			fmt.Fprintln(w, "the agent was stopped:", why(err))
			return nil
		case err != nil:
			return err
		case ev.Content != nil:
			for _, p := range ev.Content.Parts {
				if p.FunctionResponse == nil {
					continue
				}
				text, _ := p.FunctionResponse.Response["error"].(string) // a failed call's error, and the warning after it
				if _, warning, ok := strings.Cut(text, "loopbreaker warning: "); ok {
					fmt.Fprintln(w, "the model was warned: loopbreaker warning:", warning)
				}
			}
		}
	}
	fmt.Fprintln(w, "the agent answered")
	return nil
}

// readFileTool is a read_file tool on a directory without report.csv.
func readFileTool(w io.Writer) functiontool.Func[struct {
	Path string `json:"path"`
}, map[string]any] {
	return func(_ agent.Context, args struct {
		Path string `json:"path"`
	}) (map[string]any, error) {
		fmt.Fprintf(w, "read_file %s\n", args.Path)
		return nil, fmt.Errorf("open %s: no such file or directory", args.Path)
	}
}

// stubbornModel stands in for a model stuck on one idea: it reads
// report.csv, whatever the result says.
type stubbornModel struct{}

func (stubbornModel) Name() string { return "gemini-2.5-flash" }

func (stubbornModel) GenerateContent(context.Context, *model.LLMRequest, bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		call := &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "report.csv"}}
		yield(&model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: call}}}}, nil)
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
