package looprun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start is when the in-process tests' clocks start: 1,800,000,000 seconds
// after 1970, 2027-01-15 08:00:00 UTC. A limit the scripts print with the
// Unix time 1800007200 lifts two hours later.
var start = time.Unix(1_800_000_000, 0)

// sleepRequest is one Sleep of the runner on a stepClock: it returns when
// the test wakes it.
type sleepRequest struct {
	d    time.Duration
	wake chan struct{}
}

// stepClock is a clock whose Sleep blocks until the test moves the time on
// (step): the runner sleeps only as far, and as often, as the test lets
// it, so that a prompt waiting for an answer and a clock running out are
// told apart by the test, not by a race.
type stepClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps chan sleepRequest
	slept  time.Duration
}

func newStepClock() *stepClock {
	return &stepClock{now: start, sleeps: make(chan sleepRequest)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	req := sleepRequest{d: d, wake: make(chan struct{})}
	select {
	case c.sleeps <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-req.wake
	return ctx.Err()
}

// step takes the runner's next Sleep, moves the time on by it, and wakes
// the runner; false when the runner ended instead (done is closed).
func (c *stepClock) step(t *testing.T, done <-chan struct{}) bool {
	t.Helper()
	deadline := time.NewTimer(sessionBound)
	defer deadline.Stop()
	select {
	case req := <-c.sleeps:
		c.mu.Lock()
		c.now = c.now.Add(req.d)
		c.slept += req.d
		c.mu.Unlock()
		close(req.wake)
		return true
	case <-done:
		return false
	case <-deadline.C:
		t.Fatal("looprun neither sleeps nor ends")
		return false
	}
}

// watchedOutput is looprun's output as a test sees it while looprun runs.
type watchedOutput struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // signalled after each write
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	select {
	case w.written <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until text appears in the output.
func (w *watchedOutput) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.NewTimer(sessionBound)
	defer deadline.Stop()
	for !strings.Contains(w.String(), text) {
		select {
		case <-w.written:
		case <-deadline.C:
			t.Fatalf("looprun did not print %q:\n%s", text, w.String())
		}
	}
}

// running is looprun run in this process, on a clock of the test's.
type running struct {
	out    *watchedOutput
	done   chan struct{} // closed when it has ended
	code   int           // its exit code, once done is closed
	stdin  *io.PipeWriter
	cancel context.CancelFunc // Ctrl+C
}

// startOnClock runs looprun in this process on the repository's script
// with flags, with time from clk and a stdin the test writes to.
func (r *repo) startOnClock(t *testing.T, clk clock, flags ...string) *running {
	t.Helper()
	t.Setenv("COUNTER", r.counter)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	run := &running{out: &watchedOutput{written: make(chan struct{}, 1)}, done: make(chan struct{}), stdin: pw, cancel: cancel}
	args := append([]string{"-dir", r.dir}, flags...)
	go func() {
		defer close(run.done)
		run.code = runLooprun(ctx, clk, append(args, "--", "./agent.sh"), pr, run.out)
	}()
	t.Cleanup(func() {
		cancel()
		pw.Close()
	})
	return run
}

// runLooprun is run, with both outputs to out.
func runLooprun(ctx context.Context, clk clock, args []string, stdin io.Reader, out io.Writer) int {
	return run(ctx, clk, args, stdin, out, out)
}

// exit waits for looprun to end and returns its exit code, taking every
// Sleep meanwhile (the time runs on).
func (run *running) exit(t *testing.T, clk *stepClock) int {
	t.Helper()
	for clk.step(t, run.done) {
	}
	return run.code
}

// wait waits for looprun to end without moving its clock, and returns
// its exit code.
func (run *running) wait(t *testing.T) int {
	t.Helper()
	deadline := time.NewTimer(sessionBound)
	defer deadline.Stop()
	select {
	case <-run.done:
		return run.code
	case <-deadline.C:
		t.Fatalf("looprun does not end:\n%s", run.out.String())
		return 0
	}
}

// limitScript fails its second run on a provider limit that lifts two
// hours after start, and completes on its fourth run (the third
// iteration).
const limitScript = `if [ $n -eq 2 ]; then echo "Working on the plan."; echo "Claude AI usage limit reached|1800007200"; exit 1; fi
echo "step $n" > "work_$n.txt"
if [ $n -ge 3 ]; then echo "EXIT_SIGNAL: true"; fi
`

// A limit text with a reset time, and nobody at the terminal: looprun
// shows when it lifts, waits it out with a countdown, and runs the same
// iteration again; the limited run counts as neither an iteration nor a
// failure.
func TestLimitWithAResetIsWaitedOutAndTheIterationRunsAgain(t *testing.T) {
	r := newRepo(t, limitScript)
	clk := loopbreakertest.NewClock(start)
	out, code := r.runOnClock(t, clk, "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Equal(t, 4, r.runs(t))

	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+LIMIT\s`, out, "the limited run")
	assert.Regexp(t, `(?m)^\s+2\s+\S+\s+CLOSED\s+ok\s`, out, "the same iteration, again")
	assert.Contains(t, out, "Provider limit: Claude AI usage limit reached (resets 2027-01-15 10:00 ")
	assert.Contains(t, out, "the limit lifts at ")
	assert.Contains(t, out, ", in 2h0m0s\n")
	assert.Contains(t, out, "waiting for the provider limit: 2h0m0s left\n")
	assert.Contains(t, out, "waiting for the provider limit: 15m0s left\n", "a countdown line every 15 minutes")
	assert.Contains(t, out, "the limit has lifted: running the iteration again")
	assert.Equal(t, 2*time.Hour, sum(clk.Slept()))
	assert.Contains(t, out, "iterations: 3 in this run, 3 in all (0 neutral); failures: 0;")
	assert.Contains(t, out, "runs refused by the provider: 1 (counted as no iteration)")

	log, err := os.ReadFile(filepath.Join(r.dir, stateDirName, logsDirName, "loop-2.log"))
	require.NoError(t, err)
	assert.Equal(t, "Working on the plan.\nClaude AI usage limit reached|1800007200\n\n[looprun: the provider limit has lifted; iteration 2 runs again]\nEXIT_SIGNAL: true\n", string(log),
		"the log of the iteration keeps both runs")
}

func sum(ds []time.Duration) time.Duration {
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	return total
}

// Without a terminal, a limit that lifts later than -limit-wait allows (0:
// never waits) stops looprun with its own exit code; started again before
// the reset, it stops at once, without running the script.
func TestLimitLongerThanLimitWaitStopsWithExitProvider(t *testing.T) {
	for _, tc := range []struct {
		limitWait, says string
	}{
		{"1h", "later than -limit-wait (1h0m0s) allows"},
		{"0", "and -limit-wait 0 never waits"},
	} {
		r := newRepo(t, limitScript)
		out, code := r.runOnClock(t, loopbreakertest.NewClock(start), "-interactive", "no", "-limit-wait", tc.limitWait)
		assert.Equal(t, exitProvider, code, out)
		assert.Contains(t, out, "stopped: Provider limit: Claude AI usage limit reached")
		assert.Contains(t, out, "it lifts in 2h0m0s, "+tc.says+" (exit 8)")
		assert.Contains(t, out, "the provider limit lifts at 2027-01-15 ")
		assert.Equal(t, 2, r.runs(t))

		out, code = r.runOnClock(t, loopbreakertest.NewClock(start.Add(30*time.Minute)), "-interactive", "no", "-limit-wait", tc.limitWait)
		assert.Equal(t, exitProvider, code, out)
		assert.Contains(t, out, ", in 1h30m0s\n", "the limit was saved")
		assert.Equal(t, 2, r.runs(t), "the script did not run again")

		out, code = r.runOnClock(t, loopbreakertest.NewClock(start.Add(2*time.Hour)), "-interactive", "no", "-limit-wait", tc.limitWait)
		assert.Equal(t, exitDone, code, out)
		assert.Equal(t, 4, r.runs(t), "after the reset the same iteration runs again")
	}
}

// A limit no waiting ends stops looprun with exit code 7, run after run,
// until a person at the terminal resumes once it is dealt with.
func TestProviderStopStopsUntilAPersonResumes(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 1 ]; then echo "Your usage allocation has been disabled by your admin"; exit 1; fi
echo "step $n" > "work_$n.txt"
echo "EXIT_SIGNAL: true"
`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitProvider, code, out)
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+STOP\s`, out)
	assert.Contains(t, out, "stopped: Provider stopped the loop (no waiting ends this): Your usage allocation has been disabled (exit 8)")
	assert.Contains(t, out, "deal with it (credit, billing, the admin's cap), then run again at a terminal to resume")

	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitProvider, code, out)
	assert.Equal(t, 1, r.runs(t), "the script did not run again")

	out, code = r.looprun(t, "r\n", "-interactive", "yes")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "[r]esume (it is dealt with), or [t]erminate? ")
	assert.Equal(t, 3, r.runs(t))
}

// costScript prints Claude Code's result event, each run costing $0.40
// and 3,000 tokens.
const costScript = `echo "step $n" > "work_$n.txt"
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"step %s done","session_id":"s-%s","total_cost_usd":0.4,"usage":{"input_tokens":1000,"cache_creation_input_tokens":500,"cache_read_input_tokens":1000,"output_tokens":500},"permission_denials":[]}\n' $n $n
`

// Cost past the cap: looprun warns from 80%, then stops with exit code 5,
// and the spend survives a restart.
func TestCostPastTheCapStops(t *testing.T) {
	r := newRepo(t, costScript)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-cost", "1")
	assert.Equal(t, exitBudget, code, out)
	assert.Equal(t, 3, r.runs(t), "$0.40, $0.80, $1.20")
	assert.Contains(t, out, "warning: Spend 80% of the cap: $0.80 of $1.00 over the loop's life, $0.20 left")
	assert.Contains(t, out, "stopped: Spend cap reached: $1.20 over the loop's life (cap: $1.00) (exit 5)")
	assert.Contains(t, out, "spent: $1.2000 and 9000 tokens; $0.0000 of -max-cost $1.00 left")
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+ok\s.*\(\S+, 2 turns, \$0\.4000, 3000 tokens\)$`, out, "the status line shows the run's turns and spend")
	assert.Contains(t, out, "state CLOSED", "a spend cap is not a trip")

	out, code = r.looprun(t, "", "-interactive", "no", "-max-cost", "1")
	assert.Equal(t, exitBudget, code, out)
	assert.Equal(t, 3, r.runs(t), "the spend was saved: the script did not run again")

	r = newRepo(t, costScript)
	out, code = r.looprun(t, "", "-interactive", "no", "-max-tokens", "5000")
	assert.Equal(t, exitBudget, code, out)
	assert.Contains(t, out, "stopped: Spend cap reached: 6000 tokens over the loop's life (cap: 5000)")
	assert.Equal(t, 2, r.runs(t))
}

