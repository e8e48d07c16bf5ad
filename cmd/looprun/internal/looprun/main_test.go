package looprun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// looprunBin is the runner, built once for the end-to-end tests.
var looprunBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "looprun-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	looprunBin = filepath.Join(dir, "looprun")
	build := exec.Command("go", "build", "-o", looprunBin, "../..")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building looprun:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repo is a temporary git repository with a script in it, and a counter
// outside it that the script uses to tell its iterations apart.
type repo struct {
	dir     string
	counter string
}

func newRepo(t *testing.T, script string) *repo {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripts are POSIX sh")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed") // .ci/run installs it
	}
	r := &repo{dir: t.TempDir(), counter: filepath.Join(t.TempDir(), "n")}
	r.git(t, "init", "-q")
	r.git(t, "config", "user.email", "looprun@example.com")
	r.git(t, "config", "user.name", "looprun test")
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "README.md"), []byte("# project\n"), 0o644))
	writeScript(t, filepath.Join(r.dir, "agent.sh"), script)
	r.git(t, "add", ".")
	r.git(t, "commit", "-qm", "start")
	return r
}

// writeScript writes an agent script: it counts its runs in $COUNTER, sets
// n to this run's number, and goes on with body.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	full := "#!/bin/sh\nn=$(cat \"$COUNTER\" 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > \"$COUNTER\"\n" + body
	require.NoError(t, os.WriteFile(path, []byte(full), 0o755))
}

func (r *repo) git(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// runs returns how many times the script ran.
func (r *repo) runs(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(r.counter)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	var n int
	_, err = fmt.Sscan(string(data), &n)
	require.NoError(t, err)
	return n
}

// command is the runner on the repository's script with flags, with env
// added to the environment.
func (r *repo) command(env []string, flags ...string) *exec.Cmd {
	args := append([]string{"-dir", r.dir}, flags...)
	cmd := exec.Command(looprunBin, append(args, "--", "./agent.sh")...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), "COUNTER="+r.counter), env...)
	return cmd
}

// looprun runs the runner on the repository's script with flags, feeding
// it stdin, and returns its output and exit code.
func (r *repo) looprun(t *testing.T, stdin string, flags ...string) (string, int) {
	t.Helper()
	return runCmd(t, r.command(nil, flags...), stdin)
}

// runBin runs the runner with args in dir.
func runBin(t *testing.T, dir, counter, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(looprunBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COUNTER="+counter)
	return runCmd(t, cmd, stdin)
}

// runCmd runs cmd, feeding it stdin, and returns its output and exit code.
func runCmd(t *testing.T, cmd *exec.Cmd, stdin string) (string, int) {
	t.Helper()
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code := exited(t, cmd, cmd.Run())
	return out.String(), code
}

// exited returns the exit code of cmd, whose Run or Wait returned err.
func exited(t *testing.T, cmd *exec.Cmd, err error) int {
	t.Helper()
	var exitErr *exec.ExitError
	require.True(t, err == nil || errors.As(err, &exitErr), "running looprun: %v", err)
	return cmd.ProcessState.ExitCode()
}

// session is a runner whose stdin and output the test holds, to answer its
// prompt when it has been asked.
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	chunks chan string // the output as it comes; closed at its end
	out    strings.Builder
}

// startSession starts the runner on the repository's script.
func (r *repo) startSession(t *testing.T, flags ...string) *session {
	t.Helper()
	cmd := r.command(nil, flags...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	pw.Close()
	s := &session{cmd: cmd, stdin: stdin, chunks: make(chan string)}
	go func() {
		defer close(s.chunks)
		defer pr.Close()
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				s.chunks <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // the test failed before waiting
			_ = cmd.Process.Kill()
			for range s.chunks {
			}
			_ = cmd.Wait()
		}
	})
	return s
}

// sessionBound bounds how long a session waits for looprun to print
// something or to end: a bound on a hang, not a timing.
const sessionBound = 30 * time.Second

// read adds the next piece of output to s.out; false at its end. A
// looprun that hangs is killed and fails the test.
func (s *session) read(t *testing.T, deadline <-chan time.Time, waitingFor string) bool {
	t.Helper()
	select {
	case chunk, ok := <-s.chunks:
		s.out.WriteString(chunk)
		return ok
	case <-deadline:
		_ = s.cmd.Process.Kill()
		t.Fatalf("looprun hangs, waiting for %s:\n%s", waitingFor, s.out.String())
		return false
	}
}

