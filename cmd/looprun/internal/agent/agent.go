// Package agent is what looprun knows of each coding agent it runs and
// whose hooks it answers: Claude Code, Codex and Gemini CLI, one file
// each. An [Agent] says how its command line is recognised; how its
// output tells the run's outcome, its error, its usage and model, its
// session and how to resume it, and the agent's own last words (an
// [Output], read as the output streams); and, for the hooks inside its
// session, how its events come and how its answers go, which tools touch
// files, where its settings and transcript are, and what to tell the
// person at install ([Hooks]).
//
// The loop (package looprun) and the hooks (package hook) both read an
// agent through this package alone: adding an agent is adding a file
// here, and its name to [All].
package agent

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// Agent is one coding agent.
type Agent struct {
	// Name names the agent in messages ("Claude Code"), and Flag on the
	// command line (looprun hook -agent claude).
	Name, Flag string
	// Commands are the names of its program (the base name of a path),
	// by which a command line is recognised as the agent's: claude,
	// claude.exe.
	Commands []string
	// OutputName names, for looprun's banner, the output of the agent's
	// that looprun reads ("Claude Code's JSON output").
	OutputName string
	// ExitsZeroOnFailure says the agent can exit 0 with its work failing
	// (a session that ended cleanly with the tests failing): looprun
	// advises -check.
	ExitsZeroOnFailure bool
	// Model returns the model a command line of the agent runs, argv[at]
	// being the agent's word (see Find), from its flags and its settings
	// (getenv reads the environment); "" when it names none. It prices
	// the usage of an agent that reports tokens and no cost, when its
	// output does not name the model itself. Nil: the output says.
	Model func(argv []string, at int, getenv func(string) string) string
	// NewOutput returns a reader of the agent's output, for one run.
	NewOutput func() Output
	// Silent reports whether a command line of the agent, argv[at] being
	// its word, prints nothing until the run ends (Claude Code's -p
	// without stream-json, Gemini CLI's json format): a run of it is
	// quiet however busy it is. Nil: it prints as it goes.
	Silent func(argv []string, at int) bool
	// Hooks is how the agent's hooks work; nil for an agent without.
	Hooks *Hooks
}

// All are the agents looprun knows, in the order their output readers
// are given each line of a command's output: the first that takes a line
// keeps it from the rest, so an agent whose lines are told by their start
// (Codex's and Gemini CLI's events) comes before one that reads any JSON
// object of a type it knows (Claude Code's result, which Gemini CLI's
// result event would pass for). The first whose output it was tells the
// run.
var All = []*Agent{Codex, Gemini, ClaudeCode}

// Find returns the agent a command line runs, and where in argv its word
// is: the first argument whose path's base name is one of an agent's
// Commands, which finds it behind a wrapper too (npx @openai/codex,
// timeout 30m claude). Nil and -1 for another command.
func Find(argv []string) (*Agent, int) {
	for i, a := range argv {
		base := filepath.Base(a)
		for _, ag := range All {
			for _, c := range ag.Commands {
				if base == c {
					return ag, i
				}
			}
		}
	}
	return nil, -1
}

// ByFlag returns the agent whose Flag is flag; nil for none.
func ByFlag(flag string) *Agent {
	for _, ag := range All {
		if ag.Flag == flag {
			return ag
		}
	}
	return nil
}

// Flags returns the agents' Flags, for a message: "claude, codex or
// gemini".
func Flags() string {
	var flags []string
	for _, ag := range All {
		flags = append(flags, ag.Flag)
	}
	return strings.Join(flags[:len(flags)-1], ", ") + " or " + flags[len(flags)-1]
}

// Output reads an agent's output as it streams, a line at a time (the
// caller splits it; a line longer than the caller holds is passed over),
// in bounded memory. It is not safe for concurrent use.
type Output interface {
	// Line reads one line, without its newline, and reports whether it
	// was one of the agent's own lines (an event of its JSON output),
	// which no other agent's reader then reads.
	Line(line []byte) bool
	// Finish is called once the output has ended; whole is all of it
	// when the caller held it whole (nil otherwise), for a format that
	// spreads one JSON object over lines, and exitCode is the command's
	// exit status. It returns what the output told of the run.
	Finish(whole []byte, exitCode int) Run
}

// Run is what an agent's output told of one run. Its zero value says the
// output was not the agent's.
type Run struct {
	// Seen says the output was the agent's: its result, or its events.
	Seen bool
	// Failed says the run failed, whatever its exit status (Claude
	// Code's is_error, Codex's last command that failed).
	Failed bool
	// Err is the run's error as the agent tells it; it wins over the
	// error looprun finds in the output. Fallback is the error when
	// neither tells one ("claude: error_max_turns"). "" for none.
	Err, Fallback string
	// Told says the agent's events tell the outcome whole: a provider
	// limit is looked for in LimitText alone, an error the agent got past
	// is Noticed alone, and its last words are Words alone, never the
	// rest of the output (which holds its commands' output, and the
	// limits it got past while retrying). Otherwise those are read in the
	// end of the output.
	Told bool
	// LimitText is where a provider limit is looked for once the run
	// failed, when Told: the agent's own message of why it gave up.
	LimitText string
	// Noticed is an error the agent got past in a run that passed (a
	// command that failed before the last one passed), when Told.
	Noticed string
	// Words are the agent's own last words, where its status block, the
	// done marker and a claim of done count (Claude Code's result text,
	// Codex's and Gemini's last message), and HasWords says the output
	// had them.
	Words    string
	HasWords bool
	// HookEnded says a hook ended the session: a failure, whose Err is
	// the hook's reason (HookReason, when the output said it), or words
	// that say a hook ended it.
	HookEnded  bool
	HookReason string
	// Session is the session the run went on in, as the output named it
	// ("" for none): the next iteration resumes it (see Resume).
	Session string
	// Usage is what the run spent, and HasUsage says the output told it.
	// An agent that reports tokens alone names their Model, for the
	// breaker to price (else the command line names it: Agent.Model);
	// one that reports a cost reports it in CostUSD,
	// which is then the session's cost so far (Claude Code's
	// total_cost_usd on --resume), with HasCost.
	Usage    loopbreaker.Usage
	HasUsage bool
	CostUSD  float64
	HasCost  bool
	// Turns are the model's turns, when the output counts them.
	Turns int
	// Denials are the tool calls the agent's permissions refused.
	Denials int
	// Windows are the provider's usage windows (a subscription's 5-hour
	// and weekly limits) as the agent last reported them during the run,
	// for the breaker's window share; nil when it reported none (Claude
	// Code reports them to a subscriber alone).
	Windows []loopbreaker.Window
	// APIError is the class of the API error a failed run ended on, when
	// the agent names it (Claude Code's stream: see APIErrorLimit); "" for
	// none.
	APIError string
}

// outputFormat returns the value of --output-format (or of its short
// name short, when not ""), given as the next argument or after "=", in
// the agent's arguments after argv[at]; "" when none is given.
func outputFormat(argv []string, at int, short string) string {
	format := ""
	args := argv[at+1:]
	for i, a := range args {
		name, value, inline := strings.Cut(a, "=")
		if name != "--output-format" && (short == "" || name != short) {
			continue
		}
		switch {
		case inline:
			format = value
		case i+1 < len(args):
			format = args[i+1]
		}
	}
	return format
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// sumTokens adds token counts, counting a negative one as zero, and
// saturates at the largest int.
func sumTokens(counts ...int) int {
	sum := 0
	for _, n := range counts {
		if n > 0 {
			if sum > math.MaxInt-n {
				return math.MaxInt
			}
			sum += n
		}
	}
	return sum
}
