package loopbreaker

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// transitions is what a history or the callback saw, without the times.
func transitions(ts []Transition) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

// A trip, the cooldown ending, a failed probe, the cooldown ending again
// and a successful probe: each is in the history with its time, cause,
// reason and iteration.
func TestHistoryRecordsEveryTransitionInOrder(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	start := clock.Now()
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Err: errB(1)})
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{})

	h := b.Stats().History
	assert.Equal(t, []string{
		"CLOSED -> OPEN (signal: 3 consecutive failures (threshold: 3)) at iteration 3",
		"OPEN -> HALF_OPEN (cooldown_over: 3 consecutive failures (threshold: 3)) at iteration 3",
		"HALF_OPEN -> OPEN (signal: 4 consecutive failures (threshold: 3)) at iteration 4",
		"OPEN -> HALF_OPEN (cooldown_over: 4 consecutive failures (threshold: 3)) at iteration 4",
		"HALF_OPEN -> CLOSED (probe_succeeded) at iteration 5",
	}, transitions(h))
	assert.Equal(t, start, h[0].At)
	assert.Equal(t, start.Add(30*time.Second), h[1].At)
	assert.Equal(t, start.Add(60*time.Second), h[4].At)
	assert.Equal(t, Reason{}, h[4].Reason)
}

// The one-more-chance step of the no-progress signal is a transition too.
func TestHistoryRecordsTheNoProgressWatch(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.Record(Iteration{Progress: &Progress{}})
	b.Record(Iteration{Progress: &Progress{}})
	b.Record(Iteration{Progress: &Progress{FilesChanged: 1}})
	assert.Equal(t, []string{
		"CLOSED -> HALF_OPEN (signal: No progress in 2 consecutive iterations (threshold: 3)) at iteration 2",
		"HALF_OPEN -> CLOSED (probe_succeeded) at iteration 3",
	}, transitions(b.Stats().History))
}

// The history keeps the last historyLen transitions, and Stats gives a
// copy.
func TestHistoryKeepsTheLastFiftyTransitions(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 1}, Cooldown: time.Second, MaxConsecutiveOpens: -1})
	for i := 0; i < 30; i++ { // 2 transitions each
		b.RecordFailure("boom")
		clock.Advance(time.Second)
		require.True(t, b.Check().Probe)
	}
	h := b.Stats().History
	require.Len(t, h, historyLen)
	assert.Equal(t, "HALF_OPEN -> OPEN (signal: 6 consecutive failures (threshold: 1)) at iteration 6", h[0].String(),
		"the first ten transitions (five iterations) are forgotten")
	assert.Equal(t, HalfOpen, h[historyLen-1].To)

	h[0].From = Closed
	assert.Equal(t, HalfOpen, b.Stats().History[0].From, "Stats returns a copy")

	snap := roundTrip(t, b.Snapshot())
	assert.Len(t, snap.data.History, historyLen, "a full history is a valid snapshot")
	nb, _ := newTestBreaker(t, Config{MaxConsecutiveOpens: -1})
	require.NoError(t, nb.Restore(snap))
	nb.Resume()
	h = nb.Stats().History
	require.Len(t, h, historyLen, "restored, it forgets the oldest first")
	assert.Equal(t, "HALF_OPEN -> OPEN (signal: 7 consecutive failures (threshold: 1)) at iteration 7", h[0].String())
	assert.Equal(t, []string{
		"HALF_OPEN -> OPEN (signal: Half-open probe lost: the process stopped before its outcome was recorded) at iteration 30",
		"OPEN -> CLOSED (resume) at iteration 30",
	}, transitions(h[historyLen-2:]), "the probe let through before the snapshot was lost")
}

// A closed circuit that stays closed records nothing, and costs nothing.
func TestHealthyLoopRecordsNoTransitions(t *testing.T) {
	var calls int
	b, _ := newTestBreaker(t, Config{OnStateChange: func(Transition) { calls++ }})
	allocs := testing.AllocsPerRun(100, func() {
		b.Check()
		b.RecordSuccess()
	})
	assert.Zero(t, allocs)
	assert.Zero(t, calls)
	assert.Nil(t, b.Stats().History)
}

// The callback runs after the transition, without the lock: it can call
// the breaker, which would deadlock if it ran under the lock.
func TestOnStateChangeMayCallBackIntoTheBreaker(t *testing.T) {
	var b *CircuitBreaker
	var seen []string
	cfg := Config{
		OnStateChange: func(tr Transition) {
			if !b.mu.TryLock() {
				t.Error("called with the lock held")
				return
			}
			b.mu.Unlock()
			s := b.Stats()
			seen = append(seen, tr.To.String()+" "+s.State.String()+" "+b.TripReason())
		},
	}
	b, clock := newTestBreaker(t, cfg)
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	clock.Advance(30 * time.Second)
	b.State()
	assert.Equal(t, []string{
		"OPEN OPEN 3 consecutive failures (threshold: 3)",
		"HALF_OPEN HALF_OPEN 3 consecutive failures (threshold: 3)",
	}, seen)
}

