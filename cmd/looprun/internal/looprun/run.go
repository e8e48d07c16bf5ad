package looprun

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/protect"
)

// runner is one loop of an agent under a breaker.
type runner struct {
	o           *options
	cb          Breaker
	shared      SharedBreaker // cb, when other runners share it; else nil
	about       string        // a line about the breaker for the banner, when it is not the process's own
	guard       *protect.Guard
	clock       clock
	state       *stateFile
	agent       loopAgent
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
	iterations   int    // run by this process
	watch        *watch // the journal, the notifications, -serve
	version      string // looprun's, for the journal and the metrics
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
	r.version = moduleVersion()
	if err := r.startWatch(); err != nil {
		return nil, err
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
		r.watchDecision(d)
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
