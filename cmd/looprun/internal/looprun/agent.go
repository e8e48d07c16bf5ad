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
	"time"
)

// result is what one run of the agent gave; its output went to the
// writer run was given.
type result struct {
	exitCode int  // -1 when the command could not run to an exit
	timedOut bool // the run hit -timeout
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
	return runCommand(ctx, withSession(a.argv, a.session), a.dir, prompt, env, a.timeout, out)
}

// runCommand runs argv in dir with stdin and the environment env, and a
// time limit, writing its output to out as it comes. A cancelled ctx and
// a command that cannot start are errors; a failing or timed-out command
// is a result. When the command has ended, whatever it started that is
// still running is killed (stopLeftovers).
func runCommand(ctx context.Context, argv []string, dir string, stdin []byte, env []string, timeout time.Duration, out io.Writer) (result, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr) // ends at the end of the output, or at the deadline below
	}()
	err = cmd.Wait()
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
