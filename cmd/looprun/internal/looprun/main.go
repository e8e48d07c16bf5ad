// Package looprun is the looprun command, as a function: Main runs it
// with the process's arguments and standard streams, on the process's own
// breaker or on one that Options supplies (a fleet's, shared on Redis:
// the command's main package adds the fleet's flags). The command's
// documentation says what it does.
package looprun

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
	"github.com/loopbreaker/loopbreaker/internal/timer"
	"github.com/loopbreaker/loopbreaker/protect"
)

// Exit codes; see the package comment.
const (
	exitDone        = 0
	exitError       = 1
	exitUsage       = 2
	exitTripped     = 3
	exitAborted     = 4
	exitBudget      = 5
	exitLimit       = 6
	exitProtected   = 7
	exitProvider    = 8
	exitInterrupted = 130
)

// Options adapt the command to another breaker. The zero value is the
// command without its fleet: one breaker of the process's own,
// saved in .loopbreaker/ in the working directory.
type Options struct {
	// Flags, when set, adds flags to the command's own (a fleet's
	// -redis). It is called before the command line is parsed.
	Flags func(fs *flag.FlagSet)

	// Settable names the flags of Flags that the environment
	// (LOOPRUN_<FLAG>) and .looprunrc may set too, as they set most of
	// the command's own.
	Settable []string

	// NewBreaker, when set, makes the breaker the loop asks. It returns
	// the breaker and a line the banner shows about it ("fleet agents on
	// redis://..."), or a nil breaker for the process's own. An error
	// stops the command with exit code 2 (usage) when it is a
	// *UsageError, else 1. A breaker that is a SharedBreaker is one other
	// runners share.
	NewBreaker func(Setup) (b Breaker, about string, err error)
}

// Setup is what the command line and the settings gave, for
// Options.NewBreaker.
type Setup struct {
	// Config is the breaker's configuration, its clock, classifier and
	// protected files included.
	Config loopbreaker.Config
	// IterationTimeout is how long one iteration's command may run
	// (-timeout); its -check may take as long again.
	IterationTimeout time.Duration
}

// Breaker is what the loop asks of a breaker: the loop's questions and
// answers, waiting, the figures, a person's choices, and the state that
// the state file keeps between runs (for a fleet's worker, its own
// signals). *loopbreaker.CircuitBreaker is one.
type Breaker interface {
	Check() loopbreaker.Decision
	Record(loopbreaker.Iteration)
	Wait(ctx context.Context) (loopbreaker.Decision, error)
	Stats() loopbreaker.Stats
	Resume()
	Skip()
	Abort()
	Snapshot() loopbreaker.Snapshot
	Restore(loopbreaker.Snapshot) error
}

// SharedBreaker is a Breaker that other runners share (a fleet's on
// Redis). On one, -reset also resets what is shared, through ResetShared,
// which fails, changing nothing, when what is shared is out of reach;
// -auto-reset is not applied (it would release every runner); and a probe
// another runner holds is waited for only with -wait. When the breaker is
// also an io.Closer, the command closes it last.
type SharedBreaker interface {
	Breaker
	ResetShared() error
}

// UsageError is an error of Options.NewBreaker that is the person's
// mistake on the command line (a flag missing or malformed): the command
// says it and exits with code 2.
type UsageError struct{ Err error }

// Error returns the error's message, as the command shows it.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error the UsageError holds.
func (e *UsageError) Unwrap() error { return e.Err }