// At a terminal, looprun offers to wait or to terminate, and terminates
// when nobody answers within 30 seconds of its clock.
func TestLimitPromptTerminatesWithoutAnAnswer(t *testing.T) {
	r := newRepo(t, limitScript)
	clk := newStepClock()
	run := r.startOnClock(t, clk, "-interactive", "yes")
	run.out.waitFor(t, "or [t]erminate? (terminating in 30s) ")
	code := run.exit(t, clk)
	out := run.out.String()
	assert.Equal(t, exitProvider, code, out)
	assert.Contains(t, out, "[w]ait until ")
	assert.Contains(t, out, "no answer in 30s: terminating")
	assert.Contains(t, out, "stopped: Provider limit: Claude AI usage limit reached")
	assert.Contains(t, out, "nobody answered within 30s (exit 8)")
	assert.Equal(t, 30*time.Second, clk.slept, "the 30 seconds ran on the runner's clock")
	assert.Equal(t, 2, r.runs(t))
}

// At a terminal, "w" waits the limit out, and the same iteration runs
// again; "t" terminates at once.
func TestLimitPromptWaitsOrTerminatesAsThePersonSays(t *testing.T) {
	r := newRepo(t, limitScript)
	clk := newStepClock()
	run := r.startOnClock(t, clk, "-interactive", "yes")
	run.out.waitFor(t, "or [t]erminate? (terminating in 30s) ")
	_, err := io.WriteString(run.stdin, "maybe\nw\n")
	require.NoError(t, err)
	run.out.waitFor(t, "waiting for the provider limit: 2h0m0s left")
	assert.Equal(t, 2, strings.Count(run.out.String(), "or [t]erminate?"), "an answer it does not know is asked again")
	code := run.exit(t, clk)
	out := run.out.String()
	assert.Equal(t, exitDone, code, out)
	assert.Equal(t, 2*time.Hour, clk.slept, "the wait, and none of the 30 seconds")
	assert.Contains(t, out, "the limit has lifted: running the iteration again")
	assert.Equal(t, 4, r.runs(t))

	r = newRepo(t, limitScript)
	clk = newStepClock()
	run = r.startOnClock(t, clk, "-interactive", "yes")
	run.out.waitFor(t, "or [t]erminate? ")
	_, err = io.WriteString(run.stdin, "t\n")
	require.NoError(t, err)
	code = run.wait(t)
	assert.Equal(t, exitProvider, code, run.out.String())
	assert.Contains(t, run.out.String(), "; terminated (exit 8)")
	assert.Zero(t, clk.slept)
}