// waitFor reads the output until text appears in it.
func (s *session) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.NewTimer(sessionBound)
	defer deadline.Stop()
	for !strings.Contains(s.out.String(), text) {
		if !s.read(t, deadline.C, fmt.Sprintf("%q", text)) {
			t.Fatalf("looprun ended without printing %q:\n%s", text, s.out.String())
		}
	}
}

// wait reads the rest of the output, waits for the runner to end, and
// returns its output and exit code.
func (s *session) wait(t *testing.T) (string, int) {
	t.Helper()
	deadline := time.NewTimer(sessionBound)
	defer deadline.Stop()
	for s.read(t, deadline.C, "its end") {
	}
	s.stdin.Close()
	return s.out.String(), exited(t, s.cmd, s.cmd.Wait())
}

// prompt is what looprun asks when the circuit opens at a terminal.
const prompt = "[r]esume, [s]kip, [w]ait for the probe, [a]bort? "

// A script that fails the same way every time, at another line each time:
// the breaker trips on the same error, and without a terminal looprun
// stops with exit code 3.
func TestSameErrorEveryTimeTrips(t *testing.T) {
	r := newRepo(t, `echo "working on iteration $n"
echo "./main.go:$((10+n)):7: undefined: loadUser" >&2
exit 1
`)
	out, code := r.looprun(t, "", "-failures", "10", "-no-progress", "-1", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "Same error repeated 5 times (threshold: 5)")
	assert.Contains(t, out, `stopped: Same error repeated 5 times (threshold: 5): "./main.go:15:7: undefined: loadUser"`,
		"the summary quotes the error's latest text")
	assert.Equal(t, 5, r.runs(t))
	assert.Contains(t, out, "undefined: loadUser", "the fingerprint table names the error")
	assert.Regexp(t, `(?m)^[0-9a-f]{8}\s+5\s+`, out)
}

// A script that changes files twice and then nothing: the no-progress
// signal gives its one more chance, then stops the loop.
func TestChangesThenStallStopsOnNoProgress(t *testing.T) {
	r := newRepo(t, `if [ $n -le 2 ]; then echo "step $n" > "work_$n.txt"; fi
echo "iteration $n done"
`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "No progress in 3 consecutive iterations (threshold: 3)")
	assert.Equal(t, 5, r.runs(t), "two with changes, three without")
	assert.Regexp(t, `(?m)^\s+4\s+\S+\s+WATCH\s+ok\s`, out, "the one more chance is shown")
	assert.NotContains(t, out, "HALF_OPEN", "nothing opened before it: it is no half-open circuit to the person")
}

// A script that prints the done signal: two in a row complete the loop.
func TestDoneSignalCompletes(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -ge 2 ]; then echo "all tasks finished"; echo "EXIT_SIGNAL: true"; fi
`)
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 3, r.runs(t))
}

// A loop that completes on the last iteration -max-iterations allows is
// done, not stopped by the limit.
func TestDoneOnTheLastAllowedIterationIsDone(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -ge 2 ]; then echo "EXIT_SIGNAL: true"; fi
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "3")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "stopped: Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 3, r.runs(t))
}

// A loop that trips on the last iteration -max-iterations allows is
// tripped, not stopped by the limit.
func TestTripOnTheLastAllowedIterationIsATrip(t *testing.T) {
	r := newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "3")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "stopped: 3 consecutive failures (threshold: 3)")
	assert.Equal(t, 3, r.runs(t))
}

// A plan whose last task gets checked off completes the loop.
func TestFinishedPlanCompletes(t *testing.T) {
	r := newRepo(t, `if [ $n -ge 2 ]; then printf -- '- [x] login\n- [x] logout\n' > fix_plan.md; else printf -- '- [x] login\n- [ ] logout\n' > fix_plan.md; fi
`)
	out, code := r.looprun(t, "", "-plan", "fix_plan.md", "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: all 2 tasks of the plan are done")
}

// Stopped during the cooldown and started again, looprun remembers: it
// refuses at once, without running the script, until -reset.
func TestRestartDuringCooldownResumesIt(t *testing.T) {
	r := newRepo(t, `echo "fatal: could not read Username for 'https://github.com'" >&2