// Main runs the command with the process's arguments and standard
// streams, and returns its exit code. Ctrl+C and SIGTERM stop the loop
// cleanly. On Linux the process becomes a child subreaper, so that
// nothing a command starts outlives its iteration.
func Main(opts Options) int {
	becomeSubreaper()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runWith(ctx, opts, realClock{}, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// clock is the runner's time. The breaker reads it (Config.Now), and the
// runner waits on it for a cooldown or the call budget, so that a test can
// take a loop through an hour's wait at once. The commands run in real
// time.
type clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx is done and returns its error.
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the clock of the real world.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error { return timer.Sleep(ctx, d) }

// options are the parsed command line.
type options struct {
	cfg           loopbreaker.Config
	argv          []string
	dir           string
	name          string
	prompt        string
	plan          string
	doneMarker    string
	timeout       time.Duration
	maxIterations int
	reset         bool
	wait          bool
	interactive   string   // auto, yes, no
	protect       []string // the protected paths, .loopbreaker/ among them
	maxCost       float64
	maxTokens     int
	costPerMinute float64 // -max-cost-per-minute: the burn rate's cap
	windowShare   int     // -max-window-share: percent of the provider's usage window
	windowStop    bool    // -window-share-stop: stop at it, instead of waiting for the reset
	limitWait     time.Duration
	check         string // run after each iteration the command passed; "" for none
	commit        bool   // commit the changes of each successful iteration
	quiet         bool   // do not show the command's output
	json          bool   // the result as JSON on stdout, the rest on stderr
	maxOpens      int    // the breaker gives up once the circuit has opened this often in a row (0: never)
	autoReset     bool   // close, at start, a circuit a cooldown would end
	markerGiven   bool   // -done-marker was set, by a flag or a setting

	thresholds *thresholdflags.Set
	notes      []string // about the settings read, for stderr
}

// parseFlags reads the command line, and the settings of the
// environment and of the files in -dir (see config.go). Flags given
// explicitly win over everything, and the preset comes last, as in
// ralph-starter.
func parseFlags(args []string, environ []string, opts Options) (*options, error) {
	fs := flag.NewFlagSet("looprun", flag.ContinueOnError)
	// The flag package neither prints the usage nor its errors: -help goes
	// to stdout (helpRequest), and a mistake is one line (flagError).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	o := &options{timeout: 15 * time.Minute}
	thresholds := thresholdflags.Register(fs)
	fs.IntVar(&o.maxIterations, "max-iterations", 0, "stop after this many iterations (simulated agent: 20)")
	fs.Var(minutesFlag{&o.timeout}, "timeout", "time limit of an iteration and -check (a `duration`; N: minutes)")
	fs.StringVar(&o.dir, "dir", ".", "the command's working `dir`ectory")
	fs.StringVar(&o.name, "name", "", "the loop's `name`, naming its state file and logs [loop]")
	fs.StringVar(&o.prompt, "prompt", "PROMPT.md", "`file` in -dir fed to the command on stdin")
	fs.StringVar(&o.plan, "plan", "", "markdown task `file`: '- [x]' done, '- [ ]' to do")
	fs.StringVar(&o.doneMarker, "done-marker", "EXIT_SIGNAL: true", "`text` that is the agent's done signal without a status block")
	fs.BoolVar(&o.reset, "reset", false, "forget the saved state and start afresh")
	fs.BoolVar(&o.wait, "wait", false, "wait out cooldowns and the call budget")
	fs.StringVar(&o.interactive, "interactive", "auto", "ask when the circuit opens: `yes|no|auto` (at a terminal)")
	var protect []string
	protectGiven := false
	fs.Func("protect", "a `path` (file, directory, glob) the agent must not lose (repeatable; replaces "+
		strings.Join(defaultProtected(), " ")+"; "+stateDirName+"/ stays)", func(p string) error {
		protectGiven = true
		protect = append(protect, p)
		return nil
	})
	fs.Float64Var(&o.maxCost, "max-cost", 0, "stop when the loop has cost this many `dollars`")
	fs.IntVar(&o.maxTokens, "max-tokens", 0, "stop when the loop has spent this many tokens")
	fs.Float64Var(&o.costPerMinute, "max-cost-per-minute", 0, "refuse while the loop spends this many `dollars` a minute, over 5 minutes")
	fs.IntVar(&o.windowShare, "max-window-share", 0, "wait for the window's reset at this `percent` of Claude's or Codex's 5-hour or weekly window")
	fs.BoolVar(&o.windowStop, "window-share-stop", false, "at -max-window-share, stop instead of waiting")
	fs.DurationVar(&o.limitWait, "limit-wait", defaultLimitWait, "the longest provider limit waited out (0: none)")
	fs.StringVar(&o.check, "check", "", "a shell `command` run after each passing iteration (go test ./...): it can fail it; its test counts are read")
	fs.BoolVar(&o.commit, "commit", false, "commit each successful iteration's changes (git add -A)")
	fs.BoolVar(&o.quiet, "quiet", false, "do not show the command's output (the log keeps it)")
	fs.BoolVar(&o.json, "json", false, "the result as JSON on stdout; everything else on stderr")
	fs.IntVar(&o.maxOpens, "max-opens", loopbreaker.DefaultConfig().MaxConsecutiveOpens, "openings in a row before giving up (0: never)")
	fs.BoolVar(&o.autoReset, "auto-reset", false, "at start, close a circuit a cooldown would end")
	thresholds.RegisterAliases()
	thresholds.Alias("validate", "check", "ralph-starter")
	thresholds.Alias("auto-reset-circuit", "auto-reset", "ralph-claude-code")
	if opts.Flags != nil {
		opts.Flags(fs)
	}
	thresholds.Settable(append(settable, opts.Settable...)...)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			usage(&b, fs, thresholds)
			return nil, &helpRequest{text: b.String()}
		}
		return nil, flagError(fs, err)
	}
	if !protectGiven {
		protect = defaultProtected()
	}
	o.protect = withStateDir(protect)
	o.argv = fs.Args()
	// A mistyped -dir is the person's mistake, not the command's: it is
	// caught here, before anything is created in it.
	info, err := os.Stat(o.dir)
	if pathErr := (*os.PathError)(nil); errors.As(err, &pathErr) {
		err = pathErr.Err // the path is said once
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("-dir %s: %w", o.dir, err)
	case !info.IsDir():
		return nil, fmt.Errorf("-dir %s: not a directory", o.dir)
	}
	if o.notes, err = readSettings(thresholds, o.dir, environ); err != nil {
		return nil, err
	}
	o.thresholds = thresholds
	o.markerGiven = thresholds.Origin("done-marker") != ""

	if o.interactive != "auto" && o.interactive != "yes" && o.interactive != "no" {
		return nil, fmt.Errorf("-interactive must be auto, yes or no, not %q", o.interactive)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("-timeout must be positive, not %s", o.timeout)
	}
	if o.maxIterations < 0 {
		return nil, fmt.Errorf("-max-iterations must not be negative")
	}
	if !(o.maxCost >= 0 && o.maxCost <= math.MaxFloat64) {
		return nil, fmt.Errorf("-max-cost must be a number of dollars, 0 or more, not %v", o.maxCost)
	}
	if o.maxTokens < 0 {
		return nil, fmt.Errorf("-max-tokens must not be negative")
	}
	if !(o.costPerMinute >= 0 && o.costPerMinute <= math.MaxFloat64) {
		return nil, fmt.Errorf("-max-cost-per-minute must be a number of dollars, 0 or more, not %v", o.costPerMinute)
	}
	if o.windowShare < 0 || o.windowShare > 100 {
		return nil, fmt.Errorf("-max-window-share must be a percent from 1 to 100 (0: none), not %d", o.windowShare)
	}
	if o.limitWait < 0 {
		return nil, fmt.Errorf("-limit-wait must not be negative, not %s", o.limitWait)
	}
	if o.maxOpens < 0 {
		return nil, fmt.Errorf("-max-opens must not be negative")
	}
	if strings.HasPrefix(o.check, "-") {
		// ralph-starter's --validate finds its commands itself; looprun's
		// takes one, and a flag after it took its place.
		return nil, fmt.Errorf("-check (--validate) takes the command to run after each iteration, as in --validate 'npm test', not %q", o.check)
	}
	if o.name == "" {
		o.name = "loop"
		if len(o.argv) == 0 {
			o.name = "simulated"
		}
	}
	if strings.ContainsAny(o.name, `/\`) || o.name == "." || o.name == ".." {
		return nil, fmt.Errorf("-name must be a plain file name, not %q", o.name)
	}

	cfg, err := thresholds.Config()
	if err != nil {
		return nil, err
	}
	if len(o.argv) == 0 && thresholds.Origin("max-iterations") == "" {
		o.maxIterations = 20 // the simulated agent would go on for ever
	}
	cfg.Spend.MaxCostUSD, cfg.Spend.MaxTokens = o.maxCost, o.maxTokens
	cfg.Spend.MaxCostUSDPerMinute = o.costPerMinute
	cfg.Spend.MaxWindowShare, cfg.Spend.StopAtWindowShare = o.windowShare, o.windowStop
	cfg.MaxConsecutiveOpens = o.maxOpens
	if o.maxOpens == 0 {
		cfg.MaxConsecutiveOpens = -1 // never give up
	}
	o.cfg = cfg
	return o, nil
}

// defaultProtected is what looprun protects when -protect is not given:
// the library's list, and looprun's configuration file.
func defaultProtected() []string {
	return append(protect.DefaultPaths(), configFileName)
}

// run is the command on the process's own breaker; it returns the exit
// code.
func run(ctx context.Context, clk clock, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(ctx, Options{}, clk, args, stdin, stdout, stderr)
}

// runWith is the whole program; it returns the exit code.
func runWith(ctx context.Context, opts Options, clk clock, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, os.Environ(), opts)
	var help *helpRequest
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text) // looprun -h | less
		return exitDone
	}
	if err != nil {
		fmt.Fprintln(stderr, "looprun:", err)
		return exitUsage
	}
	// With -json, stdout is the result's alone: what a person reads goes
	// to stderr.
	display := stdout
	if o.json {
		display = stderr
	}
	for _, n := range o.notes {
		fmt.Fprintln(stderr, "looprun: note:", n)
	}
	stop := func(code int, err error) int {
		fmt.Fprintln(stderr, "looprun:", err)
		if o.json {
			_ = json.NewEncoder(stdout).Encode(jsonResult{ExitCode: code, Exit: exitNames[code], Stopped: err.Error()})
		}
		return code
	}
	guard, err := newGuard(o)
	var badPath *loopbreaker.ConfigError
	switch {
	case errors.As(err, &badPath): // the first of them: the person gave -protect
		return stop(exitUsage, fmt.Errorf("-protect %v: %s", badPath.Value, badPath.Reason))
	case err != nil:
		return stop(exitError, err)
	}
	note, err := checkOwnCommand(guard, o)
	if err != nil {
		return stop(exitUsage, err)
	}
	if note != "" {
		fmt.Fprintln(display, "looprun: note:", note)
	}
	r, err := newRunner(o, opts, guard, clk, stdin, display, stderr)
	switch {
	case errors.As(err, new(*UsageError)):
		return stop(exitUsage, err)
	case err != nil:
		return stop(exitError, err)
	}
	code := r.loop(ctx)
	r.endSession(code)
	// A state that could not be saved is an error whatever stopped the
	// loop: the next run would go on from an older state. The summary
	// still says why the loop stopped.
	saveErr := r.save()
	if saveErr != nil {
		if !r.saveFailed { // else the loop has said so, and stopped on it
			fmt.Fprintln(stderr, "looprun: saving the state:", saveErr)
		}
		code = exitError
	}
	r.summary(code, saveErr)
	if o.json {
		if err := r.writeJSON(stdout, code, saveErr); err != nil {
			fmt.Fprintln(stderr, "looprun: writing the result:", err)
		}
	}
	if c, ok := r.cb.(io.Closer); ok {
		_ = c.Close() // the loop is over: nothing is left to tell it
	}
	return code
}

// runner is one loop of an agent under a breaker.
type runner struct {
	o           *options
	cb          Breaker
	shared      SharedBreaker // cb, when other runners share it; else nil
	about       string        // a line about the breaker for the banner, when it is not the process's own
	guard       *protect.Guard
	clock       clock
	state       *stateFile
	agent       agent
	logs        iterationLogs
	out         io.Writer   // the table, the summary, the prompts: stdout, or stderr with -json
	live        *liveOutput // the command's output, and the status line, on out
	errOut      io.Writer   // errors
	in          io.Reader
	answers     <-chan string        // lines of in, once ask has started reading
	waited      loopbreaker.Decision // of the Wait that let the next iteration run
	interactive bool
	outTerminal bool       // out is a terminal: countdowns rewrite their line
	countdown   *countdown // sleep shows a countdown: what is waited for
	sessions    *sessions
	limited     int  // the iteration the provider refused last, to run again
	inGit       bool // the directory is in a git repository

	samples    map[string]string // fingerprint → the error's first line
	tests      testsSeen         // what the iterations told of the tests
	stuck      *stuckAnalysis    // why the circuit last opened, until an iteration gets past it; nil for none
	lastOutput [sha256.Size]byte // outside git: the hash of the previous iteration's output
	last       lastError         // the last failed iteration's error, for the prompt and the summary
	refusal    loopbreaker.Reason
	stopped    string // why the loop stopped, for the summary
	saveFailed bool   // the loop stopped on a failed save
	// commitFailed is the error of the last -commit that failed, said
	// once: "" after a commit that worked.
	commitFailed string
	iterations   int // run by this process
}

// lastError is the error of the last failed iteration of this run.
type lastError struct {
	iteration int
	from      string // "command" or "check"
	text      string // the error, its lines as found, at most maxErrorLines
	log       string // the iteration's log
}

func newRunner(o *options, opts Options, guard *protect.Guard, clk clock, stdin io.Reader, stdout, stderr io.Writer) (*runner, error) {
	r := &runner{
		o: o, guard: guard, clock: clk, out: stdout, errOut: stderr, in: stdin, samples: map[string]string{},
		logs:       iterationLogs{dir: filepath.Join(o.dir, stateDirName, logsDirName), loop: o.name},
		lastOutput: sha256.Sum256(nil), // no output before the first
		sessions:   openSessions(filepath.Join(o.dir, stateDirName), o.name, clk.Now),
	}
	cfg := o.cfg
	cfg.Now, cfg.Sleep = clk.Now, r.sleep
	cfg.Classify = classify
	cfg.Guard = guard
	if opts.NewBreaker != nil {
		cb, about, err := opts.NewBreaker(Setup{Config: cfg, IterationTimeout: o.timeout})
		if err != nil {
			return nil, err
		}
		r.cb, r.about = cb, about
		r.shared, _ = cb.(SharedBreaker)
	}
	if r.cb == nil {
		cb, err := loopbreaker.New(cfg)
		if err != nil {
			return nil, err
		}
		r.cb = cb
	}
	r.interactive = o.interactive == "yes" || o.interactive == "auto" && isTerminal(stdin)
	r.outTerminal = isTerminal(stdout)
	r.live = &liveOutput{w: stdout, terminal: r.outTerminal, quiet: o.quiet}

	if len(o.argv) == 0 {
		r.agent = simulatedAgent{}
	} else {
		r.agent = &commandAgent{argv: o.argv, dir: o.dir, prompt: filepath.Join(o.dir, o.prompt), timeout: o.timeout}
		_, r.inGit = gitTree(o.dir)
	}
	// The state is looprun's, not the project's: an agent that runs git
	// add -A must not commit it.
	added, err := excludeStateDir(o.dir)
	if err != nil {
		fmt.Fprintln(r.errOut, "looprun: keeping .loopbreaker/ out of git:", err)
	}
	if added {
		fmt.Fprintf(r.out, "looprun: %s/ added to .git/info/exclude\n", stateDirName)
	}

	r.state, err = openState(o.dir, o.name)
	if err != nil {
		return nil, err
	}
	if err := r.sessions.load(); err != nil {
		return nil, err
	}
	if o.reset {
		if r.shared != nil {
			// The breaker is shared: starting afresh is starting it
			// afresh, first, so that nothing is lost when it cannot be.
			if err := r.shared.ResetShared(); err != nil {
				return nil, fmt.Errorf("-reset: the shared breaker was not reset, nor anything else: %w", err)
			}
			fmt.Fprintln(r.out, "the shared breaker reset: its circuit closed and its counts cleared, for every runner")
		}
		what, err := r.state.reset()
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(r.out, what)
		if err := r.sessions.drop(endReset); err != nil {
			return nil, err
		}
	} else if resumed, err := r.state.load(r.cb); err != nil {
		return nil, err
	} else if resumed {
		r.tests.restore(r.cb.Snapshot())
		s := r.cb.Stats()
		if s.State == loopbreaker.Open || s.State == loopbreaker.HalfOpen && s.ConsecutiveOpens > 0 {
			r.stuck = r.analyze(s.Reason) // for the next iteration's agent, whoever lets it run
		}
		fmt.Fprintf(r.out, "resuming %s: %d iterations so far, circuit %s\n", r.state.path(), s.Iterations, s.State)
		if s := r.cb.Stats(); o.autoReset && s.State == loopbreaker.Open && !s.Reason.Kind.Held() {
			if r.shared != nil {
				fmt.Fprintln(r.out, "auto-reset: not on a shared breaker, where it would release every runner; the circuit stays open")
			} else {
				r.cb.Resume()
				fmt.Fprintf(r.out, "auto-reset: the circuit was open (%s), and is closed without waiting for the probe\n", s.Reason)
			}
		}
	}
	// The protected files as they are now (a -reset included) are what
	// the first iteration is compared with; their copies are written.
	if err := guard.Refresh(); err != nil {
		fmt.Fprintln(r.errOut, "looprun: protected files:", err)
	}
	return r, nil
}

// classify is the breaker's Config.Classify. looprun reads a provider
// limit in the whole end of the output itself (see iterate), and wraps the
// iteration's error in a *loopbreaker.LimitError when it finds one; every
// other error is a failure (or neutral, when cancelled). The default
// classifier would read the error ExtractError picked from the output
// again, and that may be a line of a tool result that only quotes a limit
// message (ralph-claude-code's bug #183).
func classify(err error) loopbreaker.Outcome {
	var le *loopbreaker.LimitError
	switch {
	case errors.As(err, &le) && le.Limit.Kind == loopbreaker.LimitStop:
		return loopbreaker.ProviderStop
	case le != nil:
		return loopbreaker.ProviderLimit
	case errors.Is(err, context.Canceled):
		return loopbreaker.Neutral
	}
	return loopbreaker.Failure
}

// isTerminal reports whether in is a terminal: a character device other
// than the null device, which is one too (cron and CI jobs often read
// from /dev/null, and nobody there answers a prompt).
func isTerminal(in any) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

func (r *runner) save() error { return r.state.save(r.cb) }

// fail stops the loop on an error: it says so on stderr, and the summary
// tells it as the reason the loop stopped.
func (r *runner) fail(msg string) {
	fmt.Fprintln(r.errOut, "looprun:", msg)
	r.stopped = msg
}

// saveOrFail saves the state, or stops the loop on the error.
func (r *runner) saveOrFail() bool {
	if err := r.save(); err != nil {
		r.saveFailed = true
		r.fail("saving the state: " + err.Error())
		return false
	}
	return true
}

// loop runs iterations until the breaker, the budget, a person, a signal
// or the iteration limit stops it, and returns the exit code.
func (r *runner) loop(ctx context.Context) int {
	r.banner()
	fmt.Fprintf(r.out, "%5s  %-8s  %-9s  %-6s  %5s  %7s  %5s  %-6s  %6s  %5s  %6s  %-8s  %s\n",
		"iter", "time", "state", "result", "files", "tests", "score", "risk", "consec", "total", "noprog", "error", "calls")
	for {
		if ctx.Err() != nil {
			r.stopped = "interrupted"
			return exitInterrupted
		}
		if r.o.maxIterations > 0 && r.iterations >= r.o.maxIterations {
			return r.atLimit()
		}
		d := r.waited // the decision of a Wait that let the iteration run
		r.waited = loopbreaker.Decision{}
		if !d.Allow {
			d = r.cb.Check()
		}
		for _, w := range d.Warnings {
			fmt.Fprintln(r.out, "      warning:", w)
		}
		code, stop := 0, false
		if d.Allow {
			code, stop = r.iterate(ctx, d)
		} else {
			code, stop = r.refused(ctx, d) // a person may have resumed
		}
		if stop {
			return code // run saves the state
		}
		// Save every change before the next iteration: a runner killed
		// during it (kill -9, a crash) must not lose a trip or a resume.
		if !r.saveOrFail() {
			return exitError
		}
	}
}

// atLimit ends a loop that has run -max-iterations iterations. The last
// iteration's outcome wins over the limit: if it completed the loop, the
// loop is done, and if it opened the circuit, the loop is tripped (nobody
// is asked: no iteration is left to resume).
func (r *runner) atLimit() int {
	s := r.cb.Stats()
	switch {
	case s.Complete.Kind != loopbreaker.ReasonNone:
		r.stopped = s.Complete.String()
		return exitDone
	case s.State == loopbreaker.Open:
		r.stopped = s.Reason.Detail()
		return exitTripped
	}
	r.stopped = fmt.Sprintf("%d iterations run (-max-iterations)", r.iterations)
	return exitLimit
}

// refused handles a refused Check: done, a provider limit, the spend cap,
// the budget, or an open circuit.
func (r *runner) refused(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	r.refusal = d.Reason
	switch {
	case d.Complete:
		r.stopped = d.Reason.String()
		return exitDone, true
	case d.Reason.Kind == loopbreaker.ReasonProviderLimit:
		return r.providerLimit(ctx, d)
	case d.Reason.Kind == loopbreaker.ReasonProviderStopped:
		return r.providerStopped(ctx, d)
	case d.Reason.Kind == loopbreaker.ReasonSpendCap:
		r.stopped = d.Reason.String()
		return exitBudget, true
	case d.Reason.Kind == loopbreaker.ReasonWindowShare:
		return r.windowShare(ctx, d)
	case d.Reason.Kind == loopbreaker.ReasonCallBudget || d.Reason.Kind == loopbreaker.ReasonHourlySpendCap ||
		d.Reason.Kind == loopbreaker.ReasonBurnRate:
		if !r.o.wait {
			r.stopped = fmt.Sprintf("%s; next call in %s", d.Reason, d.RetryAfter.Round(time.Second))
			return exitBudget, true
		}
		fmt.Fprintf(r.out, "      %s; waiting %s, until %s\n", d.Reason, d.RetryAfter.Round(time.Second),
			r.clock.Now().Add(d.RetryAfter).Format(time.TimeOnly))
		what := "the call budget"
		switch d.Reason.Kind {
		case loopbreaker.ReasonHourlySpendCap:
			what = "the hourly spend cap"
		case loopbreaker.ReasonBurnRate:
			what = "the burn rate"
		}
		return r.waitWithCountdown(ctx, countdown{what: what, until: r.clock.Now().Add(d.RetryAfter)})
	}

	if d.State == loopbreaker.HalfOpen {
		// The probe is in flight elsewhere: this runner records every
		// iteration it runs, and a breaker restored with a probe in
		// flight opens again (probe lost), so only a runner of a shared
		// breaker gets here.
		fmt.Fprintf(r.out, "      circuit %s: another runner has the probe (%s)\n", d.State, d.Reason.Detail())
		if !r.o.wait {
			r.stopped = "another runner has the probe: " + d.Reason.Detail()
			return exitTripped, true
		}
		fmt.Fprintln(r.out, "      waiting for its outcome")
		return r.wait(ctx)
	}
	fmt.Fprintf(r.out, "      circuit %s: %s", d.State, d.Reason.Detail())
	if d.RetryAfter > 0 {
		fmt.Fprintf(r.out, "; probe in %s", d.RetryAfter.Round(time.Second))
	}
	fmt.Fprintln(r.out)
	r.showLastError()
	r.showStuck(d.Reason)
	if r.interactive {
		return r.ask(ctx, d)
	}
	if r.o.wait && d.WaitHelps() {
		return r.waitWithCountdown(ctx, countdown{what: "the probe", until: r.clock.Now().Add(d.RetryAfter)})
	}
	r.stopped = d.Reason.Detail()
	if d.Reason.Kind == loopbreaker.ReasonProtectedFiles {
		return exitProtected, true
	}
	return exitTripped, true
}

// showLastError shows the error of the last failed iteration, at most
// maxErrorLines of it, and where its whole output is: the iteration's
// log. In a run that has seen no failure yet (one that resumed an open
// circuit), the log of the last iteration, if it is there.
func (r *runner) showLastError() {
	last := r.last
	if last.text == "" {
		n := r.cb.Stats().Iterations
		if _, err := os.Stat(r.logs.path(n)); n == 0 || err != nil {
			return
		}
		fmt.Fprintf(r.out, "      output of iteration %d: %s\n", n, r.logs.path(n))
		return
	}
	from := "the command"
	if last.from == "check" {
		from = "the check, " + r.o.check
	}
	fmt.Fprintf(r.out, "      last error (iteration %d, from %s):\n", last.iteration, from)
	for _, line := range strings.Split(last.text, "\n") {
		fmt.Fprintf(r.out, "        %s\n", line)
	}
	fmt.Fprintf(r.out, "      its output: %s\n", last.log)
}

// choose asks the person question and returns the answer, trimmed and in
// lower case: onEnd when the input has ended. It is not ok when ctx ended
// first; r.stopped then says the loop was interrupted.
func (r *runner) choose(ctx context.Context, question, onEnd string) (answer string, ok bool) {
	fmt.Fprint(r.out, question)
	line, err := r.readAnswer(ctx)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(r.out)
		r.stopped = "interrupted"
		return "", false
	case err != nil:
		fmt.Fprintln(r.out, "(the input ended)")
		line = onEnd
	}
	return strings.ToLower(strings.TrimSpace(line)), true
}

// ask offers the choices of GSD's exit.sh pause menu to the person at the
// terminal.
func (r *runner) ask(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	for {
		// With the input ended nobody is left to ask: abort, as GSD's
		// exit.sh does without a terminal.
		answer, ok := r.choose(ctx, "      [r]esume, [s]kip, [w]ait for the probe, [a]bort? ", "abort")
		if !ok {
			return exitInterrupted, true
		}
		switch {
		case answer == "r" || answer == "resume":
			r.cb.Resume()
			fmt.Fprintln(r.out, "      resumed: counters reset, circuit closed")
			return 0, false
		case answer == "s" || answer == "skip":
			r.cb.Skip()
			fmt.Fprintln(r.out, "      skipped: the stuck task is left behind, circuit closed")
			return 0, false
		case answer == "w" || answer == "wait":
			if d.RetryAfter <= 0 {
				fmt.Fprintln(r.out, "      no cooldown ends this; resume, skip or abort")
				continue
			}
			return r.waitWithCountdown(ctx, countdown{what: "the probe", until: r.clock.Now().Add(d.RetryAfter)})
		case answer == "a" || answer == "abort":
			r.cb.Abort()
			r.stopped = "aborted: " + d.Reason.String()
			return exitAborted, true
		}
	}
}

// readAnswer returns the person's next line, or io.EOF when the input has
// ended. A read cannot be interrupted, so a goroutine reads the lines and
// readAnswer waits for one or for ctx: Ctrl+C at the prompt stops the loop
// at once. The goroutine lives until the input ends.
func (r *runner) readAnswer(ctx context.Context) (string, error) {
	r.startReading()
	select {
	case line, ok := <-r.answers:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// clockTime writes t as the runner's clock shows times, in its zone.
func (r *runner) clockTime(t time.Time) string {
	return t.In(r.clock.Now().Location()).Format("2006-01-02 15:04:05 MST")
}

// startReading starts the goroutine that reads the person's lines, once.
func (r *runner) startReading() {
	if r.answers != nil {
		return
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r.in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	r.answers = lines
}

// endSession drops the session when the loop stopped on Ctrl+C or
// completed: neither conversation is the one to go on with. (One whose
// circuit opened is dropped as it opens.)
func (r *runner) endSession(code int) {
	end := ""
	switch {
	case code == exitInterrupted:
		end = endInterrupted
	case code == exitDone && r.cb.Stats().Complete.Kind != loopbreaker.ReasonNone:
		end = endComplete
	default:
		return
	}
	if err := r.sessions.drop(end); err != nil {
		fmt.Fprintln(r.errOut, "looprun: session:", err)
	}
}

// wait waits, on the runner's clock, until the breaker lets the next
// iteration run (CircuitBreaker.Wait), or until ctx is done. A refusal
// that no waiting ends goes back to the loop, which handles it.
func (r *runner) wait(ctx context.Context) (code int, stop bool) {
	d, err := r.cb.Wait(ctx)
	if ctx.Err() != nil {
		r.stopped = "interrupted"
		return exitInterrupted, true
	}
	if err == nil {
		r.waited = d
	}
	return 0, false
}

// summary prints how the loop ended and what it saw.
func (r *runner) summary(code int, saveErr error) {
	s := r.cb.Stats()
	fmt.Fprintln(r.out)
	fmt.Fprintf(r.out, "stopped: %s (exit %d)\n", r.stopped, code)
	fmt.Fprintf(r.out, "iterations: %d in this run, %d in all (%d neutral); failures: %d; circuit opened %d times; state %s\n",
		r.iterations, s.Iterations, s.NeutralIterations, s.Failures.Total, s.Opens, stateName(s))
	if s.Budget.Limit > 0 {
		fmt.Fprintf(r.out, "calls: %d of %d in the last hour\n", s.Budget.Used, s.Budget.Limit)
	}
	if sp := s.Spend; sp.Total != (loopbreaker.Usage{}) || sp.MaxCostUSD > 0 || sp.MaxTokens > 0 {
		fmt.Fprintf(r.out, "spent: $%.4f and %d tokens", sp.Total.CostUSD, sp.Total.Tokens())
		if sp.MaxCostUSD > 0 {
			fmt.Fprintf(r.out, "; $%.4f of -max-cost $%.2f left", sp.CostLeftUSD(), sp.MaxCostUSD)
		}
		if sp.MaxTokens > 0 {
			fmt.Fprintf(r.out, "; %d of -max-tokens %d left", sp.TokensLeft(), sp.MaxTokens)
		}
		fmt.Fprintln(r.out)
	}
	if s.LimitedIterations > 0 {
		fmt.Fprintf(r.out, "runs refused by the provider: %d (counted as no iteration)\n", s.LimitedIterations)
	}
	if id, _ := r.sessions.offer(); id != "" {
		fmt.Fprintf(r.out, "session: %s, offered to the next iteration\n", id)
	}
	if saveErr != nil {
		fmt.Fprintf(r.out, "state NOT saved in %s: %v\n", r.state.path(), saveErr)
	} else {
		fmt.Fprintf(r.out, "state saved in %s\n", r.state.path())
	}
	if r.iterations > 0 {
		fmt.Fprintf(r.out, "output of each iteration in %s%c\n", r.logs.dir, filepath.Separator)
	}
	if r.last.text != "" && code != exitDone {
		fmt.Fprintf(r.out, "last error: iteration %d, from the %s; its output: %s\n", r.last.iteration, r.last.from, r.last.log)
	}
	switch {
	case code == exitTripped && s.RetryAfter > 0:
		fmt.Fprintf(r.out, "the circuit is open: run again after %s for the probe, with -wait to wait here, or with -reset to start afresh%s\n",
			s.RetryAfter.Round(time.Second), r.resetScope())
	case code == exitTripped && s.State == loopbreaker.Open:
		fmt.Fprintln(r.out, "the circuit is held open, and no cooldown ends that: run again at a terminal to resume or skip, or with -reset to start afresh"+r.resetScope())
	case code == exitProtected:
		fmt.Fprintln(r.out, "the circuit is held open for the protected files: look at what the agent did (its log), then run again at a terminal to resume or skip, or with -reset to start afresh"+r.resetScope())
	case code == exitProvider && s.ProviderLimit.Kind == loopbreaker.ReasonProviderStopped:
		fmt.Fprintln(r.out, "the provider stopped the loop, and no waiting ends that: deal with it (credit, billing, the admin's cap), then run again at a terminal to resume, or with -reset to start afresh"+r.resetScope())
	case code == exitProvider && !s.ProviderLimitUntil.IsZero():
		fmt.Fprintf(r.out, "the provider limit lifts at %s: run again then, or with a longer -limit-wait to wait here\n", r.clockTime(s.ProviderLimitUntil))
	}
	r.lostSummary()
	if len(s.Failures.Counts) == 0 {
		return
	}
	fps := make([]string, 0, len(s.Failures.Counts))
	for fp := range s.Failures.Counts {
		fps = append(fps, fp)
	}
	sort.Slice(fps, func(i, j int) bool {
		a, b := s.Failures.Counts[fps[i]], s.Failures.Counts[fps[j]]
		return a > b || a == b && fps[i] < fps[j]
	})
	fmt.Fprintf(r.out, "\n%-8s  %5s  %s\n", "error", "seen", "first seen as")
	for _, fp := range fps {
		sample := r.errorSample(fp, s)
		if sample == "" {
			sample = "(before this run)"
		}
		fmt.Fprintf(r.out, "%-8s  %5d  %s\n", fp, s.Failures.Counts[fp], sample)
	}
}

// resetScope says, after "-reset to start afresh", what else -reset
// starts afresh: the shared breaker, for every runner.
func (r *runner) resetScope() string {
	if r.shared == nil {
		return ""
	}
	return " (the shared breaker too, for every runner)"
}

// firstLine returns the first line of s, at most 100 bytes of it.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}
