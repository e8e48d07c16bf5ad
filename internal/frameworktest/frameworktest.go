// Package frameworktest holds the stories the framework adapters
// (frameworks/adk, frameworks/eino, frameworks/genkit) are tested by, each
// run through the framework's own runner with a scripted model behind the
// framework's model interface, and the hand-written loop each story's
// stop is compared with: the same steps, recorded on a bare breaker.
//
// A framework's test gives a [Harness] that runs a [Story] and reports
// what happened; [Run] runs every story through it.
package frameworktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/loopbreaker/loopbreaker/sessions"
	"github.com/stretchr/testify/require"
)

// Start is when a story's clock starts.
var Start = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

// Model is the model every scripted turn names, priced in the stories'
// config.
const Model = "scripted-1"

// A Call is a tool call of a scripted turn: the tool and its JSON
// arguments.
type Call struct {
	Tool string
	Args string
}

func (c Call) String() string { return c.Tool + " " + c.Args }

// A Turn is the scripted model's answer to one request: tool calls, or,
// when there are none, a text; or, when Err is set, a failed model call.
type Turn struct {
	Calls []Call
	Text  string
	// Err is the model call's error: a rate limit (ErrRateLimited) or
	// another failure.
	Err error
}

// ErrRateLimited is the error a scripted turn fails with when the provider
// refuses for now: Gemini's 429.
var ErrRateLimited = errors.New("error 429: resource has been exhausted (e.g. check quota), status: RESOURCE_EXHAUSTED")

// Usage is what every scripted turn reports it spent.
var Usage = loopbreaker.Usage{Model: Model, InputTokens: 1000, OutputTokens: 100}

// A Story is a script for the model, the tools it calls and what the
// breaker is configured with.
type Story struct {
	Name string
	// Script is the model's answers; the last one again when it runs out.
	Script []Turn
	// Config changes the stories' breaker config (the tool-steps preset).
	Config func(*loopbreaker.Config)
	// Parallel: the framework runs a turn's calls at once.
	Parallel bool
	// Runs is how many runs (user messages) the story takes; 0 is 1. A run
	// that ends with an error that is not the breaker's is followed by the
	// next.
	Runs int
	// Check says what the story proves, given what the harness reports
	// and what the hand-written loop did.
	Check func(t *testing.T, got Result, ref Reference)
}

// A Harness runs a story through a framework: it makes the adapter with
// Options (the story's breaker config on a fake clock), runs the
// framework's runner Runs times with the model playing Script and the
// tools of Tools, and reports what happened.
type Harness func(t *testing.T, s Setup) Result

// Setup is what a harness runs a story with.
type Setup struct {
	Story   Story
	Options sessions.Options
	Clock   *loopbreakertest.Clock
	// Model answers the framework's requests from the script.
	Model *Script
	// Tools are the tools, by name: each records that it ran.
	Tools *Tools
	// Session is the key the harness makes its runs under (the
	// framework's user and session), for Result.Session.
	Session string
}

// Result is what a harness reports.
type Result struct {
	// Errs are the runs' errors, in order (nil for a run that answered).
	Errs []error
	// Session is the session after the runs.
	Session *sessions.Session

	// Filled in by Run: the text of each request the model got, the tool
	// calls that ran, and the waits on the clock.
	Requests []string
	Ran      []Call
	Slept    []time.Duration
}

// Err is the last run's error.
func (r Result) Err() error {
	if len(r.Errs) == 0 {
		return nil
	}
	return r.Errs[len(r.Errs)-1]
}

// Script plays the scripted model: each request gets the next turn, the
// last one again when the script runs out. It keeps the text of every
// request. It is safe for concurrent use.
type Script struct {
	mu       sync.Mutex
	turns    []Turn
	served   int
	requests []string
}

// NewScript returns a script of turns.
func NewScript(turns []Turn) *Script { return &Script{turns: turns} }

// Next records a request's text (everything the framework sent the model,
// as one string) and returns the turn that answers it.
func (s *Script) Next(request string) Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, request)
	t := s.turns[min(s.served, len(s.turns)-1)]
	s.served++
	return t
}

// Requests returns the text of each request the model got.
func (s *Script) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Tools are the stories' tools. Each call's result depends only on the
// tool and its arguments, the same every time: read_file and list_files
// read a small project, edit fails to match anything, and run_tests
// passes once parse.go has been patched.
type Tools struct {
	mu      sync.Mutex
	ran     []Call
	patched bool
}

