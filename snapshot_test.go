package loopbreaker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// richConfig switches every signal on, so that a snapshot holds every
// window.
func richConfig() Config {
	return Config{Progress: ProgressRules{ScoreWindow: 5}, Failures: FailureRules{MaxSameErrorInARow: 4, MaxConsecutive: 4}, CooldownPolicy: DoublingCooldown(0)}
}

// busyBreaker returns a breaker that has seen a bit of everything and is
// open after a failed probe.
func busyBreaker(t *testing.T) (*CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	b, clock := newTestBreaker(t, richConfig())
	b.Record(Iteration{Err: errB(1), Progress: &Progress{FilesChanged: 2, TestsPassing: 10, OutputLength: 900}, Approach: "retry", Work: WorkImplementation})
	b.Record(Iteration{Progress: &Progress{TestsPassing: 12, OutputLength: 1000, TasksCompleted: 1}, Approach: "rewrite", Work: WorkTestFix})
	b.Record(Iteration{Err: errB(2), Progress: &Progress{FilesChanged: 1, PermissionDenials: 1, OutputLength: 800}, Approach: "retry", Work: WorkOther})
	b.RecordSuccess()
	for i := 0; i < 4; i++ {
		b.Record(Iteration{Err: errA(i), Progress: &Progress{FilesChanged: 1, OutputLength: 700 + i}})
	}
	require.Equal(t, Open, b.State())
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Err: errA(9), Progress: &Progress{FilesChanged: 1, OutputLength: 650}})
	require.Equal(t, Open, b.State())
	clock.Advance(10 * time.Second)
	return b, clock
}

// restart saves b as JSON and makes a new breaker from it, as a process
// that was killed and started again would, its clock reading now.
func restart(t *testing.T, b *CircuitBreaker, cfg Config, now time.Time) (*CircuitBreaker, *loopbreakertest.Clock) {
	t.Helper()
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	snap, err := ParseSnapshot(data)
	require.NoError(t, err)
	nb, clock := newTestBreakerAt(t, cfg, now)
	require.NoError(t, nb.Restore(snap))
	return nb, clock
}

// Kill and restart: the restored breaker has the same state, counts,
// windows and history, and the cooldown goes on by the wall clock.
func TestRestartKeepsTheWholeStateAndTheCooldownRunsOn(t *testing.T) {
	b, clock := busyBreaker(t)
	before := b.Stats()
	require.Equal(t, 60*time.Second, before.Cooldown, "doubled after the failed probe")
	require.Equal(t, 50*time.Second, before.RetryAfter)

	nb, nclock := restart(t, b, richConfig(), clock.Now().Add(15*time.Second))
	after := nb.Stats()
	before.RetryAfter -= 15 * time.Second
	assert.Equal(t, before, after)

	// Both carry on the same way.
	for _, x := range []*CircuitBreaker{b, nb} {
		x.Record(Iteration{Err: errA(1), Progress: &Progress{OutputLength: 10}, Approach: "retry", Work: WorkTestFix})
	}
	clock.Advance(15 * time.Second)
	assert.Equal(t, b.Stats(), nb.Stats())

	// The cooldown ends 60s after the open, by the new process's clock.
	nclock.Advance(35*time.Second - time.Nanosecond)
	assert.Equal(t, Open, nb.State())
	nclock.Advance(time.Nanosecond)
	assert.Equal(t, HalfOpen, nb.State())
	assert.True(t, nb.Check().Probe)
}

// A process restarted after the cooldown is over finds the circuit
// half-open, with the probe free.
func TestRestartAfterTheCooldownFindsTheCircuitHalfOpen(t *testing.T) {
	b, clock := tripped(t, Config{})
	nb, _ := restart(t, b, Config{}, clock.Now().Add(time.Hour))
	d := nb.Check()
	assert.Equal(t, HalfOpen, d.State)
	assert.True(t, d.Probe)
}