// A callback that makes a transition itself (here it resumes the loop as
// soon as it opens) gets that transition after it returns, in order.
func TestOnStateChangeDeliversTransitionsMadeByTheCallbackAfterIt(t *testing.T) {
	var b *CircuitBreaker
	var seen []string
	depth := 0
	cfg := Config{
		Failures: FailureRules{
			MaxConsecutive: 1,
		},
		OnStateChange: func(tr Transition) {
			depth++
			defer func() { depth-- }()
			require.Equal(t, 1, depth, "never nested")
			seen = append(seen, tr.String())
			if tr.To == Open {
				b.Resume()
			}
		},
	}
	b, _ = newTestBreaker(t, cfg)
	b.RecordFailure("boom")
	assert.Equal(t, []string{
		"CLOSED -> OPEN (signal: 1 consecutive failures (threshold: 1)) at iteration 1",
		"OPEN -> CLOSED (resume) at iteration 1",
	}, seen)
	assert.Equal(t, Closed, b.State())
}

// With many goroutines making transitions, the callback is never run
// concurrently, and it sees the transitions in the order of the history.
func TestOnStateChangeIsSerializedAndInOrderUnderConcurrency(t *testing.T) {
	var mu sync.Mutex
	var seen []Transition
	running := 0
	cfg := Config{
		Failures: FailureRules{
			MaxConsecutive: 1,
		},
		Cooldown: time.Nanosecond,
		OnStateChange: func(tr Transition) {
			mu.Lock()
			running++
			assert.Equal(t, 1, running, "never concurrent")
			seen = append(seen, tr)
			mu.Unlock()
			mu.Lock()
			running--
			mu.Unlock()
		},
	}
	b, clock := newTestBreaker(t, cfg)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				b.RecordFailure("boom")
				clock.Advance(time.Nanosecond)
				if b.Check().Probe {
					b.RecordSuccess()
				}
			}
		}()
	}
	wg.Wait()
	h := b.Stats().History
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	// Every transition was delivered once, in history order.
	tail := seen[max(len(seen)-len(h), 0):]
	assert.Equal(t, transitions(h[len(h)-len(tail):]), transitions(tail))
	for i := 1; i < len(seen); i++ {
		assert.Equal(t, seen[i-1].To, seen[i].From, "transition %d follows the one before", i)
	}
}

// A panicking callback does not leave the breaker stuck: the next
// transition is delivered.
func TestOnStateChangePanicLeavesTheBreakerUsable(t *testing.T) {
	calls := 0
	cfg := Config{
		Failures: FailureRules{
			MaxConsecutive: 1,
		},
		OnStateChange: func(tr Transition) {
			calls++
			if calls == 1 {
				panic("host bug")
			}
		},
	}
	b, _ := newTestBreaker(t, cfg)
	assert.Panics(t, func() { b.RecordFailure("boom") })
	assert.Equal(t, Open, b.State())
	b.Resume()
	assert.Equal(t, 2, calls)
}

// Reset clears the history, but the callback hears that the circuit
// closed.
func TestResetClearsHistoryAndReportsTheClose(t *testing.T) {
	var seen []string
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: 1}, OnStateChange: func(tr Transition) { seen = append(seen, tr.String()) }})
	b.RecordFailure("boom")
	b.Reset()
	assert.Nil(t, b.Stats().History)
	assert.Equal(t, []string{
		"CLOSED -> OPEN (signal: 1 consecutive failures (threshold: 1)) at iteration 1",
		"OPEN -> CLOSED (reset) at iteration 0",
	}, seen)
	b.Reset()
	assert.Len(t, seen, 2, "resetting a closed breaker is no transition")
}

// Stats logs as a group of its key fields.
func TestStatsLogsAsASlogGroup(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for i := 0; i < 3; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	var sb strings.Builder
	logger := slog.New(slog.NewTextHandler(&sb, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	logger.Info("stopped", "breaker", b.Stats())
	assert.Equal(t, `level=INFO msg=stopped breaker.state=OPEN breaker.iterations=3 breaker.consecutive_failures=3 `+
		`breaker.total_failures=3 breaker.unique_errors=1 breaker.opens=1 `+
		`breaker.reason="3 consecutive failures (threshold: 3)" breaker.reason_kind=consecutive_failures `+
		`breaker.retry_after=30s breaker.last_fingerprint=`+Fingerprint(errA(0).Error())+` `+
		`breaker.last_transition="CLOSED -> OPEN (signal: 3 consecutive failures (threshold: 3)) at iteration 3"`+"\n", sb.String())

	// Closed again, what does not apply is left out.
	b.Resume()
	sb.Reset()
	logger.Info("resumed", "breaker", b.Stats())
	assert.Equal(t, `level=INFO msg=resumed breaker.state=CLOSED breaker.iterations=3 breaker.consecutive_failures=0 `+
		`breaker.total_failures=3 breaker.unique_errors=0 breaker.opens=1 `+
		`breaker.last_transition="OPEN -> CLOSED (resume) at iteration 3"`+"\n", sb.String())

	// A complete loop says why, and a call budget how much of it is used.
	b, _ = newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	b.Record(Iteration{Done: true, Calls: 3})
	b.Record(Iteration{Done: true})
	sb.Reset()
	logger.Info("done", "breaker", b.Stats())
	assert.Equal(t, `level=INFO msg=done breaker.state=CLOSED breaker.iterations=2 breaker.consecutive_failures=0 `+
		`breaker.total_failures=0 breaker.unique_errors=0 breaker.opens=0 `+
		`breaker.complete="Complete: the agent reported done 2 times in a row (threshold: 2)" breaker.budget_used=4 breaker.budget_limit=10 `+
		`breaker.last_transition="CLOSED -> CLOSED (complete: Complete: the agent reported done 2 times in a row (threshold: 2)) at iteration 2"`+"\n", sb.String())
}
