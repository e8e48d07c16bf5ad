package looprun

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command's output shows as looprun runs it, each iteration under a
// line that names it; -quiet hides it, and the log keeps it either way.
// Off a terminal there is no status line: no carriage return, no escape
// sequence in a pipe or a log.
func TestOutputShowsUnlessQuietAndTheLogKeepsIt(t *testing.T) {
	r := newRepo(t, `echo "agent says: step $n"
echo "step $n" > work.txt
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "2")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "----- iteration 1\nagent says: step 1\n    1  ")
	assert.Contains(t, out, "----- iteration 2\nagent says: step 2\n    2  ")
	assert.NotContains(t, out, "\r")
	assert.NotContains(t, out, "\x1b[")

	r = newRepo(t, `echo "agent says: step $n"
echo "step $n" > work.txt
`)
	out, code = r.looprun(t, "", "-interactive", "no", "-max-iterations", "2", "-quiet")
	require.Equal(t, exitLimit, code, out)
	assert.NotContains(t, out, "agent says")
	assert.NotContains(t, out, "----- iteration")
	log, err := os.ReadFile(filepath.Join(r.dir, stateDirName, logsDirName, "loop-2.log"))
	require.NoError(t, err)
	assert.Equal(t, "agent says: step 2\n", string(log))
}

// Output that ends without a newline does not swallow the table's line.
func TestOutputWithoutAFinalNewlineKeepsTheTableApart(t *testing.T) {
	r := newRepo(t, `printf "no newline at the end"
echo "step $n" > work.txt
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "1")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "no newline at the end\n    1  ")
}

// The status line is drawn only at a line's end, is wiped by the output
// and by the runner's own lines, and never wider than a terminal of 80
// columns.
func TestLiveOutputWipesTheStatusLine(t *testing.T) {
	var w bytes.Buffer
	now := time.Unix(1_800_000_000, 0)
	l := &liveOutput{w: &w, terminal: true, now: func() time.Time { return now }}
	l.showStatus("  ... iteration 1 running 1s")
	_, _ = l.Write([]byte("half a line"))
	l.showStatus("  ... iteration 1 running 2s") // not drawn: the output's line is open
	_, _ = l.Write([]byte(", and its end\n"))
	l.showStatus(strings.Repeat("x", 200))
	l.endLine()
	assert.Equal(t, clearLine+"  ... iteration 1 running 1s"+clearLine+"half a line, and its end\n"+
		clearLine+strings.Repeat("x", statusWidth-3)+"..."+clearLine, w.String())

	w.Reset()
	l = &liveOutput{w: &w, terminal: false}
	l.showStatus("never")
	_, _ = l.Write([]byte("open line"))
	l.endLine()
	assert.Equal(t, "open line\n", w.String(), "off a terminal: the output, and a newline to end its line")

	w.Reset()
	l = &liveOutput{w: &w, terminal: true, quiet: true}
	_, _ = l.Write([]byte("hidden\n"))
	l.showStatus("  ... iteration 2 running 0s")
	assert.Equal(t, clearLine+"  ... iteration 2 running 0s", w.String(), "-quiet hides the output, not the status line")
}

// Output that stops mid-line (an agent's "Thinking..." with no newline)
// keeps the status line away while it is written, and once it has rested
// for a second its line is ended and the status line shows under it.
func TestStatusLineShowsUnderALineThatRests(t *testing.T) {
	var w bytes.Buffer
	now := time.Unix(1_800_000_000, 0)
	l := &liveOutput{w: &w, terminal: true, now: func() time.Time { return now }}
	_, _ = l.Write([]byte("Thinking"))
	now = now.Add(restAfter / 2)
	l.showStatus("  ... iteration 1 running 1s")
	assert.Equal(t, "Thinking", w.String(), "the line is still being written")

	now = now.Add(restAfter)
	l.showStatus("  ... iteration 1 running 2s")
	assert.Equal(t, "Thinking\n"+clearLine+"  ... iteration 1 running 2s", w.String())

	_, _ = l.Write([]byte("... done\n"))
	l.endLine()
	assert.Equal(t, "Thinking\n"+clearLine+"  ... iteration 1 running 2s"+clearLine+"... done\n", w.String())
}

