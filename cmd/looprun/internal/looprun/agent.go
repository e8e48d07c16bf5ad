package looprun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// result is what one run of the agent gave; its output went to the
// writer run was given.
type result struct {
	exitCode int  // -1 when the command could not run to an exit
	timedOut bool // the run hit -timeout
	// stalled is how long the run had printed nothing when -stall ended
	// it; 0 when it did not.
	stalled time.Duration
	// signal is the signal that ended the command, as "signal 9
	// (SIGKILL)"; "" when it exited (or looprun's timeout killed it).
	signal string
	// files is the simulated agent's own count of changed files; commands
	// are measured from the working tree instead.
	files int
}

// loopAgent is the loop's agent: it runs one iteration.
type loopAgent interface {
	// run runs the iteration, writing its output (stdout and stderr) to
	// out.
	run(ctx context.Context, iteration int, out io.Writer) (result, error)
	name() string
}

// commandAgent runs a command, feeding it the prompt file on stdin when
// there is one, as in `cat PROMPT.md | agent`: read afresh each
// iteration, so that a person (or the agent) may change it while the loop
// runs.
type commandAgent struct {
	argv    []string
	dir     string
	prompt  string // the prompt file's path
	timeout time.Duration
	stall   time.Duration // -stall; 0: never
	// session is the session offered to the next run ("" for none): in
	// the environment (sessionEnv), and in place of sessionPlaceholder in
	// argv.
	session string
	// notes are what the agent is told (see notes.go): in place of
	// notesPlaceholder in the prompt, and in notesFile, whose path is in
	// the environment (notesEnv); "" for none.
	notes, notesFile string
	// events is the file looprun's hooks in the agent's session append
	// their events to, in the environment (eventsEnv); "" for none.
	events string
}

func (a *commandAgent) name() string { return strings.Join(a.argv, " ") }

// outputDelay is how long, once the command has ended and what it started
// has been killed, the rest of its output may take: a process that still
// holds the output open (on systems where looprun cannot find the
// processes that left the command's process group) is not waited for
// longer.
const outputDelay = time.Second

// run runs the command once, writing its output to out as it comes. A
// cancelled ctx, a prompt file that cannot be read and a command that
// cannot start are errors; a failing or timed-out command is a result.
func (a *commandAgent) run(ctx context.Context, _ int, out io.Writer) (result, error) {
	prompt, err := os.ReadFile(a.prompt)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return result{}, fmt.Errorf("read the prompt: %w", err)
	}
	prompt = bytes.ReplaceAll(prompt, []byte(notesPlaceholder), []byte(a.notes))
	env := append(os.Environ(), sessionEnv+"="+a.session, notesEnv+"="+a.notesFile, eventsEnv+"="+a.events)
	return runCommand(ctx, withSession(a.argv, a.session), a.dir, prompt, env, limits{timeout: a.timeout, stall: a.stall}, out)
}

// limits are how long a command may run: timeout in all, and stall
// without output (0: any time).
type limits struct {
	timeout, stall time.Duration
}

// errStalled is why a run that printed nothing for its stall limit was
// ended.
var errStalled = errors.New("no output")

// outputClock is when a command last wrote its output (stdout or
// stderr): every write counts, a line of JSON events as much as a
// progress dot. It is safe for concurrent use.
type outputClock struct {
	w    io.Writer
	mu   sync.Mutex
	last time.Time
}

func (c *outputClock) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
	return c.w.Write(p)
}

// quiet returns how long the command has written nothing, at now.
func (c *outputClock) quiet(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Sub(c.last)
}

// watchStall ends the run (cancel, with errStalled) once out has been
// quiet for stall, and returns when done closes.
func watchStall(out *outputClock, stall time.Duration, done <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTimer(stall)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			quiet := out.quiet(now)
			if quiet >= stall {
				cancel(errStalled)
				return
			}
			t.Reset(stall - quiet)
		}
	}
}