// A half-open probe that was running when the snapshot was taken died
// with its process, perhaps because of what it ran: restored, it counts as
// a failed probe, and the circuit waits a cooldown (doubled, under the
// doubling policy) before the next probe, so that a probe that kills its
// process does not run again at every restart. Restore tells the callback
// nothing; the history says what happened.
func TestRestartCountsAProbeInFlightAsFailed(t *testing.T) {
	var heard []Transition
	cfg := Config{CooldownPolicy: DoublingCooldown(0), OnStateChange: func(tr Transition) { heard = append(heard, tr) }}
	b, clock := tripped(t, cfg)
	clock.Advance(30 * time.Second)
	require.True(t, b.Check().Probe)
	snap := b.Snapshot()
	require.True(t, snap.data.ProbeInFlight)
	heard = nil

	nb, nclock := restart(t, b, cfg, clock.Now().Add(5*time.Second))
	assert.Empty(t, heard, "Restore calls nothing")
	d := nb.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, Open, d.State)
	assert.Equal(t, Reason{Kind: ReasonProbeLost}, d.Reason)
	assert.Equal(t, 60*time.Second, d.RetryAfter, "a second open: the cooldown doubled")
	s := nb.Stats()
	assert.Equal(t, 2, s.Opens)
	assert.Equal(t, "HALF_OPEN -> OPEN (signal: Half-open probe lost: the process stopped before its outcome was recorded) at iteration 3",
		s.History[len(s.History)-1].String())
	assert.Equal(t, nclock.Now(), s.History[len(s.History)-1].At)
	assert.False(t, nb.Snapshot().data.ProbeInFlight)

	nclock.Advance(60 * time.Second)
	assert.True(t, nb.Check().Probe, "the next probe after the cooldown")
}

// A snapshot taken half-open before the probe was let through (say, from
// OnStateChange as the cooldown ended) restores half-open, the probe free.
func TestRestartBeforeTheProbeLetsTheProbeThrough(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(30 * time.Second)
	require.Equal(t, HalfOpen, b.State())
	nb, _ := restart(t, b, Config{}, clock.Now())
	d := nb.Check()
	assert.Equal(t, HalfOpen, d.State)
	assert.True(t, d.Probe)
	assert.Equal(t, 1, nb.Stats().Opens)
}

// A clock that went backwards (the new process reads a time before the
// snapshot was saved) cannot say how long the circuit was open: it stays
// open for a fresh full cooldown from now.
func TestClockGoneBackwardsKeepsTheCircuitOpenForAFullCooldown(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(20 * time.Second)
	earlier := clock.Now().Add(-time.Hour)

	nb, nclock := restart(t, b, Config{}, earlier)
	d := nb.Check()
	assert.Equal(t, Open, d.State)
	assert.Equal(t, 30*time.Second, d.RetryAfter)
	nclock.Advance(30 * time.Second)
	assert.Equal(t, HalfOpen, nb.State())

	// Before the open but after the save is backwards too.
	nb, _ = restart(t, b, Config{}, clock.Now().Add(-time.Second))
	assert.Equal(t, 30*time.Second, nb.Check().RetryAfter)
}

// A half-open circuit was past its cooldown when it was saved: a clock
// set back since changes nothing, and the probe is free.
func TestClockGoneBackwardsLeavesAHalfOpenCircuitHalfOpen(t *testing.T) {
	b, clock := tripped(t, Config{})
	clock.Advance(30 * time.Second)
	require.Equal(t, HalfOpen, b.State())
	nb, _ := restart(t, b, Config{}, clock.Now().Add(-time.Hour))
	d := nb.Check()
	assert.Equal(t, HalfOpen, d.State)
	assert.True(t, d.Probe)
}