// Ctrl+C while looprun waits out a limit stops it at once with exit code
// 130; the limit is saved, and the session dropped.
func TestInterruptWhileWaitingOutALimit(t *testing.T) {
	r := newRepo(t, `if [ $n -eq 2 ]; then echo "Claude AI usage limit reached|1800007200"; exit 1; fi
echo "step $n" > "work_$n.txt"
printf '{"type":"result","is_error":false,"session_id":"s-%s"}\n' $n
`)
	clk := newStepClock()
	run := r.startOnClock(t, clk, "-interactive", "no")
	run.out.waitFor(t, "waiting for the provider limit: 2h0m0s left")
	require.True(t, clk.step(t, run.done), "15 minutes pass")
	run.out.waitFor(t, "waiting for the provider limit: 1h45m0s left")
	run.cancel()
	code := run.exit(t, clk)
	out := run.out.String()
	assert.Equal(t, exitInterrupted, code, out)
	assert.Contains(t, out, "stopped: interrupted")
	assert.Equal(t, 2, r.runs(t))

	history := readHistory(t, filepath.Join(r.dir, stateDirName, "loop.sessions.jsonl"))
	require.Len(t, history, 1)
	assert.Equal(t, "s-1", history[0].ID)
	assert.Equal(t, endInterrupted, history[0].End)

	out, code = r.runOnClock(t, loopbreakertest.NewClock(start.Add(time.Hour)), "-interactive", "no", "-limit-wait", "0")
	assert.Equal(t, exitProvider, code, out)
	assert.Contains(t, out, ", in 1h0m0s\n", "the limit was saved")
}

