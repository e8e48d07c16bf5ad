package agent

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/transport"
)

// Connect starts a conversation with the model named model on task,
// offering it tools, through an SDK client on httpClient: an
// [HTTPClient], whose requests go through the breaker's transport.
type Connect func(httpClient *http.Client, model string, tools Tools, task string) Model

// HTTPClient returns the HTTP client for a model SDK's client: its
// requests go through the breaker's transport, which counts each one (the
// SDK's retries too) into the call budget, prices the token usage its
// response reports, and tells the breaker of the provider's rate limits
// as they come and go.
func HTTPClient(cb *loopbreaker.CircuitBreaker) *http.Client {
	return &http.Client{Transport: transport.New(cb, nil)}
}

// Main is a command's main: it reads the flags -dir (the directory the
// agent works in, "."), -model (defaultModel unless given) and -max-cost
// (US dollars, 2) and the task, the one argument; makes the breaker on
// BreakerConfig and the OSTools of the directory; starts the conversation
// with connect on the breaker's HTTPClient, runs it and prints the answer. It exits 2 on a usage
// error, 1 when the flags make no valid breaker (a -max-cost of NaN) or
// the agent stopped without an answer; name is the command's, for its
// messages.
func Main(name, defaultModel string, connect Connect) {
	os.Exit(run(name, defaultModel, connect, os.Args[1:], os.Stdout, os.Stderr))
}

// run is Main on args, writing to stdout and stderr, and returning the
// exit code.
func run(name, defaultModel string, connect Connect, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	dir := flags.String("dir", ".", "the directory the agent works in")
	model := flags.String("model", defaultModel, "the model")
	maxCost := flags.Float64("max-cost", 2, "stop once the run has cost this many US dollars (0: no cap)")
	if err := flags.Parse(args); err != nil || flags.NArg() != 1 {
		fmt.Fprintf(stderr, "usage: %s [-dir DIR] [-model MODEL] [-max-cost USD] TASK\n", name)
		return 2
	}
	cb, err := loopbreaker.New(BreakerConfig(*maxCost))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	tools := OSTools(*dir)
	answer, err := Run(context.Background(), cb, connect(HTTPClient(cb), *model, tools, flags.Arg(0)), tools)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	fmt.Fprintln(stdout, answer)
	return 0
}