// ForceOpen and Abort survive a restart, whenever it comes (even with the
// clock set back), with their reason: still no cooldown ends them, only a
// person does.
func TestRestartKeepsAHeldCircuitHeld(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		hold         func(*CircuitBreaker)
	}{
		{"force open", "Forced open: release freeze", func(b *CircuitBreaker) { b.ForceOpen("release freeze") }},
		{"abort", "Aborted: 3 consecutive failures (threshold: 3)", (*CircuitBreaker).Abort},
	} {
		for _, later := range []time.Duration{0, 48 * time.Hour, -time.Hour} {
			t.Run(fmt.Sprintf("%s %s later", tc.name, later), func(t *testing.T) {
				b, clock := tripped(t, Config{})
				tc.hold(b)
				nb, nclock := restart(t, b, Config{}, clock.Now().Add(later))
				nclock.Advance(24 * time.Hour)
				d := nb.Check()
				assert.False(t, d.Allow)
				assert.Equal(t, Open, d.State)
				assert.Zero(t, d.RetryAfter, "no time ends it")
				assert.Equal(t, tc.reason, nb.TripReason())
				nb.RecordSuccess()
				assert.Equal(t, Open, nb.State(), "nor an iteration")
				nb.Resume()
				assert.True(t, nb.Check().Allow)
			})
		}
	}
}

// Restored into a breaker with smaller limits, the oldest entries go.
func TestRestoreIntoSmallerLimitsDropsTheOldest(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Failures: FailureRules{MaxSameError: -1, MaxConsecutive: -1}})
	for _, msg := range []string{"a", "b", "c", "b"} {
		b.RecordFailure(msg)
	}
	nb, _ := restart(t, b, Config{Failures: FailureRules{MaxFingerprints: 2}}, clock.Now())
	s := nb.Stats()
	assert.Equal(t, map[string]int{Fingerprint("c"): 1, Fingerprint("b"): 2}, s.Failures.Counts)
	assert.Equal(t, 1, s.Failures.Evicted)
	nb.RecordFailure("x")
	assert.NotContains(t, nb.Stats().Failures.Counts, Fingerprint("c"), "c was the least recently seen")
}

// A loop ran two test-only iterations (the default completes at three),
// then restarts asking for two. The restored streak already meets the new
// threshold, and the next iteration, even a plain success that neither
// extends nor breaks the streak, is judged: the loop is complete.
func TestRestoreIntoLowerThresholdsJudgesTheNextIteration(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	b.Record(Iteration{Work: WorkTestsOnly})
	b.Record(Iteration{Work: WorkTestsOnly})
	require.True(t, b.Check().Allow)

	nb, _ := restart(t, b, Config{Progress: ProgressRules{TestOnly: 2}}, clock.Now())
	require.True(t, nb.Check().Allow)
	nb.RecordSuccess()
	d := nb.Check()
	assert.True(t, d.Complete)
	assert.Equal(t, ReasonTestOnlyLoops, d.Reason.Kind)
}

// The snapshot is JSON with names, not numbers, for every enumeration.
func TestSnapshotStoresNamesNotNumbers(t *testing.T) {
	b, _ := busyBreaker(t)
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	text := string(data)
	for _, want := range []string{
		fmt.Sprintf(`"version":%d`, SnapshotVersion), `"state":"OPEN"`, `"kind":"consecutive_failures"`, `"from":"HALF_OPEN"`,
		`"cause":"cooldown_over"`, `"works":["implementation","test_fix","other"]`, `"cooldown_ns":60000000000`,
	} {
		assert.Contains(t, text, want)
	}
}