exit 128
`)
	out, code := r.looprun(t, "", "-cooldown", "1h", "-interactive", "no")
	require.Equal(t, exitTripped, code, out)
	require.Equal(t, 3, r.runs(t))

	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "resuming")
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
	assert.Regexp(t, `probe in 59m\d+s|probe in 1h0m0s`, out, "the hour-long cooldown goes on")
	assert.Equal(t, 3, r.runs(t), "the script did not run again")

	out, code = r.looprun(t, "", "-reset", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "reset")
	assert.Equal(t, 6, r.runs(t), "a fresh breaker runs it three more times")
}

// Without a terminal looprun aborts on a trip with its own exit code; at a
// terminal a person chooses: abort, or resume and go on.
func TestTripAsksThePersonAtTheTerminal(t *testing.T) {
	script := `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`
	r := newRepo(t, script)
	out, code := r.looprun(t, "a\n", "-interactive", "yes")
	assert.Equal(t, exitAborted, code, out)
	assert.Contains(t, out, prompt)
	assert.Equal(t, 3, r.runs(t))

	r = newRepo(t, script)
	out, code = r.looprun(t, "r\n", "-interactive", "yes")
	assert.Equal(t, exitAborted, code, "resumed, tripped again, and the input ended: "+out)
	assert.Contains(t, out, "resumed")
	assert.Equal(t, 6, r.runs(t))
}

// The prompt file is read afresh each iteration, as in
// `while :; do cat PROMPT.md | agent; done`: a change to it reaches the next
// iteration.
func TestPromptIsReadEveryIteration(t *testing.T) {
	r := newRepo(t, `read line
echo "$line" >> "$COUNTER.prompts"
echo "second" > PROMPT.md
`)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "PROMPT.md"), []byte("first\n"), 0o644))
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "2")
	require.Equal(t, exitLimit, code, out)
	prompts, err := os.ReadFile(r.counter + ".prompts")
	require.NoError(t, err)
	assert.Equal(t, "first\nsecond\n", string(prompts))
}

// An abort holds the circuit open across runs: the next run without a
// terminal stops at once and says how to go on; one at a terminal may
// resume.
func TestAbortedLoopStaysStoppedUntilAPersonResumes(t *testing.T) {
	r := newRepo(t, `if [ $n -le 3 ]; then echo "Error: Cannot find module 'left-pad'" >&2; exit 1; fi
echo "step $n" > "work_$n.txt"
echo "EXIT_SIGNAL: true"
`)
	out, code := r.looprun(t, "a\n", "-interactive", "yes")
	require.Equal(t, exitAborted, code, out)

	out, code = r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "held open")
	assert.Contains(t, out, "-reset")
	assert.Equal(t, 3, r.runs(t))

	out, code = r.looprun(t, "r\n", "-interactive", "yes")
	assert.Equal(t, exitDone, code, out)
	assert.Equal(t, 5, r.runs(t))
}

// A job whose stdin is /dev/null (cron, CI) has nobody to ask: with
// -interactive auto, looprun stops at the trip with exit 3 instead of
// reading the end of the input as an abort.
func TestNullStdinIsNotATerminal(t *testing.T) {
	r := newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	cmd := r.command(nil)
	cmd.Stdin = nil // the null device
	out, err := cmd.CombinedOutput()
	assert.Equal(t, exitTripped, exited(t, cmd, err), string(out))
	assert.NotContains(t, string(out), prompt)
}

// On a fresh machine, without a command: the simulated agent runs, trips,
// and the state is kept in .loopbreaker/.
func TestSimulatedAgentOnAFreshMachine(t *testing.T) {
	dir := t.TempDir()
	out, code := runBin(t, dir, "", "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "the simulated agent")
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
	assert.Contains(t, out, "--- FAIL: TestSessionExpiry")
	_, err := os.Stat(filepath.Join(dir, stateDirName, "simulated.json"))
	assert.NoError(t, err)
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-preset", "yolo"},
		{"-timeout", "0s"},
		{"-interactive", "maybe"},
		{"-cooldown", "-1s"},
		{"-name", "../elsewhere"},
	} {
		out, code := runBin(t, dir, "", "", args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, out)
	}
}

// With -dir a directory inside a repository, only the files under it are
// the loop's work: changes elsewhere in the repository are not progress,
// and neither is looprun's own state in the directory's .loopbreaker/.
func TestSubdirectoryOfARepoIsMeasuredOnItsOwn(t *testing.T) {
	r := newRepo(t, "")
	sub := filepath.Join(r.dir, "service")
	require.NoError(t, os.Mkdir(sub, 0o755))
	writeScript(t, filepath.Join(sub, "agent.sh"), `if [ $n -le 2 ]; then echo "step $n" > "work_$n.txt"; fi
