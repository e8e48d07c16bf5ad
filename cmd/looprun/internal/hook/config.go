package hook

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strings"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
	"github.com/loopbreaker/loopbreaker/protect"
)

// stateDirName is the directory of looprun's state in the project; the
// hooks keep theirs in its hooks/.
const stateDirName = ".loopbreaker"

// thresholdNames are looprun's threshold flags that `looprun hook` takes
// too: the ones a tool step's outcome feeds.
var thresholdNames = []string{"failures", "same-errors", "same-errors-in-a-row", "cooldown", "calls-per-hour", "stall-calls"}

// Defaults of the hook's own flags.
const (
	defaultPreset     = "tool-steps"
	defaultRefusals   = 1
	defaultNoProgress = 3
)

// defaultProtected is what the hook protects when -protect is not given:
// what looprun protects (the library's list, and .looprunrc).
func defaultProtected() []string { return append(protect.DefaultPaths(), ".looprunrc") }

// flags are the flags of `looprun hook`, which `looprun hooks install`
// takes too and writes into each command it installs.
type flags struct {
	fs         *flag.FlagSet
	names      map[string]bool // the flags defineFlags defined
	agent      agentFlag
	thresholds *thresholdflags.Set
	maxCost    float64
	maxTokens  int
	// windowShare and windowStop are -max-window-share and
	// -window-share-stop: the share of the provider's usage windows the
	// session may use, as its transcript reports them (Codex's).
	windowShare int
	windowStop  bool
	protect     listFlag
	readOnly    listFlag
	refusals    int
	ralph       string
	promise     string
	maxIter     int
	noProgress  int
	failClosed  bool
}

// agentFlag is -agent: an agent with hooks, named by its Flag.
type agentFlag struct{ *agent.Agent }

func (a *agentFlag) String() string { return a.Flag }

func (a *agentFlag) Set(v string) error {
	if ag := agent.ByFlag(v); ag != nil && ag.Hooks != nil {
		a.Agent = ag
		return nil
	}
	return fmt.Errorf("no agent %q: %s", v, agent.Flags())
}

// agentUsage is -agent's help: the agents by their flags.
var agentUsage = func() string {
	var names []string
	for _, ag := range agent.All {
		if ag.Hooks != nil {
			names = append(names, ag.Flag+" ("+ag.Name+")")
		}
	}
	return "the agent whose hooks these are: " + strings.Join(names, ", ")
}()

// readOnlyDefaults says -read-only's default for each agent.
func readOnlyDefaults() string {
	var each []string
	for _, ag := range agent.All {
		if ag.Hooks != nil {
			each = append(each, strings.Join(ag.Hooks.ReadOnly, " ")+" for "+ag.Name)
		}
	}
	return strings.Join(each, ", ")
}

// listFlag is a repeatable flag: each use adds a value.
type listFlag struct {
	values []string
	given  bool
}

func (l *listFlag) String() string { return strings.Join(l.values, " ") }

func (l *listFlag) Set(v string) error {
	l.values, l.given = append(l.values, v), true
	return nil
}

// defineFlags defines the hook's flags on fs.
func defineFlags(fs *flag.FlagSet) *flags {
	f := &flags{fs: fs, names: map[string]bool{}}
	before := map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) { before[fl.Name] = true })
	defer fs.VisitAll(func(fl *flag.Flag) {
		if !before[fl.Name] {
			f.names[fl.Name] = true
		}
	})
	f.agent.Agent = agent.ClaudeCode
	fs.Var(&f.agent, "agent", agentUsage)
	f.thresholds = thresholdflags.Register(fs, thresholdNames...)
	preset := fs.Lookup("preset")
	preset.DefValue = defaultPreset
	_ = preset.Value.Set(defaultPreset) // a default: not a flag given
	fs.Float64Var(&f.maxCost, "max-cost", 0, "end the session once it has cost this many US dollars, as its transcript's usage is priced (0: no cap)")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "end the session once it has spent this many tokens (0: no cap)")
	fs.IntVar(&f.windowShare, "max-window-share", 0, "refuse tool calls until the window resets once this `percent` of the provider's 5-hour or weekly window is used, as the session's transcript reports it (Codex's; 0: no cap)")
	fs.BoolVar(&f.windowStop, "window-share-stop", false, "at -max-window-share, end the session instead of refusing calls until the reset")
	fs.Var(&f.protect, "protect", "a `PATH` the agent must not delete or empty, relative to the project: a file, a directory or a glob (repeatable; given, replaces the default list "+
		strings.Join(defaultProtected(), " ")+"; "+stateDirName+"/ is always protected)")
	fs.Var(&f.readOnly, "read-only", "a `PATH` the agent must not even change (repeatable; given, replaces the default: the agent's files that hold its hooks, "+
		readOnlyDefaults()+")")
	fs.IntVar(&f.refusals, "refusals", defaultRefusals, "tool calls refused while the circuit is open before the session is ended (0: end it at the first)")
	fs.StringVar(&f.ralph, "ralph", "", "a prompt `FILE` (relative to the project): when the model stops, send it back to work with this prompt (a Ralph loop), until -promise, -max-iterations or the breaker says stop")
	fs.StringVar(&f.promise, "promise", "", "the completion promise: the Ralph loop is done when the model's last message says <promise>TEXT</promise>")
	fs.IntVar(&f.maxIter, "max-iterations", 0, "the Ralph loop's turns at most (0: no limit)")
	fs.IntVar(&f.noProgress, "no-progress", defaultNoProgress, "Ralph turns in a row that change no file before the loop stops (negative: off)")
	fs.BoolVar(&f.failClosed, "fail-closed", false, "when the hook itself fails (bad input, a corrupt state), refuse the call and end the session, instead of letting it go on")
	return f
}

