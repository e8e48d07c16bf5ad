// Package looprun is the looprun command, as a function: Main runs it
// with the process's arguments and standard streams, on the process's own
// breaker or on one that Options supplies (a fleet's, shared on Redis:
// the command's main package adds the fleet's flags). The command's
// documentation says what it does.
package looprun

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/timer"
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
	r.endWatch(code)
	if c, ok := r.cb.(io.Closer); ok {
		_ = c.Close() // the loop is over: nothing is left to tell it
	}
	return code
}
