// Command anthropic-agent is a small tool-calling agent on
// anthropic-sdk-go with a loopbreaker.CircuitBreaker watching it step by
// step. It works on a directory with three tools (list_files, read_file,
// run_tests) until the model answers without calling a tool.
//
//	ANTHROPIC_API_KEY=... go run . -dir ~/src/project "Why does TestParse fail?"
//
// The breaker is wired in twice. Its Transport, installed in the SDK's
// HTTP client, counts every request (the SDK's retries too), reads the
// token usage and prices it, so that -max-cost holds, and reads the rate
// limits and Anthropic's 529 "overloaded" from the responses: a limit the
// SDK's own retry got past is lifted at once, one it gave up on is waited
// out. And every tool use is recorded as a step, with its input and
// its result, so that the breaker stops the agent when it goes round in
// circles.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/transport"
)

func main() {
	dir := flag.String("dir", ".", "the directory the agent works in")
	model := flag.String("model", "claude-sonnet-4-5", "the model")
	maxCost := flag.Float64("max-cost", 2, "stop once the run has cost this many US dollars")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: anthropic-agent [-dir DIR] [-model MODEL] [-max-cost USD] TASK")
		os.Exit(2)
	}
	cb, err := loopbreaker.New(breakerConfig(*maxCost))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a := newAgent(cb, osTools(*dir), *model) // ANTHROPIC_API_KEY from the environment
	answer, err := a.run(context.Background(), flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "anthropic-agent:", err)
		os.Exit(1)
	}
	fmt.Println(answer)
}

// breakerConfig is the breaker's configuration: OpenHands' thresholds for
// a tool-calling agent's steps, giving up on a loop stuck three openings in
// a row, and a cap on the dollars spent, which the transport prices from
// the usage it reads.
func breakerConfig(maxCostUSD float64) loopbreaker.Config {
	cfg, _ := loopbreaker.Preset("tool-steps")
	cfg.MaxConsecutiveOpens = 3
	cfg.Spend.MaxCostUSD = maxCostUSD
	return cfg
}

// Tools are the agent's tools, by name: each takes the model's JSON input
// and returns its result, or an error that the model is shown.
type Tools map[string]func(input string) (string, error)

// osTools are list_files, read_file and run_tests on a real directory.
func osTools(dir string) Tools {
	return Tools{
		"list_files": func(string) (string, error) {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return "", err
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return strings.Join(names, "\n"), nil
		},
		"read_file": func(input string) (string, error) {
			var p struct{ Path string }
			if err := jsonArgs(input, &p); err != nil {
				return "", err
			}
			data, err := os.ReadFile(filepath.Join(dir, filepath.Clean("/"+p.Path)))
			return string(data), err
		},
		"run_tests": func(string) (string, error) {
			cmd := exec.Command("go", "test", "./...")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			return string(out), err
		},
	}
}

// agent is the tool-calling loop.
type agent struct {
	client anthropic.Client
	cb     *loopbreaker.CircuitBreaker
	tools  Tools
	model  string
}

// newAgent returns an agent whose SDK client sends its requests through
// the breaker's transport; opts come after, so a test can point it at a
// server of its own.
func newAgent(cb *loopbreaker.CircuitBreaker, tools Tools, model string, opts ...option.RequestOption) *agent {
	opts = append([]option.RequestOption{
		option.WithHTTPClient(&http.Client{Transport: transport.New(cb, nil)}),
	}, opts...)
	return &agent{client: anthropic.NewClient(opts...), cb: cb, tools: tools, model: model}
}

// errStopped is returned when the breaker stops the agent.
var errStopped = errors.New("stopped by the circuit breaker")

// run works on task until the model answers without a tool use, and
// returns the answer. Before each model turn it waits for the breaker: a
// cooldown, a provider limit or a spent call budget is waited out, and
// after each cooldown one probe turn runs; a loop stuck three openings in
// a row, or a spent dollar cap, stops the agent. Each tool use is recorded as a step.
func (a *agent) run(ctx context.Context, task string) (string, error) {
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(task))}
	for {
		// Wait sleeps out a cooldown, a provider limit or a spent call
		// budget, and returns an error when waiting cannot help: the
		// breaker gave up on a loop stuck again and again, or the dollar
		// cap is spent.
		if _, err := a.cb.Wait(ctx); err != nil {
			return "", fmt.Errorf("%w: %w", errStopped, err)
		}
		msg, err := a.client.Messages.New(ctx, anthropic.MessageNewParams{
			Model:     anthropic.Model(a.model),
			MaxTokens: 1024,
			System:    []anthropic.TextBlockParam{{Text: "You are a careful engineer. Use the tools to answer."}},
			Messages:  messages,
			Tools:     a.toolParams(),
		})
		if err != nil {
			// A rate limit or an overload was reported by the transport as
			// it happened; the step failed either way.
			a.cb.Record(loopbreaker.Iteration{Err: err})
			continue
		}
		messages = append(messages, msg.ToParam())
		var results []anthropic.ContentBlockParamUnion
		var text strings.Builder
		for _, block := range msg.Content {
			switch block.Type {
			case "text":
				text.WriteString(block.Text)
			case "tool_use":
				input := string(block.Input)
				result, err := a.call(block.Name, input)
				a.cb.Record(loopbreaker.Iteration{
					Action:      &loopbreaker.Action{Tool: block.Name, Args: input},
					Observation: result,
					Err:         err,
				})
				if err != nil {
					result = err.Error() + "\n" + result
				}
				results = append(results, anthropic.NewToolResultBlock(block.ID, result, err != nil))
			}
		}
		if len(results) == 0 {
			a.cb.Record(loopbreaker.Iteration{Action: &loopbreaker.Action{Message: text.String()}, Done: true})
			return text.String(), nil
		}
		messages = append(messages, anthropic.NewUserMessage(results...))
	}
}

// call runs one tool.
func (a *agent) call(name, input string) (string, error) {
	tool, ok := a.tools[name]
	if !ok {
		return "", fmt.Errorf("no tool %q", name)
	}
	return tool(input)
}

// toolParams describes the tools to the model.
func (a *agent) toolParams() []anthropic.ToolUnionParam {
	describe := map[string]string{
		"list_files": "List the files of the working directory.",
		"read_file":  "Read a file of the working directory.",
		"run_tests":  "Run the tests and return their output.",
	}
	var params []anthropic.ToolUnionParam
	for _, name := range []string{"list_files", "read_file", "run_tests"} {
		if _, ok := a.tools[name]; !ok {
			continue
		}
		params = append(params, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        name,
			Description: anthropic.String(describe[name]),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}},
		}})
	}
	return params
}
