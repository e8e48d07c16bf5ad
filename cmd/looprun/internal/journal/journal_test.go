package journal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

func entry(kind Kind, n int) Entry {
	return Entry{Kind: kind, Text: "x", At: t0.Add(time.Duration(n) * time.Minute), Loop: "loop", Iteration: n}
}

func TestTheJournalReadsBackWhatWasWrittenInOrderAcrossItsRotation(t *testing.T) {
	path := Path(filepath.Join(t.TempDir(), ".loopbreaker"), "loop")
	w := NewWriter(path)
	line, err := entry(IterationRan, 1).Encode()
	require.NoError(t, err)
	w.max = int64(3 * len(line)) // three lines a file
	for n := 1; n <= 5; n++ {
		require.NoError(t, w.Append(entry(IterationRan, n)))
	}
	got, skipped, err := Read(path)
	require.NoError(t, err)
	assert.Zero(t, skipped)
	var numbers []int
	for _, e := range got {
		numbers = append(numbers, e.Iteration)
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, numbers, "the part moved aside, then the file")

	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "it holds what the agent printed")

	for n := 6; n <= 9; n++ {
		require.NoError(t, w.Append(entry(IterationRan, n)))
	}
	got, _, err = Read(path)
	require.NoError(t, err)
	assert.Equal(t, 4, got[0].Iteration, "at most twice the size kept: the oldest go")
	assert.Len(t, got, 6)

	require.NoError(t, w.Remove())
	got, _, err = Read(path)
	require.NoError(t, err)
	assert.Empty(t, got, "a journal removed is no entries, and no error")
}

func TestALineCutShortIsSkippedAndCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loop.journal.jsonl")
	a, _ := entry(IterationRan, 1).Encode()
	b, _ := entry(IterationRan, 2).Encode()
	data := append(append(append([]byte{}, a...), "{\"event\":\"iteration\",\"te"...), '\n')
	data = append(data, b...)
	data = append(data, b[:len(b)/2]...) // being written
	require.NoError(t, os.WriteFile(path, data, 0o600))
	got, skipped, err := Read(path)
	require.NoError(t, err)
	assert.Len(t, got, 2)
	assert.Equal(t, 2, skipped)
}

func TestATailReadsTheWholeLinesOthersAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	w := NewWriter(path)
	require.NoError(t, w.Append(entry(CircuitOpened, 1)))
	tail := NewTail(path)
	got, err := tail.Next()
	require.NoError(t, err)
	assert.Empty(t, got, "what was there before it started is not read")

	require.NoError(t, w.Append(entry(SessionEnded, 2)))
	half, _ := entry(CircuitOpened, 3).Encode()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(half[:10])
	require.NoError(t, err)
	got, err = tail.Next()
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, SessionEnded, got[0].Kind)

	_, err = f.Write(half[10:])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err = tail.Next()
	require.NoError(t, err)
	require.Len(t, got, 1, "the line once whole")
	assert.Equal(t, 3, got[0].Iteration)

	require.NoError(t, os.Remove(path))
	require.NoError(t, w.Append(entry(GaveUp, 4)))
	got, err = tail.Next()
	require.NoError(t, err)
	require.Len(t, got, 1, "a file made anew is read from its start")
	assert.Equal(t, GaveUp, got[0].Kind)
}

// breakerAt returns a breaker on a clock the test moves.
func breakerAt(t *testing.T, cfg loopbreaker.Config) (*loopbreaker.CircuitBreaker, *time.Time) {
	now := t0
	cfg.Now = func() time.Time { return now }
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	return cb, &now
}

// told is a recorder's journal and notifications, in memory.
type told struct {
	journal, notified []Entry
}

func newRecorder(t *testing.T, s loopbreaker.Stats, now func() time.Time) (*Recorder, *told) {
	dir := t.TempDir()
	out := &told{}
	r := NewRecorder(RecorderConfig{
		Journal: NewWriter(Path(dir, "loop")),
		Notify:  func(e Entry) { out.notified = append(out.notified, e) },
		Failed:  func(err error) { t.Errorf("journal: %v", err) },
		Base:    Entry{Loop: "loop", Host: "build-7", Source: FromLooprun},
		Now:     now,
	}, s)
	t.Cleanup(func() {
		var err error
		out.journal, _, err = Read(Path(dir, "loop"))
		require.NoError(t, err)
	})
	return r, out
}

func kinds(es []Entry) []Kind {
	var ks []Kind
	for _, e := range es {
		ks = append(ks, e.Kind)
	}
	return ks
}

func TestTheRecorderTellsEachTransitionOnceAndNotifiesThoseAPersonWants(t *testing.T) {
	cfg := loopbreaker.DefaultConfig()
	cfg.Cooldown = time.Minute
	cb, now := breakerAt(t, cfg)
	rec, out := newRecorder(t, cb.Stats(), func() time.Time { return *now })
	fail := func() {
		cb.Check()
		cb.Record(loopbreaker.Iteration{Err: errors.New("boom")})
		s := cb.Stats()
		rec.Iteration(s.Iterations, Run{Result: ResultFailed}, s, func() *Stuck { return &Stuck{Fingerprint: s.Failures.LastFingerprint, Seen: 3} })
	}
	for range 3 {
		fail()
	}
	rec.Observe(cb.Stats(), nil) // nothing new: nothing told again
	*now = now.Add(time.Minute)
	rec.Observe(cb.Stats(), nil) // the cooldown is over: half-open
	cb.Check()
	cb.Record(loopbreaker.Iteration{})
	s := cb.Stats()
	rec.Iteration(s.Iterations, Run{Result: ResultOK}, s, nil)

	assert.Equal(t, []Kind{CircuitOpened, CircuitClosed}, kinds(out.notified))
	opened := out.notified[0]
	assert.Equal(t, "looprun loop on build-7: the circuit opened at iteration 3: 3 consecutive failures (threshold: 3); probe in 1m0s", opened.Text)
	assert.Equal(t, &Transition{From: "CLOSED", To: "OPEN", Cause: "signal"}, opened.Transition)
	assert.Equal(t, &Reason{Kind: "consecutive_failures", Text: "3 consecutive failures (threshold: 3)"}, opened.Reason)
	require.NotNil(t, opened.Stuck)
	assert.Equal(t, 3, opened.Stuck.Seen)
	assert.Equal(t, "looprun loop on build-7: the circuit closed at iteration 4: the probe passed", out.notified[1].Text)
	assert.Equal(t, "build-7", opened.Host, "the base's fields")
	assert.Equal(t, FromLooprun, opened.Source)
}