echo "elsewhere $n" > ../elsewhere.txt
echo "iteration $n done"
`)
	r.git(t, "add", ".")
	r.git(t, "commit", "-qm", "service")

	out, code := runBin(t, sub, r.counter, "", "-dir", sub, "-interactive", "no", "-max-iterations", "8", "--", "./agent.sh")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "No progress in 3 consecutive iterations (threshold: 3)")
	assert.Equal(t, 5, r.runs(t), "two with changes under the directory, three without")
	assert.Regexp(t, `(?m)^\s+1\s+\S+\s+CLOSED\s+ok\s+1\s`, out, "the first iteration changed one file")
}

// Outside a git repository, new output counts as a change and the same
// output as none.
func TestOutsideGitOutputIsTheMeasure(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(t.TempDir(), "n")
	writeScript(t, filepath.Join(dir, "agent.sh"), "if [ $n -le 2 ]; then echo \"new output $n\"; else echo \"same output\"; fi\n")
	out, code := runBin(t, dir, counter, "", "-dir", dir, "-interactive", "no", "--", "./agent.sh")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "No progress in 3 consecutive iterations")
}

func TestPlanCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fix_plan.md")
	require.NoError(t, os.WriteFile(path, []byte("# plan\n- [x] one\n  - [ ] two\n* [X] three\n- four\n- [ ] five\n"), 0o644))
	done, remaining, err := planCounts(path)
	require.NoError(t, err)
	assert.Equal(t, 2, done)
	assert.Equal(t, 2, remaining)
}

// A state file that cannot be read is never replaced by a fresh breaker:
// looprun refuses to run, keeps the file, and -reset moves it aside.
func TestCorruptStateIsRefusedUntilReset(t *testing.T) {
	r := newRepo(t, "echo ok\n")
	require.NoError(t, os.MkdirAll(filepath.Join(r.dir, stateDirName), 0o755))
	state := filepath.Join(r.dir, stateDirName, "loop.json")
	require.NoError(t, os.WriteFile(state, []byte(`{"version":1,"state":"OP`), 0o600))

	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitError, code, out)
	assert.Contains(t, out, "corrupt state")
	assert.Contains(t, out, "-reset")
	assert.Equal(t, 0, r.runs(t))
	kept, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.Equal(t, `{"version":1,"state":"OP`, string(kept), "the file is kept as it was")

	out, code = r.looprun(t, "", "-reset", "-interactive", "no", "-max-iterations", "2")
	assert.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "corrupt state moved aside to")
	aside, err := filepath.Glob(state + ".corrupt-*")
	require.NoError(t, err)
	assert.Len(t, aside, 1)
	assert.Equal(t, 2, r.runs(t))
}

// A state file written by a newer looprun is not corrupt: looprun refuses
// to run, says so without suggesting -reset, and -reset leaves it too.
func TestStateOfANewerVersionIsKeptAndNeverCalledCorrupt(t *testing.T) {
	r := newRepo(t, "echo ok\n")
	require.NoError(t, os.MkdirAll(filepath.Join(r.dir, stateDirName), 0o755))
	state := filepath.Join(r.dir, stateDirName, "loop.json")
	newer := `{"version":99,"state":"OPEN","spend":{"usd":3.5}}`
	require.NoError(t, os.WriteFile(state, []byte(newer), 0o600))

	for _, flags := range [][]string{{"-interactive", "no"}, {"-reset", "-interactive", "no"}} {
		stdout, stderr, code := runSplit(t, r.dir, append(flags, "--", "./agent.sh")...)
		assert.Equal(t, exitError, code, stdout+stderr)
		assert.Contains(t, stderr, "written by a newer loopbreaker (version 99")
		assert.NotContains(t, stderr, "corrupt")
		assert.NotContains(t, stderr, "run with -reset")
		assert.Equal(t, 0, r.runs(t))
		kept, err := os.ReadFile(state)
		require.NoError(t, err)
		assert.Equal(t, newer, string(kept), "the file is kept as it was")
	}
}