// Names are the tools' names, in the order they are offered.
var Names = []string{"list_files", "read_file", "edit", "patch", "run_tests"}

// Run runs a tool: its result, or its error.
func (t *Tools) Run(tool, args string) (string, error) {
	t.mu.Lock()
	t.ran = append(t.ran, Call{Tool: tool, Args: args})
	t.mu.Unlock()
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	switch tool {
	case "list_files":
		return "parse.go\nparse_test.go", nil
	case "read_file":
		switch a.Path {
		case "parse.go":
			return "package parse\n\nfunc Parse(s string) int { return 0 }\n", nil
		case "parse_test.go":
			return "package parse\n\nfunc TestParse(t *testing.T) {}\n", nil
		}
		return "", fmt.Errorf("open %s: no such file or directory", a.Path)
	case "edit":
		return "", errors.New("edit: old text not found in the file")
	case "patch":
		t.mu.Lock()
		t.patched = true
		t.mu.Unlock()
		return "patched parse.go", nil
	case "run_tests":
		t.mu.Lock()
		patched := t.patched
		t.mu.Unlock()
		if patched {
			return "ok  \tparse\t0.01s", nil
		}
		return "--- FAIL: TestParse\nFAIL\tparse", errors.New("exit status 1")
	}
	return "", fmt.Errorf("no tool %q", tool)
}

// Ran returns the calls that ran, in the order they started.
func (t *Tools) Ran() []Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Call(nil), t.ran...)
}

// Config is the stories' breaker config: the tool-steps preset on clock,
// the scripted model priced, and the story's changes.
func Config(clock *loopbreakertest.Clock, change func(*loopbreaker.Config)) loopbreaker.Config {
	cfg, _ := loopbreaker.Preset("tool-steps")
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	cfg.Spend.MaxCallsPerHour = 1000
	cfg.Spend.Prices = loopbreaker.Prices{Model: {Input: 1, Output: 10}} // US dollars per million tokens
	cfg.Limits.ThrottleWait = 20 * time.Second
	if change != nil {
		change(&cfg)
	}
	return cfg
}

// Reference is what the hand-written loop did with a story's steps: a
// bare breaker, asked before every model turn (Check) and before every
// tool call (CheckAction), and told every tool call's step (Record).
type Reference struct {
	// Steps counts the tool steps it ran.
	Steps int
	// Stop is the reason it stopped; zero when the script answered.
	Stop loopbreaker.Reason
}

// maxTurns bounds the hand-written loop and the stories' runs.
const maxTurns = 60

// RunReference runs the hand-written loop over a story's script.
func RunReference(t *testing.T, s Story) Reference {
	t.Helper()
	clock := loopbreakertest.NewClock(Start)
	cb, err := loopbreaker.New(Config(clock, s.Config))
	require.NoError(t, err)
	tools := &Tools{}
	script := NewScript(s.Script)
	var ref Reference
	for range maxTurns {
		d := cb.Check()
		if !d.Allow {
			ref.Stop = d.Reason
			return ref
		}
		turn := script.Next("")
		if turn.Err != nil {
			cb.Record(loopbreaker.Iteration{Err: turn.Err})
			continue
		}
		cb.AddUsage(Usage)
		if len(turn.Calls) == 0 {
			cb.Record(loopbreaker.Iteration{Action: &loopbreaker.Action{Message: turn.Text}})
			return ref
		}
		for _, c := range turn.Calls {
			a := loopbreaker.Action{Tool: c.Tool, Args: c.Args}
			if d := cb.CheckAction(a); !d.Allow {
				ref.Stop = d.Reason
				return ref
			}
			out, err := tools.Run(c.Tool, c.Args)
			cb.Record(loopbreaker.Iteration{Action: &a, Observation: out, Err: err})
			ref.Steps++
		}
	}
	return ref
}

// Run runs every story through h, each a subtest named after what it
// proves.
func Run(t *testing.T, h Harness) {
	for _, s := range Stories() {
		t.Run(s.Name, func(t *testing.T) {
			clock := loopbreakertest.NewClock(Start)
			setup := Setup{
				Story:   s,
				Options: sessions.Options{Config: Config(clock, s.Config)},
				Clock:   clock,
				Model:   NewScript(s.Script),
				Tools:   &Tools{},
				Session: "user-1/chat-1",
			}
			got := h(t, setup)
			got.Requests = setup.Model.Requests()
			got.Ran = setup.Tools.Ran()
			got.Slept = clock.Slept()
			s.Check(t, got, RunReference(t, s))
		})
	}
}