// runCommand runs argv in dir with stdin and the environment env, and a
// time limit, writing its output to out as it comes. A cancelled ctx and
// a command that cannot start are errors; a failing or timed-out command
// is a result. When the command has ended, whatever it started that is
// still running is killed (stopLeftovers).
func runCommand(ctx context.Context, argv []string, dir string, stdin []byte, env []string, lim limits, out io.Writer) (result, error) {
	timeoutCtx, cancel := context.WithTimeout(ctx, lim.timeout)
	defer cancel()
	runCtx, cancelStalled := context.WithCancelCause(timeoutCtx)
	defer cancelStalled(nil)
	// The output pipe is looprun's own, not exec.Cmd's: Wait returns when
	// the command exits, and the processes it left running, which may
	// hold the pipe open, are killed before the rest of the output is
	// read.
	pr, pw, err := os.Pipe()
	if err != nil {
		return result{}, err
	}
	defer pr.Close()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = pw, pw
	// After a timeout or Ctrl+C, the command has this long to stop before
	// it is killed; after it exits, its stdin may take this long to close.
	cmd.WaitDelay = time.Second
	ownProcessGroup(cmd, func() bool { return ctx.Err() != nil })
	err = cmd.Start()
	pw.Close()
	if err != nil {
		if ctx.Err() != nil {
			return result{exitCode: -1}, ctx.Err()
		}
		return result{exitCode: -1}, fmt.Errorf("run %s: %w", argv[0], err) // not found, not executable
	}
	exited := make(chan struct{})
	watched := make(chan struct{})
	if lim.stall > 0 {
		clock := &outputClock{w: out, last: time.Now()}
		out = clock
		go func() {
			defer close(watched)
			watchStall(clock, lim.stall, exited, cancelStalled)
		}()
	} else {
		close(watched)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr) // ends at the end of the output, or at the deadline below
	}()
	err = cmd.Wait()
	close(exited) // what it printed after this is no stall's business
	<-watched
	stopLeftovers(cmd) // nothing it started may run on
	if pr.SetReadDeadline(time.Now().Add(outputDelay)) != nil {
		// A pipe without deadlines: close it instead, as exec.Cmd does.
		t := time.AfterFunc(outputDelay, func() { pr.Close() })
		defer t.Stop()
	}
	<-copied

	res := result{exitCode: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if errors.Is(context.Cause(runCtx), errStalled) {
		res.stalled = lim.stall
		return res, nil
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.timedOut = true
		return res, nil
	}
	res.signal = endedBySignal(cmd.ProcessState)
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.As(err, &exitErr):
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited, but its stdin stayed open until WaitDelay:
		// the exit status and the output are the iteration's.
	default:
		return res, fmt.Errorf("run %s: %w", argv[0], err)
	}
	return res, nil
}

// simulatedAgent is the built-in agent of a fresh machine: it works for a
// few iterations, then runs into the same failing test again and again.
type simulatedAgent struct{}

func (simulatedAgent) name() string { return "the simulated agent" }

func (simulatedAgent) run(ctx context.Context, iteration int, out io.Writer) (result, error) {
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	switch {
	case iteration <= 3:
		fmt.Fprintf(out, "Implemented step %d of the login flow.\nok  \texample.com/app\t0.%03ds\n", iteration, 100+iteration*37)
		return result{files: 2}, nil
	case iteration == 4:
		fmt.Fprint(out, "Refactored the session store.\n")
		return result{files: 1}, nil
	}
	line := 40 + iteration*3 // the agent keeps moving code around
	fmt.Fprintf(out, `Trying another fix for the session test.
--- FAIL: TestSessionExpiry (0.%02ds)
    session_test.go:%d: expected session to expire after 30m, still valid at 2026-01-19T09:%02d:00Z
FAIL
FAIL	example.com/app/session	0.%03ds
`, iteration%100, line, iteration%60, 200+iteration)
	return result{exitCode: 1, files: 1}, nil
}