// The status line counts the call the running iteration makes: the
// fourth iteration of a budget of 50 runs as call 4 of 50, not 3.
func TestStatusLineCountsTheRunningCall(t *testing.T) {
	cfg := loopbreaker.DefaultConfig()
	cfg.Spend.MaxCallsPerHour = 50
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	for range 3 {
		cb.Record(loopbreaker.Iteration{})
	}
	r := &runner{cb: cb}
	assert.Equal(t, "  ... iteration 4 running 12s, circuit CLOSED, calls 4/50 this hour", r.statusText(4, "running")(12*time.Second))
}

// -json prints the result, one JSON object, on stdout alone; what a
// person reads (the banner, the table, the summary, the command's output)
// goes to stderr.
func TestJSONResultIsAllOfStdout(t *testing.T) {
	r := newRepo(t, `echo "agent says: step $n"
echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	cmd := r.command(nil, "-interactive", "no", "-json", "-calls-per-hour", "10")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exited(t, cmd, cmd.Run())
	require.Equal(t, exitTripped, code, stderr.String())

	var res map[string]any
	dec := json.NewDecoder(&stdout)
	require.NoError(t, dec.Decode(&res), stdout.String())
	assert.False(t, dec.More(), "one object")
	assert.Equal(t, float64(exitTripped), res["exit_code"])
	assert.Equal(t, "tripped", res["exit"])
	assert.Equal(t, "OPEN", res["state"])
	assert.Equal(t, map[string]any{"kind": "consecutive_failures", "text": "3 consecutive failures (threshold: 3)"}, res["reason"])
	assert.Equal(t, float64(3), res["iterations"])
	assert.Equal(t, float64(3), res["failures"])
	assert.Equal(t, map[string]any{"used": float64(3), "limit": float64(10)}, res["calls"])
	errs := res["errors"].([]any)
	require.Len(t, errs, 1)
	assert.Equal(t, float64(3), errs[0].(map[string]any)["count"])
	assert.Equal(t, "Error: Cannot find module 'left-pad'", errs[0].(map[string]any)["sample"])
	last := res["last_error"].(map[string]any)
	assert.Equal(t, "command", last["from"])
	assert.Equal(t, filepath.Join(r.dir, stateDirName, logsDirName, "loop-3.log"), last["log"])

	assert.Contains(t, stderr.String(), "agent says: step 1")
	assert.Contains(t, stderr.String(), "stopped: 3 consecutive failures")
}

// -help has the table's legend, the exit codes, examples, and the flags
// other Ralph loops name differently.
func TestHelpHasTheLegendTheExitCodesAndExamples(t *testing.T) {
	out, code := runBin(t, t.TempDir(), "", "", "-h")
	assert.Equal(t, exitDone, code, out)
	for _, want := range []string{
		"consec and total failures",
		"noprog (iterations in a row without progress)",
		"WATCH: a signal one iteration short of opening it",
		"*: the probe",
		"3 tripped (the circuit is open and nobody was asked",
		"8 a provider limit",
		"130 interrupted",
		"looprun -check 'go test ./...' -commit -- claude -p --output-format json --resume {session}",
		"looprun -wait -max-opens 3 -quiet -json -- ./agent.sh > result.json",
		"--calls (-calls-per-hour)",
		"--rate-limit (-calls-per-hour)",
		"--circuit-breaker-failures (-failures)",
		"--circuit-breaker-errors (-same-errors)",
		"--validate (-check)",
		"LOOPRUN_<FLAG>",
	} {
		assert.Contains(t, strings.Join(strings.Fields(out), " "), want)
	}
	assert.NotContains(t, out, "  -calls\n", "an alias is not listed among the flags")
}

// Before the first iteration looprun says what it watches, and the
// thresholds in force, with the preset and where a value did not come
// from it.
func TestBannerSaysWhatIsWatchedAndTheThresholds(t *testing.T) {
	r := newRepo(t, "echo \"step $n\" > work.txt\n")
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "1", "-preset", "autonomous",
		"-no-progress", "4", "-check", "true", "-plan", "fix_plan.md")
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, `watching: the exit status and the errors in the output (timeouts, signals), -check "true", the files changed in git, the status block (RALPH_STATUS), Codex's, Gemini CLI's and Claude Code's JSON output, the done marker "EXIT_SIGNAL: true", the plan fix_plan.md, 9 protected paths`)
	assert.Contains(t, out, "thresholds (preset autonomous): failures 10, same-errors 5, same-errors-in-a-row 5, no-progress 4 (flag),")
	assert.Contains(t, out, "calls-per-hour 100; timeout 15m0s, max-iterations 1")
}