// validSnapshotJSON is a snapshot as a map, for the corruption tests to
// spoil.
func validSnapshotJSON(t *testing.T) map[string]any {
	t.Helper()
	b, _ := busyBreaker(t)
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// Every kind of corruption is refused with an error that matches
// ErrCorruptState and says what is wrong, and the breaker is unchanged.
func TestCorruptSnapshotsAreRefused(t *testing.T) {
	good, err := json.Marshal(validSnapshotJSON(t))
	require.NoError(t, err)
	edit := func(f func(m map[string]any)) []byte {
		m := validSnapshotJSON(t)
		f(m)
		data, err := json.Marshal(m)
		require.NoError(t, err)
		return data
	}
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "unexpected EOF", nil},
		{"truncated", "unexpected EOF", good[:len(good)/2]},
		{"not JSON", "invalid character", []byte("state=OPEN\n")},
		{"JSON null", "unsupported version 0", []byte("null")},
		{"a JSON array", "cannot unmarshal array", []byte("[1,2]")},
		{"trailing data", "data after the JSON object", append(append([]byte{}, good...), "{}"...)},
		{"negative version", "unsupported version -1", edit(func(m map[string]any) { m["version"] = -1 })},
		{"version as a string", "cannot unmarshal string", edit(func(m map[string]any) { m["version"] = "1" })},
		{"count as a string", "cannot unmarshal string", edit(func(m map[string]any) { m["iterations"] = "nine" })},
		{"fractional count", "cannot unmarshal number 1.5", edit(func(m map[string]any) { m["opens"] = 1.5 })},
		{"state as a number", "cannot unmarshal number", edit(func(m map[string]any) { m["state"] = 1 })},
		{"unknown state", `unknown state "TRIPPED"`, edit(func(m map[string]any) { m["state"] = "TRIPPED" })},
		{"unknown reason kind", `unknown reason kind "gremlins"`, edit(func(m map[string]any) { m["reason"].(map[string]any)["kind"] = "gremlins" })},
		{"unknown cause", `unknown cause "magic"`, edit(func(m map[string]any) { m["history"].([]any)[0].(map[string]any)["cause"] = "magic" })},
		{"unknown work kind", `unknown work kind "napping"`, edit(func(m map[string]any) { m["works"] = []any{"napping"} })},
		{"unlabelled work", "not a label", edit(func(m map[string]any) { m["works"] = []any{"unlabelled"} })},
		{"unknown field", `unknown field "mood"`, edit(func(m map[string]any) { m["mood"] = "fine" })},
		{"negative count", "total_failures is negative (-1)", edit(func(m map[string]any) { m["total_failures"] = -1 })},
		{"negative progress count", "progress.consecutive_no_progress is negative", edit(func(m map[string]any) {
			m["progress"].(map[string]any)["consecutive_no_progress"] = -3
		})},
		{"negative error count", "count -2 below 1", edit(func(m map[string]any) { m["errors"].([]any)[0].(map[string]any)["count"] = -2 })},
		{"negative cooldown", "negative cooldown", edit(func(m map[string]any) { m["cooldown_ns"] = -1 })},
		{"closed with a reason", "closed circuit with reason", edit(func(m map[string]any) { m["state"] = "CLOSED"; m["consecutive_opens"] = 0 })},
		{"open without a reason", "OPEN circuit without a reason", edit(func(m map[string]any) { m["reason"] = map[string]any{"kind": "none"} })},
		{"open without opened_at", "open circuit without opened_at", edit(func(m map[string]any) { m["opened_at"] = "0001-01-01T00:00:00Z" })},
		{"probe in flight while open", "which only a half-open circuit has", edit(func(m map[string]any) { m["probe_in_flight"] = true })},
		{"held but half-open", "which only an open circuit has", edit(func(m map[string]any) {
			m["state"] = "HALF_OPEN"
			m["reason"] = map[string]any{"kind": "aborted"}
		})},
		{"more consecutive than total failures", "above total_failures", edit(func(m map[string]any) { m["consecutive_failures"] = 100 })},
		{"bad fingerprint", "not 8 lower-case hex digits", edit(func(m map[string]any) { m["errors"].([]any)[0].(map[string]any)["fingerprint"] = "XYZ" })},
		{"fingerprint twice", "appears twice", edit(func(m map[string]any) {
			errs := m["errors"].([]any)
			m["errors"] = append(errs, errs[0])
		})},
		{"too many outputs", "more than 10", edit(func(m map[string]any) {
			m["progress"].(map[string]any)["outputs"] = make([]any, 11)
		})},
		{"history too long", "more than 50", edit(func(m map[string]any) {
			h := m["history"].([]any)
			for len(h) <= historyLen {
				h = append(h, h[0])
			}
			m["history"] = h
		})},
		{"bad time", "cannot parse", edit(func(m map[string]any) { m["saved_at"] = "yesterday" })},
		{"missing saved_at", "saved_at is missing", edit(func(m map[string]any) { delete(m, "saved_at") })},

		// Version 2.
		{"a warning as the circuit's reason", "not a reason for the circuit to open", edit(func(m map[string]any) {
			m["reason"] = map[string]any{"kind": "long_task"}
		})},
		{"the call budget as the circuit's reason", "not a reason for the circuit to open", edit(func(m map[string]any) {
			m["reason"] = map[string]any{"kind": "call_budget"}
		})},
		{"unknown relapsed kind", `unknown reason kind "gremlins"`, edit(func(m map[string]any) {
			m["reason"] = map[string]any{"kind": "relapse", "relapsed": "gremlins"}
		})},
		{"negative task count", "tasks: a count is negative", edit(func(m map[string]any) {
			m["tasks"] = map[string]any{"task": "a", "task_failures": -1}
		})},
		{"more task failures than iterations", "above task_iterations", edit(func(m map[string]any) {
			m["tasks"] = map[string]any{"task": "a", "task_iterations": 1, "task_failures": 2}
		})},
		{"iterations on no task", "iterations on no task", edit(func(m map[string]any) {
			m["tasks"] = map[string]any{"task_iterations": 1}
		})},
		{"an untrimmed task", "is not a task name", edit(func(m map[string]any) {
			m["tasks"] = map[string]any{"task": " a", "task_iterations": 1}
		})},
		{"a skipped task twice", "appears twice", edit(func(m map[string]any) {
			m["tasks"] = map[string]any{"skipped": []any{"a", "a"}}
		})},
		{"an empty skipped task", "is not a task name", edit(func(m map[string]any) {
			m["tasks"] = map[string]any{"skipped": []any{""}}
		})},
		{"too many skipped tasks", "more than 100", edit(func(m map[string]any) {
			var skipped []any
			for i := range maxSkippedTasks + 1 {
				skipped = append(skipped, fmt.Sprint(i))
			}
			m["tasks"] = map[string]any{"skipped": skipped}
		})},
		{"a sample of no error", "is not in the error history", edit(func(m map[string]any) {
			m["error_samples"] = []any{map[string]any{"fingerprint": "00000000", "first": "x", "latest": "y"}}
		})},
		{"a sample twice", "appears twice", edit(func(m map[string]any) {
			samples := m["error_samples"].([]any)
			m["error_samples"] = append(samples, samples[0])
		})},
		{"a sample too long", "not a sample", edit(func(m map[string]any) {
			m["error_samples"].([]any)[0].(map[string]any)["latest"] = strings.Repeat("x", errtext.SampleRunes+1)
		})},
		{"a sample not trimmed", "not a sample", edit(func(m map[string]any) {
			m["error_samples"].([]any)[0].(map[string]any)["first"] = "boom\n"
		})},
		{"negative trend count", "trends: a count is negative", edit(func(m map[string]any) {
			m["trends"] = map[string]any{"consecutive_test_declines": -1}
		})},
		{"a relapse watch on an open circuit", "only a closed one has", edit(func(m map[string]any) {
			m["relapse"] = map[string]any{"reason": map[string]any{"kind": "consecutive_failures"}, "seen": 0, "opens": 1}
		})},
		{"a relapse watch of a completion", "not a reason a probe recovers from", edit(closedWithRelapse(map[string]any{"kind": "done_signals"}, 0, 1))},
		{"a relapse watch of a hold", "not a reason a probe recovers from", edit(closedWithRelapse(map[string]any{"kind": "aborted"}, 0, 1))},
		{"a relapse of a relapse of a relapse", "is not a signal", edit(closedWithRelapse(map[string]any{"kind": "relapse", "relapsed": "relapse"}, 0, 1))},
		{"a negative relapse count", "seen -1", edit(closedWithRelapse(map[string]any{"kind": "consecutive_failures"}, -1, 1))},
		{"a relapse watch of no open", "opens 0", edit(closedWithRelapse(map[string]any{"kind": "consecutive_failures"}, 0, 0))},
		{"open for a provider limit", "is not a reason for the circuit to open", edit(func(m map[string]any) {
			m["reason"] = map[string]any{"kind": "provider_limit"}
		})},
		{"a provider wait without its end", "a wait without the time it lifts", edit(func(m map[string]any) {
			m["provider_limit"] = map[string]any{"reason": map[string]any{"kind": "provider_limit"}}
		})},
		{"a provider stop with an end", "a stop with a time it lifts", edit(func(m map[string]any) {
			m["provider_limit"] = map[string]any{"reason": map[string]any{"kind": "provider_stopped"}, "until": "2026-01-19T17:00:00Z"}
		})},
		{"a provider limit of another kind", "is not a provider limit", edit(func(m map[string]any) {
			m["provider_limit"] = map[string]any{"reason": map[string]any{"kind": "aborted"}}
		})},
		{"a provider limit of an unknown kind", `unknown reason kind "gremlins"`, edit(func(m map[string]any) {
			m["provider_limit"] = map[string]any{"reason": map[string]any{"kind": "gremlins"}}
		})},
		{"negative limited iterations", "limited_iterations is negative", edit(func(m map[string]any) { m["limited_iterations"] = -1 })},
		{"a negative spend", "spend.total: a negative spend", edit(func(m map[string]any) {
			m["spend"] = map[string]any{"total": map[string]any{"input_tokens": 1, "output_tokens": 2, "cost_usd": -0.5}}
		})},
		{"a spend beyond float64", "cannot unmarshal number 1e999", []byte(`{"version":2,"spend":{"total":{"cost_usd":1e999}}}`)},
		{"an hour's spend without a time", "spend.hour[0]: no time", edit(func(m map[string]any) {
			m["spend"] = map[string]any{"total": map[string]any{}, "hour": []any{map[string]any{"input_tokens": 5}}}
		})},
		{"an hour's spend out of order", "spend.hour[1]: earlier than the entry before it", edit(func(m map[string]any) {
			m["spend"] = map[string]any{"total": map[string]any{}, "hour": []any{
				map[string]any{"at": "2026-01-19T09:10:00Z", "input_tokens": 5},
				map[string]any{"at": "2026-01-19T09:00:00Z", "input_tokens": 5},
			}}
		})},
		{"an hour's negative spend", "spend.hour[0]: a negative spend", edit(func(m map[string]any) {
			m["spend"] = map[string]any{"total": map[string]any{}, "hour": []any{map[string]any{"at": "2026-01-19T09:10:00Z", "output_tokens": -5}}}
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSnapshot(tc.data)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrCorruptState)
			var corrupt *StateError
			require.ErrorAs(t, err, &corrupt)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// closedWithRelapse returns an edit that makes a snapshot's circuit closed
// and gives it a relapse watch.
func closedWithRelapse(reason map[string]any, seen, opens int) func(m map[string]any) {
	return func(m map[string]any) {
		m["state"] = "CLOSED"
		m["reason"] = map[string]any{"kind": "none"}
		m["consecutive_opens"] = 0
		m["relapse"] = map[string]any{"reason": reason, "seen": seen, "opens": opens}
	}
}

// A closed circuit under a relapse watch is a valid state; the edits above
// spoil it one field at a time.
func TestARelapseWatchIsAValidState(t *testing.T) {
	m := validSnapshotJSON(t)
	closedWithRelapse(map[string]any{"kind": "consecutive_failures"}, 1, 2)(m)
	data, err := json.Marshal(m)
	require.NoError(t, err)
	_, err = ParseSnapshot(data)
	assert.NoError(t, err)
}

// A state written by the version before (no tasks, samples, trends or
// relapse watch) is read: what it lacks is zero, and the breaker goes on
// from it as the one that wrote it would have.
func TestVersion1StatesAreStillRead(t *testing.T) {
	data, err := os.ReadFile("testdata/snapshots/v1-open-after-failed-probe.json")
	require.NoError(t, err)
	require.Contains(t, string(data), `"version": 1`)
	snap, err := ParseSnapshot(data)
	require.NoError(t, err)

	b, clock := busyBreaker(t) // the same story, told by this version
	want := b.Stats()
	nb, _ := newTestBreaker(t, richConfig())
	nb.cfg.Now = clock.Now
	require.NoError(t, nb.Restore(snap))
	got := nb.Stats()
	assert.Nil(t, got.Failures.Samples, "version 1 kept no error text")
	got.Failures.Samples = want.Failures.Samples
	assert.Equal(t, want, got)

	// It writes version 2, which reads back the same.
	again := roundTrip(t, nb.Snapshot())
	assert.Equal(t, SnapshotVersion, again.data.Version)
	nb2, _ := newTestBreaker(t, richConfig())
	nb2.cfg.Now = clock.Now
	require.NoError(t, nb2.Restore(again))
	got2 := nb2.Stats()
	got2.Failures.Samples = want.Failures.Samples
	assert.Equal(t, want, got2)
}

// Version 2 stores the tasks, the samples, the trends and the relapse
// watch under their names.
func TestVersion2StoresTasksSamplesTrendsAndTheRelapseWatch(t *testing.T) {
	b, clock := newTestBreaker(t, Config{RelapseWindow: 3})
	b.Record(Iteration{Task: "05-00"})
	b.Skip()
	for i := range 3 {
		b.Record(Iteration{Task: "05-01", Err: errA(i), Progress: &Progress{FilesChanged: 1, TestsPassing: 5 - i, Errors: 2 + i}})
	}
	require.True(t, b.IsTripped())
	clock.Advance(DefaultConfig().Cooldown)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Task: "05-01", Progress: &Progress{FilesChanged: 1, TestsPassing: 2, Errors: 5}})
	require.Equal(t, Closed, b.State())

	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	text := string(data)
	sample := errA(2).Error()
	for _, want := range []string{
		`"version":2`,
		`"tasks":{"task":"05-01","task_iterations":4,"skipped":["05-00"]}`,
		`"error_samples":[{"fingerprint":"` + Fingerprint(sample) + `","first":"` + errA(0).Error() + `","latest":"` + sample + `"}]`,
		`"trends":{"consecutive_test_declines":3,"tests_before_decline":5,"consecutive_error_rises":3,"errors_before_rise":2,"errors":5}`,
		`"relapse":{"reason":{"kind":"same_task","count":3,"threshold":3,"fingerprint":"` + Fingerprint(sample) + `","task":"05-01","sample":"` + sample + `"},"seen":0,"opens":1}`,
	} {
		assert.Contains(t, text, want)
	}
	back := roundTrip(t, b.Snapshot())
	assert.Equal(t, b.Snapshot().data, back.data)
}

// Restore validates too: a snapshot built in Go that is inconsistent is
// refused, and the breaker keeps its state.
func TestRestoreRefusesAnInvalidSnapshotAndKeepsTheBreaker(t *testing.T) {
	b, _ := busyBreaker(t)
	before := b.Stats()
	for name, spoil := range map[string]func(s *snapshotData){
		"unknown state":       func(s *snapshotData) { s.State = State(9) },
		"unknown reason kind": func(s *snapshotData) { s.Reason.Kind = ReasonKind(200) },
		"negative iterations": func(s *snapshotData) { s.Iterations = -1 },
		"last failed, no fingerprint": func(s *snapshotData) {
			s.LastFailed, s.LastFingerprint = true, ""
		},
		"history with an unknown cause": func(s *snapshotData) { s.History[0].Cause = Cause(99) },
		"old version":                   func(s *snapshotData) { s.Version = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			snap := b.Snapshot()
			spoil(&snap.data)
			err := b.Restore(snap)
			assert.ErrorIs(t, err, ErrCorruptState)
			assert.Equal(t, before, b.Stats())
		})
	}
}