// A flag given on the command line beats the preset: one done signal is
// enough here.
func TestFlagsBeatThePreset(t *testing.T) {
	r := newRepo(t, "echo \"step $n\" > work.txt\necho 'EXIT_SIGNAL: true'\n")
	out, code := r.looprun(t, "", "-preset", "autonomous", "-done-signals", "1", "-interactive", "no")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 1 times in a row (threshold: 1)")
	assert.Contains(t, out, "calls: 1 of 100 in the last hour", "the autonomous preset's budget is on")
	assert.Equal(t, 1, r.runs(t))
}

// A threshold flag given as 0 means what 0 means in the Config: the
// library's default, not the preset's value; a flag not given leaves the
// preset's value. migration-safety trips on the first failure; with
// -failures 0 it takes the default three.
func TestExplicitZeroFlagIsTheLibraryDefault(t *testing.T) {
	script := `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`
	r := newRepo(t, script)
	out, code := r.looprun(t, "", "-interactive", "no", "-preset", "migration-safety")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "1 consecutive failures (threshold: 1)")
	assert.Equal(t, 1, r.runs(t))

	r = newRepo(t, script)
	out, code = r.looprun(t, "", "-interactive", "no", "-preset", "migration-safety", "-failures", "0", "-same-errors", "-1")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
	assert.Equal(t, 3, r.runs(t))

	r = newRepo(t, "echo \"step $n\" > work.txt\necho 'EXIT_SIGNAL: true'\n")
	out, code = r.looprun(t, "", "-interactive", "no", "-preset", "autonomous", "-calls-per-hour", "0")
	assert.Equal(t, exitDone, code, out)
	assert.NotContains(t, out, "calls:", "no budget: the autonomous preset's 100 calls are off")
}

// The help says what a flag given as 0 and a flag not given mean, once,
// and each threshold's default.
func TestHelpSaysWhatZeroAndAbsentFlagsMean(t *testing.T) {
	out, code := runBin(t, t.TempDir(), "", "", "-h")
	assert.Equal(t, exitDone, code, out)
	for _, want := range []string{
		"Thresholds (not given: the preset's; 0: the default in brackets; negative: off):",
		"consecutive failures that open the circuit [3]",
		"how long the circuit stays open before one probe [30s]",
		"calls per rolling hour, one per iteration [none]",
		"the same error this many times in a row opens the circuit [off]",
	} {
		assert.Contains(t, strings.Join(strings.Fields(out), " "), want)
	}
}

// A state that cannot be saved at the end is an error (exit 1), whatever
// stopped the loop: here a person aborts, which alone would be exit 4.
// The summary still says why the loop stopped, and that the state is not
// saved.
func TestFailedFinalSaveIsAnErrorWhateverStoppedTheLoop(t *testing.T) {
	r := newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	s := r.startSession(t, "-interactive", "yes", "-cooldown", "1h")
	s.waitFor(t, prompt)
	// A directory where the state file was: the save cannot rename its
	// temporary file over it (even as root).
	state := filepath.Join(r.dir, stateDirName, "loop.json")
	require.NoError(t, os.Remove(state))
	require.NoError(t, os.MkdirAll(filepath.Join(state, "in-the-way"), 0o755))
	_, err := io.WriteString(s.stdin, "a\n")
	require.NoError(t, err)

	out, code := s.wait(t)
	assert.Equal(t, exitError, code, out)
	assert.Contains(t, out, "looprun: saving the state:")
	assert.Contains(t, out, "stopped: aborted: 3 consecutive failures (threshold: 3) (exit 1)")
	assert.Contains(t, out, "state NOT saved in")
}

