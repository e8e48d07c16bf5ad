package looprun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedFake stands for a breaker other runners share: a breaker of the
// process's own, with what the other runners do played by the test.
type sharedFake struct {
	*loopbreaker.CircuitBreaker
	mu             sync.Mutex
	resetErr       error // what ResetShared fails with
	resets         int
	closed         bool
	probeElsewhere int // Checks that find another runner's probe running
}

func (f *sharedFake) ResetShared() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resetErr != nil {
		return f.resetErr
	}
	f.resets++
	f.CircuitBreaker.Reset()
	return nil
}

func (f *sharedFake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *sharedFake) Check() loopbreaker.Decision {
	f.mu.Lock()
	elsewhere := f.probeElsewhere > 0
	if elsewhere {
		f.probeElsewhere--
	}
	f.mu.Unlock()
	if elsewhere {
		return loopbreaker.Decision{State: loopbreaker.HalfOpen, Reason: loopbreaker.Reason{Kind: loopbreaker.ReasonConsecutiveFailures, Count: 3, Threshold: 3}}
	}
	return f.CircuitBreaker.Check()
}

// runShared runs looprun in this process on the repository's script, on
// fake as its breaker, with time from clk.
func (r *repo) runShared(t *testing.T, fake *sharedFake, clk clock, flags ...string) (string, int) {
	t.Helper()
	t.Setenv("COUNTER", r.counter)
	opts := Options{NewBreaker: func(s Setup) (Breaker, string, error) {
		cb, err := loopbreaker.New(s.Config)
		require.NoError(t, err)
		fake.CircuitBreaker = cb
		return fake, `fleet "test" on redis://127.0.0.1:6379/0, as worker w1`, nil
	}}
	args := append([]string{"-dir", r.dir, "-interactive", "no"}, flags...)
	var out bytes.Buffer
	code := runWith(context.Background(), opts, clk, append(args, "--", "./agent.sh"), strings.NewReader(""), &out, &out)
	return out.String(), code
}

func TestResetOnASharedBreakerResetsItForEveryRunner(t *testing.T) {
	r := newRepo(t, failingScript)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	fake := &sharedFake{}
	out, code := r.runShared(t, fake, clk)
	require.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, `breaker: fleet "test" on redis://127.0.0.1:6379/0, as worker w1`)
	assert.Contains(t, out, "or with -reset to start afresh (the shared breaker too, for every runner)")
	assert.True(t, fake.closed, "the breaker is closed when the loop ends")
	state := filepath.Join(r.dir, stateDirName, "loop.json")
	require.FileExists(t, state)

	// Out of reach, nothing is reset, the state file included.
	fake = &sharedFake{resetErr: errors.New("dial unix /run/redis.sock: connect: connection refused")}
	out, code = r.runShared(t, fake, clk, "-reset")
	assert.Equal(t, exitError, code, out)
	assert.Contains(t, out, "-reset: the shared breaker was not reset, nor anything else: dial unix /run/redis.sock")
	assert.FileExists(t, state)
	assert.Equal(t, 3, r.runs(t))

	fake = &sharedFake{}
	out, code = r.runShared(t, fake, clk, "-reset", "-max-iterations", "1")
	assert.Equal(t, 1, fake.resets)
	assert.Contains(t, out, "the shared breaker reset: its circuit closed and its counts cleared, for every runner")
	assert.Equal(t, exitLimit, code, out)
	assert.Equal(t, 4, r.runs(t), "the loop started afresh")
}

func TestAutoResetIsNotAppliedOnASharedBreaker(t *testing.T) {
	r := newRepo(t, failingScript)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code := r.runShared(t, &sharedFake{}, clk)
	require.Equal(t, exitTripped, code, out)

	out, code = r.runShared(t, &sharedFake{}, clk, "-auto-reset")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "auto-reset: not on a shared breaker, where it would release every runner; the circuit stays open")
	assert.Equal(t, 3, r.runs(t), "no iteration ran")
}