// The JSON keys of Reason cover all its fields, so none is lost in a
// snapshot.
func TestReasonJSONHasEveryField(t *testing.T) {
	r := Reason{Kind: ReasonRelapse, Count: 1, Threshold: 2, Window: 3, Baseline: 4.5, Current: 6, Fingerprint: "f", Message: "m",
		Task: "t", Sample: "s", Relapsed: ReasonOutputDecline}
	data, err := json.Marshal(r)
	require.NoError(t, err)
	var back Reason
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, r, back)
	assert.Equal(t, `{"kind":"relapse","count":1,"threshold":2,"window":3,"baseline":4.5,"current":6,"fingerprint":"f","message":"m",`+
		`"task":"t","sample":"s","relapsed":"output_decline"}`, string(data))
}

// Unknown values of the enumerations cannot be written: their numbers
// would mean something else to another version.
func TestUnknownEnumValuesDoNotMarshal(t *testing.T) {
	for _, v := range []any{State(5), ReasonKind(250), WorkKind(9), Cause(77)} {
		_, err := json.Marshal(v)
		assert.Error(t, err, "%T", v)
	}
}

// Restoring arbitrary bytes never panics: either ParseSnapshot refuses
// them as corrupt, or the breaker restores them and its own snapshot
// restores to the same snapshot again.
func FuzzRestoreFromArbitraryBytes(f *testing.F) {
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte("null"))
	b, err := New(richConfig())
	if err != nil {
		f.Fatal(err)
	}
	data, _ := json.Marshal(b.Snapshot())
	f.Add(data)
	b.RecordFailure("boom")
	b.Record(Iteration{Err: errA(1), Progress: &Progress{OutputLength: 3}, Approach: "x", Work: WorkTestFix})
	b.ForceOpen("stop")
	data, _ = json.Marshal(b.Snapshot())
	f.Add(data)
	v1, _ := os.ReadFile("testdata/snapshots/v1-open-after-failed-probe.json")
	f.Add(v1)
	f.Add([]byte(`{"version":2,"saved_at":"2026-01-19T09:00:00Z","state":"CLOSED","reason":{"kind":"none"},"opens":1,"iterations":4,"total_failures":3,` +
		`"errors":[{"fingerprint":"98e3498d","count":3}],"last_fingerprint":"98e3498d","last_fingerprint_count":3,` +
		`"tasks":{"task":"05-01","task_iterations":4,"skipped":["05-00"]},` +
		`"error_samples":[{"fingerprint":"98e3498d","first":"a","latest":"b"}],` +
		`"trends":{"consecutive_test_declines":3,"tests_before_decline":5,"errors":5},` +
		`"relapse":{"reason":{"kind":"same_task","count":3,"threshold":3,"task":"05-01"},"seen":1,"opens":1}}`))
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cfg := Config{Progress: ProgressRules{ScoreWindow: maxWindow, CircularApproachWindow: maxWindow, TestFixWindow: maxWindow}, RelapseWindow: maxWindow, Now: func() time.Time { return now }}

	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := ParseSnapshot(data)
		if err != nil {
			// A version from the future is not corrupt: it is refused as newer.
			if !errors.Is(err, ErrCorruptState) && !errors.Is(err, ErrNewerState) {
				t.Fatalf("error matches neither ErrCorruptState nor ErrNewerState: %v", err)
			}
			return
		}
		b1, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, b1.Restore(snap))
		s1 := b1.Snapshot()
		out, err := json.Marshal(s1)
		require.NoError(t, err)
		again, err := ParseSnapshot(out)
		require.NoError(t, err, "a restored breaker's snapshot parses: %s", out)
		b2, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, b2.Restore(again))
		out2, err := json.Marshal(b2.Snapshot())
		require.NoError(t, err)
		require.Equal(t, string(out), string(out2))
		require.False(t, strings.Contains(string(out), "ReasonKind("))
	})
}

// The example state in the persistence guide is a valid snapshot, so what
// the guide shows a user is what a breaker reads.
func TestPersistenceGuideExampleIsAValidSnapshot(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("docs", "persistence.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(guide), "```json\n")
	require.True(t, ok, "the guide has no JSON example")
	example, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)

	snap, err := ParseSnapshot([]byte(example))
	require.NoError(t, err)
	b, _ := newTestBreaker(t, Config{})
	require.NoError(t, b.Restore(snap))
	s := b.Stats()
	assert.Equal(t, 4, s.Iterations)
	assert.Equal(t, map[string]int{"6621f966": 1, "98e3498d": 3}, s.Failures.Counts)
}
