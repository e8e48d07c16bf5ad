// Package agent is a small tool-calling agent with a
// loopbreaker.CircuitBreaker watching it step by step, written once for
// any model SDK. It works on a directory with three tools (list_files,
// read_file, run_tests) until the model answers without calling a tool.
//
// The breaker is wired in twice. Its transport (package
// github.com/loopbreaker/loopbreaker/transport), installed in the SDK's
// HTTP client, counts every request (the SDK's retries too), reads the
// token usage and prices it, so that a dollar cap holds, and reads the
// provider's rate limits from the responses: a limit the SDK's own retry
// got past is lifted at once, one it gave up on is waited out. And Run
// records every tool call as a step, with its arguments and its result,
// so that the breaker stops the agent when it goes round in circles: the
// same call with the same result four times, the same call failing three
// times, two calls alternating with the same results.
//
// What differs between SDKs is only how a conversation is sent: a
// [Model]. The commands beside this package implement it on
// anthropic-sdk-go (../anthropic) and openai-go (../openai).
package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/loopbreaker/loopbreaker"
)

// Instructions are the system prompt of the agent's conversations.
const Instructions = "You are a careful engineer. Use the tools to answer."

// A Model is one conversation with a model through its SDK. It holds the
// conversation: the task it was started on, the model's answers and the
// tools' results.
type Model interface {
	// Send sends the conversation to the model and adds the model's
	// answer to it. An error is the SDK's, after the SDK's own retries:
	// the answer was not had.
	Send(ctx context.Context) (Answer, error)
	// AddResults adds the results of the last answer's tool calls to the
	// conversation, one for each call, in the calls' order.
	AddResults(results []Result)
}

// An Answer is the model's answer to one turn of the conversation: the
// tools it calls, or, when it calls none, its final text.
type Answer struct {
	Calls []Call
	Text  string
}

// A Call is one tool call the model asks for.
type Call struct {
	ID   string // the model's name for the call, which its Result gives back
	Tool string // the tool's name
	Args string // the arguments, as JSON
}

// A Result is what one tool call returned.
type Result struct {
	CallID string
	Output string
	Err    error // the tool failed; Output is what it wrote all the same
}

// Content is the result as the model reads it: the output, after the
// error when the tool failed.
func (r Result) Content() string {
	if r.Err != nil {
		return "error: " + r.Err.Error() + "\n" + r.Output
	}
	return r.Output
}

// BreakerConfig is the agent's breaker configuration: OpenHands' thresholds
// for a tool-calling agent's steps (the tool-steps preset), giving up on a
// loop stuck three openings in a row, and a cap on the US dollars spent,
// which the transport prices from the usage it reads.
func BreakerConfig(maxCostUSD float64) loopbreaker.Config {
	cfg, _ := loopbreaker.Preset("tool-steps")
	cfg.MaxConsecutiveOpens = 3
	cfg.Spend.MaxCostUSD = maxCostUSD
	return cfg
}

// ErrStopped is returned, wrapping the breaker's refusal, when the breaker
// stops the agent.
var ErrStopped = errors.New("stopped by the circuit breaker")

// Run works on the conversation of model until the model answers without
// a tool call, and returns that answer. Before each turn it waits for the
// breaker: a cooldown, a provider limit or a spent call budget is waited
// out, and after each cooldown one probe turn runs; a loop stuck three
// openings in a row, or a spent dollar cap, stops the agent with
// ErrStopped. A turn the SDK failed is recorded as a failed step and
// tried again; each tool call is asked about before it runs (a call that
// would complete a loop is refused, and the model reads why instead of
// its result), recorded as a step after it ran, and the final answer is
// the last step. The breaker's warnings, one step short of a stop, go
// with the next result the model reads.
func Run(ctx context.Context, cb *loopbreaker.CircuitBreaker, model Model, tools Tools) (string, error) {
	for {
		// Wait sleeps out a cooldown, a provider limit or a spent call
		// budget, and returns an error when waiting cannot help: the
		// breaker gave up on a loop stuck again and again, or the dollar
		// cap is spent.
		if _, err := cb.Wait(ctx); err != nil {
			return "", fmt.Errorf("%w: %w", ErrStopped, err)
		}
		answer, err := model.Send(ctx)
		if err != nil {
			// A rate limit or an overload was reported by the transport as
			// it happened; the step failed either way.
			cb.Record(loopbreaker.Iteration{Err: err})
			continue
		}
		if len(answer.Calls) == 0 {
			cb.Record(loopbreaker.Iteration{Action: &loopbreaker.Action{Message: answer.Text}, Done: true})
			return answer.Text, nil
		}
		results := make([]Result, len(answer.Calls))
		for i, call := range answer.Calls {
			action := loopbreaker.Action{Tool: call.Tool, Args: call.Args}
			d := cb.CheckAction(action)
			if !d.Allow {
				results[i] = Result{CallID: call.ID, Err: errors.New(d.ForModel())}
				continue
			}
			output, err := tools.call(call.Tool, call.Args)
			cb.Record(loopbreaker.Iteration{Action: &action, Observation: output, Err: err})
			if warn := d.ForModel(); warn != "" {
				output = warn + "\n\n" + output
			}
			results[i] = Result{CallID: call.ID, Output: output, Err: err}
		}
		model.AddResults(results)
	}
}