// Claude Code's stream-json: a rejected rate_limit_event is a limit until
// its resetsAt; a tool result that only quotes a limit message is not one
// (ralph-claude-code's bug #183), and the run is an ordinary failure.
func TestClaudeStreamJSONLimits(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"claude-stream-limit.jsonl", "claude-stream-quoted-limit.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}

	r := newRepo(t, fmt.Sprintf(`if [ $n -eq 1 ]; then cat %q; exit 1; fi
echo "step $n" > "work_$n.txt"; echo "EXIT_SIGNAL: true"
`, filepath.Join(dir, "claude-stream-limit.jsonl")))
	clk := loopbreakertest.NewClock(start)
	out, code := r.runOnClock(t, clk, "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+LIMIT\s.*\(\S+, 1 turn, \$0\.0041, 332 tokens\)`, out, "the limited run's spend counts")
	assert.Contains(t, out, ", in 1h0m0s\n")
	assert.Equal(t, time.Hour, sum(clk.Slept()))

	r = newRepo(t, fmt.Sprintf("cat %q\nexit 1\n", filepath.Join(dir, "claude-stream-quoted-limit.jsonl")))
	out, code = r.runOnClock(t, loopbreakertest.NewClock(start), "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.NotContains(t, out, "LIMIT")
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
}

// is_error in Claude Code's result is the outcome, whatever the exit
// code; its permission denials feed the denial signal.
func TestClaudeResultIsTheOutcome(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
printf '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"","session_id":"s-1"}\n'
`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
	assert.Contains(t, out, "error_during_execution", "the error the result event named")

	stream, err := os.ReadFile(filepath.Join("testdata", "claude-stream.jsonl"))
	require.NoError(t, err)
	fixture := filepath.Join(t.TempDir(), "stream.jsonl")
	require.NoError(t, os.WriteFile(fixture, stream, 0o644))
	r = newRepo(t, fmt.Sprintf("echo \"step $n\" > \"work_$n.txt\"\ncat %q\n", fixture))
	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "Permission denied in 3 consecutive iterations (threshold: 3)")
}

// The spend and limit flags are checked: a negative or non-numeric cap or
// wait is a usage error.
func TestSpendAndLimitFlagsAreChecked(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-max-cost", "-1"},
		{"-max-cost", "NaN"},
		{"-max-cost", "Inf"},
		{"-max-tokens", "-5"},
		{"-limit-wait", "-1s"},
	} {
		out, code := runBin(t, dir, "", "", args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, out)
	}
	out, code := runBin(t, dir, "", "", "-h")
	assert.Equal(t, exitDone, code)
	for _, want := range []string{"-max-cost", "-max-tokens", "-limit-wait", "[24h]"} {
		assert.Contains(t, out, want)
	}
}