// settings are what the flags say, checked.
type settings struct {
	agent      *agent.Agent
	steps      loopbreaker.Config // the tool steps' breaker
	ralph      loopbreaker.Config // the Ralph loop's breaker
	protect    []string
	readOnly   []string
	refusals   int
	prompt     string // the Ralph loop's prompt file; "" when there is no loop
	promise    string
	maxIter    int
	failClosed bool
	// stallCalls is the stall's threshold in force (the tool steps'
	// Steps.MaxStalled); 0 when it is off.
	stallCalls int
}

// settings checks the parsed flags and returns what they say.
func (f *flags) settings() (*settings, error) {
	steps, err := f.thresholds.Config()
	if err != nil {
		return nil, err
	}
	switch {
	case !(f.maxCost >= 0 && f.maxCost <= math.MaxFloat64):
		return nil, fmt.Errorf("-max-cost must be a number of dollars, 0 or more, not %v", f.maxCost)
	case f.maxTokens < 0:
		return nil, errors.New("-max-tokens must not be negative")
	case f.windowShare < 0 || f.windowShare > 100:
		return nil, fmt.Errorf("-max-window-share must be a percent from 1 to 100 (0: none), not %d", f.windowShare)
	case f.refusals < 0:
		return nil, errors.New("-refusals must not be negative")
	case f.maxIter < 0:
		return nil, errors.New("-max-iterations must not be negative")
	case f.ralph == "" && (f.promise != "" || f.maxIter != 0):
		return nil, errors.New("-promise and -max-iterations are the Ralph loop's: give -ralph too")
	}
	steps.Spend.MaxCostUSD, steps.Spend.MaxTokens = f.maxCost, f.maxTokens
	// Each step reports its progress, for the stall signal alone: whether
	// one call changed a file says nothing of a session's progress (most
	// only look), nor its output's length of a decline, whatever the
	// preset says of whole iterations.
	steps.Progress.MaxNoProgress, steps.Progress.OutputDeclinePercent, steps.Progress.ScoreWindow = -1, -1, -1
	stallCalls := steps.Steps.MaxStalled
	if stallCalls == 0 {
		stallCalls = loopbreaker.DefaultConfig().Steps.MaxStalled
	}
	steps.Spend.MaxWindowShare, steps.Spend.StopAtWindowShare = f.windowShare, f.windowStop
	// A tool's error is never the model provider's limit, whatever it
	// says (a test's output may well mention a 429): each failed step is
	// a failure, and one the person interrupted is neither.
	steps.Classify = classifyStep
	ralph := loopbreaker.DefaultConfig()
	ralph.Progress.MaxNoProgress = f.noProgress
	ralph.Progress.OutputDeclinePercent = -1 // a turn's last message says nothing by its length
	ralph.Classify = classifyStep
	s := &settings{
		agent: f.agent.Agent, steps: steps, ralph: ralph, refusals: f.refusals,
		prompt: f.ralph, promise: f.promise, maxIter: f.maxIter, failClosed: f.failClosed, stallCalls: max(stallCalls, 0),
		protect: defaultProtected(), readOnly: f.agent.Hooks.ReadOnly,
	}
	if f.protect.given {
		s.protect = f.protect.values
	}
	if f.readOnly.given {
		s.readOnly = f.readOnly.values
	}
	s.protect = withStateDir(s.protect)
	return s, nil
}

// classifyStep is how a tool step's error counts: a failure, or neither
// when the person interrupted the call.
func classifyStep(err error) loopbreaker.Outcome {
	if errors.Is(err, context.Canceled) {
		return loopbreaker.Neutral
	}
	return loopbreaker.Failure
}

// withStateDir adds .loopbreaker/ to paths unless it is there: the hooks'
// own state is always protected.
func withStateDir(paths []string) []string {
	for _, p := range paths {
		if path.Clean(filepath.ToSlash(p)) == stateDirName {
			return paths
		}
	}
	return append([]string{stateDirName + "/"}, paths...)
}

// args returns the hook's flags given, as command-line arguments that
// defineFlags reads back the same, in the flag set's order.
func (f *flags) args() []string {
	var out []string
	f.fs.Visit(func(fl *flag.Flag) {
		if !f.names[fl.Name] {
			return
		}
		if list, ok := fl.Value.(*listFlag); ok {
			for _, v := range list.values {
				out = append(out, "-"+fl.Name, v)
			}
			return
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v := fl.Value.String(); v == "true" {
				out = append(out, "-"+fl.Name)
			} else {
				out = append(out, "-"+fl.Name+"="+v)
			}
			return
		}
		out = append(out, "-"+fl.Name, fl.Value.String())
	})
	return out
}

// newFlagSet returns a flag set named name whose errors go to w.
func newFlagSet(name string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	return fs
}