// With a call budget of 2 per hour, a script that succeeds and changes
// files runs twice; the third iteration is refused, without opening the
// circuit, and looprun stops with exit 5.
func TestSpentCallBudgetStopsWithExitBudget(t *testing.T) {
	r := newRepo(t, "echo \"step $n\" > \"work_$n.txt\"\n")
	out, code := r.looprun(t, "", "-interactive", "no", "-calls-per-hour", "2")
	assert.Equal(t, exitBudget, code, out)
	assert.Regexp(t, `stopped: Call budget exhausted: 2 calls in the last hour \(limit: 2\); next call in (59m\d+s|1h0m0s) \(exit 5\)`, out)
	assert.Contains(t, out, "calls: 2 of 2 in the last hour")
	assert.Contains(t, out, "state CLOSED", "a spent budget is not a trip")
	assert.Equal(t, 2, r.runs(t))
}

// runSplit runs the runner with args in dir and returns its stdout, its
// stderr and its exit code.
func runSplit(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(looprunBin, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	code = exited(t, cmd, cmd.Run())
	return out.String(), errOut.String(), code
}

// A mistyped -dir is a usage error that names it, on stderr, and nothing
// is created: not the directory, not the state in it. The command is not
// blamed, and does not run.
func TestMistypedDirIsAUsageErrorThatCreatesNothing(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("a file\n"), 0o644))
	ran := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		dir, says string
	}{
		{filepath.Join(work, "projcet"), "no such file or directory"},
		{filepath.Join(work, "projcet", "sub"), "no such file or directory"},
		{file, "not a directory"},
	} {
		stdout, stderr, code := runSplit(t, work, "-dir", tc.dir, "--", "sh", "-c", "touch "+ran)
		assert.Equal(t, exitUsage, code, stdout+stderr)
		assert.Equal(t, "looprun: -dir "+tc.dir+": "+tc.says+"\n", stderr)
		assert.Empty(t, stdout)
		assert.NoFileExists(t, ran, "the command did not run")
	}
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing but the file")
	assert.Equal(t, "notes.txt", entries[0].Name())
}

// A command that cannot run is an error on stderr (exit 1); the summary on
// stdout still says why the loop stopped.
func TestCommandThatCannotRunIsAnErrorOnStderr(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runSplit(t, dir, "-dir", dir, "-interactive", "no", "--", "./no-such-agent")
	assert.Equal(t, exitError, code, stdout+stderr)
	assert.Regexp(t, `^looprun: run \./no-such-agent: .*no such file or directory\n$`, stderr)
	assert.Contains(t, stdout, "stopped: run ./no-such-agent: ")
}

// A state that cannot be saved after an iteration stops the loop with an
// error on stderr, said once, though the save at the end fails too.
func TestFailedSaveDuringTheLoopIsAnErrorOnStderr(t *testing.T) {
	r := newRepo(t, `mkdir -p .loopbreaker/loop.json/in-the-way
echo "step $n" > work.txt
`)
	cmd := r.command(nil, "-interactive", "no")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exited(t, cmd, cmd.Run())
	assert.Equal(t, exitError, code, stdout.String()+stderr.String())
	assert.Regexp(t, `^looprun: saving the state: .*\n$`, stderr.String())
	assert.Contains(t, stdout.String(), "stopped: saving the state: ")
	assert.Equal(t, 1, r.runs(t))
}

// Each iteration's output goes to its log in .loopbreaker/logs/, and a
// timed-out iteration's partial output too.
func TestEachIterationIsLoggedTheTimedOutOneToo(t *testing.T) {
	r := newRepo(t, `echo "working on $n"
echo "warning: step $n is slow" >&2
if [ $n -eq 2 ]; then exec sleep 1000; fi
echo "step $n" > work.txt
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "2", "-timeout", "1s")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "output of each iteration in "+filepath.Join(r.dir, ".loopbreaker", "logs")+"/\n")
	logs := filepath.Join(r.dir, stateDirName, logsDirName)
	for n, want := range map[int]string{
		1: "working on 1\nwarning: step 1 is slow\n",
		2: "working on 2\nwarning: step 2 is slow\n",
	} {
		log, err := os.ReadFile(filepath.Join(logs, fmt.Sprintf("loop-%d.log", n)))
		require.NoError(t, err)
		assert.Equal(t, want, string(log))
	}
}
