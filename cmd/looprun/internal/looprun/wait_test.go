package looprun

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runOnClock runs looprun in this process on the repository's script, with
// time from clk, and returns its output and exit code.
func (r *repo) runOnClock(t *testing.T, clk clock, flags ...string) (string, int) {
	t.Helper()
	t.Setenv("COUNTER", r.counter)
	args := append([]string{"-dir", r.dir}, flags...)
	var out bytes.Buffer
	code := run(context.Background(), clk, append(args, "--", "./agent.sh"), strings.NewReader(""), &out, &out)
	return out.String(), code
}

// The script fails three times, then works and says it is done. With
// -wait and nobody to ask, looprun waits out the hour-long cooldown, the
// probe succeeds, and the loop goes on to completion; without -wait it
// stops at the trip.
func TestWaitSleepsThroughTheCooldownToTheProbe(t *testing.T) {
	script := `if [ $n -le 3 ]; then echo "Error: Cannot find module 'left-pad'" >&2; exit 1; fi
echo "step $n" > "work_$n.txt"
echo "EXIT_SIGNAL: true"
`
	r := newRepo(t, script)
	out, code := r.runOnClock(t, loopbreakertest.NewClock(time.Unix(1_800_000_000, 0)), "-interactive", "no", "-cooldown", "1h")
	require.Equal(t, exitTripped, code, out)
	assert.Equal(t, 3, r.runs(t))

	r = newRepo(t, script)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code = r.runOnClock(t, clk, "-interactive", "no", "-cooldown", "1h", "-wait")
	assert.Equal(t, exitDone, code, out)
	assert.Equal(t, []time.Duration{time.Hour}, clk.Slept(), "one wait, the cooldown")
	assert.Contains(t, out, "circuit OPEN: 3 consecutive failures (threshold: 3); probe in 1h0m0s")
	assert.Regexp(t, `(?m)^\s+4\s+\S+\s+CLOSED\s+ok\*`, out, "the fourth iteration is the probe, and closes the circuit")
	assert.Contains(t, out, "stopped: Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 5, r.runs(t))
}

// With -wait, a spent call budget is waited out: the two calls leave the
// rolling hour, and the loop goes on to completion.
func TestWaitSleepsUntilTheBudgetAllowsACall(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"
if [ $n -ge 3 ]; then echo "EXIT_SIGNAL: true"; fi
`)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code := r.runOnClock(t, clk, "-interactive", "no", "-calls-per-hour", "2", "-wait")
	assert.Equal(t, exitDone, code, out)
	assert.Equal(t, []time.Duration{time.Hour}, clk.Slept(), "one wait, until the first calls leave the hour")
	assert.Contains(t, out, "Call budget exhausted: 2 calls in the last hour (limit: 2); waiting 1h0m0s")
	assert.Equal(t, 4, r.runs(t))
}