func TestTheJournalHoldsEveryEntryTheRecorderTold(t *testing.T) {
	cfg := loopbreaker.DefaultConfig()
	cfg.Cooldown = time.Minute
	cb, now := breakerAt(t, cfg)
	var out *told
	t.Run("night", func(t *testing.T) {
		var rec *Recorder
		rec, out = newRecorder(t, cb.Stats(), func() time.Time { return *now })
		rec.Started(Start{Command: "./agent.sh"}, cb.Stats())
		for range 3 {
			cb.Check()
			cb.Record(loopbreaker.Iteration{Err: errors.New("boom")})
			s := cb.Stats()
			rec.Iteration(s.Iterations, Run{Result: ResultFailed}, s, nil)
		}
		*now = now.Add(time.Minute)
		rec.Observe(cb.Stats(), nil)
		rec.Ended(Exit{Code: 3, Name: "tripped", Stopped: "3 consecutive failures (threshold: 3)", Iterations: 3}, cb.Stats())
	})
	assert.Equal(t, []Kind{Started, IterationRan, IterationRan, IterationRan, CircuitOpened, HalfOpen, Ended}, kinds(out.journal))
	assert.Equal(t, []Kind{CircuitOpened, Ended}, kinds(out.notified))
	assert.Equal(t, "looprun loop on build-7: stopped (tripped, exit code 3) after 3 iterations: 3 consecutive failures (threshold: 3)", out.notified[1].Text)
}

func TestACircuitAnotherRunnerOpenedIsToldToo(t *testing.T) {
	// A fleet's shared circuit: the figures change, the local history
	// does not.
	s := loopbreaker.Stats{State: loopbreaker.Closed, Iterations: 4}
	var out *told
	t.Run("fleet", func(t *testing.T) {
		var rec *Recorder
		rec, out = newRecorder(t, s, func() time.Time { return t0 })
		s.State, s.Opens, s.Reason = loopbreaker.Open, 1, loopbreaker.Reason{Kind: loopbreaker.ReasonConsecutiveFailures, Count: 5, Threshold: 5}
		rec.Observe(s, nil)
		rec.Observe(s, nil)
		s.State = loopbreaker.HalfOpen
		rec.Observe(s, nil)
		s.State, s.Opens = loopbreaker.Open, 2 // the probe failed elsewhere, between two looks
		rec.Observe(s, nil)
		s.State, s.Reason = loopbreaker.Closed, loopbreaker.Reason{}
		rec.Observe(s, nil)
	})
	assert.Equal(t, []Kind{CircuitOpened, HalfOpen, CircuitOpened, CircuitClosed}, kinds(out.journal))
	assert.Equal(t, "fleet", out.journal[0].Transition.Cause)
}

func TestASpendWarningIsToldOnceWhileItLastsAndACapOncePerCap(t *testing.T) {
	cfg := loopbreaker.DefaultConfig()
	cfg.Spend.MaxCostUSD = 10
	cb, now := breakerAt(t, cfg)
	rec, out := newRecorder(t, cb.Stats(), func() time.Time { return *now })
	for range 6 {
		d := cb.Check()
		if !d.Allow {
			rec.Refused(d, cb.Stats())
			rec.Refused(d, cb.Stats())
			continue
		}
		cb.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 2}})
		s := cb.Stats()
		rec.Iteration(s.Iterations, Run{Result: ResultOK, CostUSD: 2}, s, nil)
	}
	assert.Equal(t, []Kind{SpendWarning, SpendCap}, kinds(out.notified))
	assert.Contains(t, out.notified[0].Text, "Spend 80% of the cap: $8.00 of $10.00")
	assert.Equal(t, &Spend{CostUSD: 10, MaxCostUSD: 10}, out.notified[1].Spend)
}

func TestOnlyTheKindsAPersonIsToldOfAreNotified(t *testing.T) {
	for _, k := range []Kind{Started, IterationRan, HalfOpen, LimitWaited} {
		assert.False(t, k.Notified(), k)
	}
	for _, k := range NotifiedKinds {
		assert.True(t, k.Notified(), k)
	}
}

func TestAJournalThatCannotBeWrittenIsSaidOnce(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	var said []error
	var notified []Kind
	rec := NewRecorder(RecorderConfig{
		Journal: NewWriter(Path(filepath.Join(blocker, ".loopbreaker"), "loop")), // under a file: never a directory
		Notify:  func(e Entry) { notified = append(notified, e.Kind) },
		Failed:  func(err error) { said = append(said, err) },
	}, loopbreaker.Stats{})
	for range 3 {
		rec.Ended(Exit{Name: "done"}, loopbreaker.Stats{})
	}
	assert.Len(t, said, 1)
	assert.Len(t, notified, 3, "the notifications do not need the journal")
}
