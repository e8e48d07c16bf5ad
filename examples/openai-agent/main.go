// Command openai-agent is a small tool-calling agent on openai-go with a
// loopbreaker.CircuitBreaker watching it step by step. It works on a
// directory with three tools (list_files, read_file, run_tests) until the
// model answers without calling a tool.
//
//	OPENAI_API_KEY=... go run . -dir ~/src/project "Why does TestParse fail?"
//
// The breaker is wired in twice. Its Transport, installed in the SDK's
// HTTP client, counts every request (the SDK's retries too), reads the
// token usage and prices it, so that -max-cost holds, and reads the rate
// limits of the responses: a limit the SDK's own retry got past is lifted
// at once, one it gave up on is waited out. And every tool call
// is recorded as a step, with its arguments and its result, so that the
// breaker stops the agent when it goes round in circles: the same call
// with the same result four times, the same call failing three times,
// two calls alternating with the same results.
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

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/transport"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func main() {
	dir := flag.String("dir", ".", "the directory the agent works in")
	model := flag.String("model", "gpt-4.1-mini", "the model")
	maxCost := flag.Float64("max-cost", 2, "stop once the run has cost this many US dollars")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: openai-agent [-dir DIR] [-model MODEL] [-max-cost USD] TASK")
		os.Exit(2)
	}
	cb, err := loopbreaker.New(breakerConfig(*maxCost))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a := newAgent(cb, osTools(*dir), *model) // OPENAI_API_KEY from the environment
	answer, err := a.run(context.Background(), flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "openai-agent:", err)
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

// Tools are the agent's tools, by name: each takes the model's JSON
// arguments and returns its result, or an error that the model is shown.
type Tools map[string]func(args string) (string, error)

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
		"read_file": func(args string) (string, error) {
			var p struct{ Path string }
			if err := jsonArgs(args, &p); err != nil {
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
	client openai.Client
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
	return &agent{client: openai.NewClient(opts...), cb: cb, tools: tools, model: model}
}

// errStopped is returned when the breaker stops the agent.
var errStopped = errors.New("stopped by the circuit breaker")

// run works on task until the model answers without a tool call, and
// returns the answer. Before each model turn it waits for the breaker: a
// cooldown, a provider limit or a spent call budget is waited out, and
// after each cooldown one probe turn runs; a loop stuck three openings in
// a row, or a spent dollar cap, stops the agent. Each tool call is recorded as a step.
func (a *agent) run(ctx context.Context, task string) (string, error) {
	messages := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are a careful engineer. Use the tools to answer."),
		openai.UserMessage(task),
	}
	for {
		// Wait sleeps out a cooldown, a provider limit or a spent call
		// budget, and returns an error when waiting cannot help: the
		// breaker gave up on a loop stuck again and again, or the dollar
		// cap is spent.
		if _, err := a.cb.Wait(ctx); err != nil {
			return "", fmt.Errorf("%w: %w", errStopped, err)
		}
		resp, err := a.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    a.model,
			Messages: messages,
			Tools:    a.toolParams(),
		})
		if err != nil {
			// A rate limit was reported by the transport as it happened;
			// the step failed either way.
			a.cb.Record(loopbreaker.Iteration{Err: err})
			continue
		}
		if len(resp.Choices) == 0 {
			a.cb.Record(loopbreaker.Iteration{Err: errors.New("the model returned no choice")})
			continue
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			a.cb.Record(loopbreaker.Iteration{Action: &loopbreaker.Action{Message: msg.Content}, Done: true})
			return msg.Content, nil
		}
		messages = append(messages, msg.ToParam())
		for _, call := range msg.ToolCalls {
			result, err := a.call(call.Function.Name, call.Function.Arguments)
			a.cb.Record(loopbreaker.Iteration{
				Action:      &loopbreaker.Action{Tool: call.Function.Name, Args: call.Function.Arguments},
				Observation: result,
				Err:         err,
			})
			if err != nil {
				result = "error: " + err.Error() + "\n" + result
			}
			messages = append(messages, openai.ToolMessage(result, call.ID))
		}
	}
}

// call runs one tool.
func (a *agent) call(name, args string) (string, error) {
	tool, ok := a.tools[name]
	if !ok {
		return "", fmt.Errorf("no tool %q", name)
	}
	return tool(args)
}

// toolParams describes the tools to the model.
func (a *agent) toolParams() []openai.ChatCompletionToolUnionParam {
	describe := map[string]string{
		"list_files": "List the files of the working directory.",
		"read_file":  "Read a file of the working directory. Arguments: {\"path\": string}.",
		"run_tests":  "Run the tests and return their output.",
	}
	var params []openai.ChatCompletionToolUnionParam
	for _, name := range []string{"list_files", "read_file", "run_tests"} {
		if _, ok := a.tools[name]; !ok {
			continue
		}
		params = append(params, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:        name,
			Description: openai.String(describe[name]),
			Parameters: openai.FunctionParameters{
				"type":       "object",
				"properties": map[string]any{"path": map[string]any{"type": "string"}},
			},
		}))
	}
	return params
}