func TestAnotherRunnersProbeStopsARunnerUnlessItWaits(t *testing.T) {
	r := newRepo(t, `echo "step $n" > "work_$n.txt"`)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code := r.runShared(t, &sharedFake{probeElsewhere: 1}, clk)
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "circuit HALF_OPEN: another runner has the probe (3 consecutive failures (threshold: 3))")
	assert.Contains(t, out, "stopped: another runner has the probe")
	assert.Equal(t, 0, r.runs(t))

	out, code = r.runShared(t, &sharedFake{probeElsewhere: 1}, clk, "-wait", "-max-iterations", "1")
	assert.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "waiting for its outcome")
	assert.Equal(t, 1, r.runs(t), "the probe succeeded: the runner went on")
}

// On a shared breaker, -max-opens is the shared breaker's own give-up
// (every runner's breaker gets it in its Config): when it gives up, the
// runner stops, however many openings it met itself.
func TestMaxOpensIsTheSharedBreakersGiveUp(t *testing.T) {
	r := newRepo(t, failingScript)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	var given loopbreaker.Config
	opts := Options{NewBreaker: func(s Setup) (Breaker, string, error) {
		given = s.Config
		cb, err := loopbreaker.New(s.Config)
		require.NoError(t, err)
		return &sharedFake{CircuitBreaker: cb}, "fleet", nil
	}}
	t.Setenv("COUNTER", r.counter)
	var out bytes.Buffer
	code := runWith(context.Background(), opts, clk, []string{"-dir", r.dir, "-interactive", "no", "-wait", "-max-opens", "2", "-cooldown", "1h", "--", "./agent.sh"}, strings.NewReader(""), &out, &out)
	assert.Equal(t, exitTripped, code, out.String())
	assert.Equal(t, 2, given.MaxConsecutiveOpens)
	assert.Contains(t, out.String(), "stopped: Gave up: the circuit opened 2 times in a row without recovering (threshold: 2)")
	assert.Equal(t, 4, r.runs(t), "three failures, the cooldown, a failed probe")
}

func TestTheJSONResultNamesASharedBreaker(t *testing.T) {
	r := newRepo(t, failingScript)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	t.Setenv("COUNTER", r.counter)
	opts := Options{NewBreaker: func(s Setup) (Breaker, string, error) {
		cb, err := loopbreaker.New(s.Config)
		require.NoError(t, err)
		return &sharedFake{CircuitBreaker: cb}, `fleet "test" on unix:///run/redis.sock, as worker w1`, nil
	}}
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), opts, clk, []string{"-dir", r.dir, "-interactive", "no", "-json", "--", "./agent.sh"}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitTripped, code, stderr.String())
	var res jsonResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), stdout.String())
	assert.Equal(t, `fleet "test" on unix:///run/redis.sock, as worker w1`, res.Breaker)

	var own jsonResult
	stdout.Reset()
	require.NoError(t, os.RemoveAll(filepath.Join(r.dir, stateDirName)))
	code = run(context.Background(), clk, []string{"-dir", r.dir, "-interactive", "no", "-json", "--", "./agent.sh"}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitTripped, code)
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &own))
	assert.Empty(t, own.Breaker, "the process's own breaker is not named")
}

// A breaker that waits in short sleeps (a fleet's asks again every
// second) still shows the time left to what is waited for, and off a
// terminal a line every logStep, not every sleep.
func TestACountdownShowsTheTimeLeftThroughShortSleeps(t *testing.T) {
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	for _, tc := range []struct {
		terminal bool
		want     string
	}{
		{true, "\r      waiting for the probe: 30s left\x1b[K\r      waiting for the probe: 29s left\x1b[K\r      waiting for the probe: 28s left\x1b[K"},
		{false, "      waiting for the probe: 30s left\n"},
	} {
		var out bytes.Buffer
		r := &runner{clock: clk, out: &out, outTerminal: tc.terminal}
		r.countdown = &countdown{what: "the probe", inLog: true, until: clk.Now().Add(30 * time.Second)}
		for range 3 {
			require.NoError(t, r.sleep(context.Background(), time.Second))
		}
		assert.Equal(t, tc.want, out.String())
	}
}
