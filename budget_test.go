package loopbreaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNoCallBudgetByDefault(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for range 500 {
		d := b.Check()
		require.True(t, d.Allow)
		assert.Equal(t, Budget{}, d.Budget)
		assert.Empty(t, warningsText(d))
		b.Record(Iteration{Calls: 3})
	}
	assert.Equal(t, -1, b.Stats().Budget.Left())
}

// Seeds 002 and 003: a warning at 80% of the budget, a refusal at 100%
// that does not open the circuit and says when a call frees up.
func TestCallBudgetWarnsThenRefuses(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	for i := range 7 {
		d := b.Check()
		require.True(t, d.Allow)
		assert.Empty(t, warningsText(d), "call %d", i+1)
		b.RecordSuccess()
		clock.Advance(time.Minute)
	}
	b.RecordSuccess() // the eighth call, at 9:07
	d := b.Check()
	require.True(t, d.Allow)
	assert.Equal(t, Budget{Limit: 10, Used: 8}, d.Budget)
	assert.Equal(t, 2, d.Budget.Left())
	assert.Equal(t, "Call budget 80% used: 8 of 10 calls in the last hour, 2 left", warningsText(d))

	b.Record(Iteration{Calls: 2})
	d = b.Check()
	assert.False(t, d.Allow)
	assert.Equal(t, Closed, d.State, "the circuit does not open")
	assert.False(t, d.Complete)
	assert.Equal(t, ReasonCallBudget, d.Reason.Kind)
	assert.Equal(t, "Call budget exhausted: 10 calls in the last hour (limit: 10)", d.Reason.String())
	assert.Equal(t, 53*time.Minute, d.RetryAfter, "the first call, at 9:00, leaves the window at 10:00")
	assert.False(t, b.IsTripped())

	err := d.Err()
	require.ErrorIs(t, err, ErrCallBudget)
	assert.NotErrorIs(t, err, ErrOpen)
	assert.NotErrorIs(t, err, ErrComplete)
	var refused *RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, 53*time.Minute, refused.RetryAfter)
	assert.Equal(t, "loopbreaker: Call budget exhausted: 10 calls in the last hour (limit: 10); next call in 53m0s", err.Error())

	s := b.Stats()
	assert.Equal(t, 0, s.Opens)
	assert.Equal(t, Budget{Limit: 10, Used: 10}, s.Budget)
	assert.Equal(t, 53*time.Minute, s.BudgetRetryAfter)

	clock.Advance(53*time.Minute - time.Nanosecond)
	assert.False(t, b.Check().Allow, "a rolling hour, to the nanosecond")
	clock.Advance(time.Nanosecond)
	d = b.Check()
	assert.True(t, d.Allow)
	assert.Equal(t, 9, d.Budget.Used)
}

// A rolling window, not a clock hour: calls made at 9:50 still count at
// 10:10.
func TestCallBudgetIsARollingHour(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	clock.Advance(50 * time.Minute)
	b.Record(Iteration{Calls: 6})
	clock.Advance(20 * time.Minute)
	b.Record(Iteration{Calls: 4})
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, 40*time.Minute, d.RetryAfter)

	clock.Advance(40 * time.Minute)
	d = b.Check()
	assert.True(t, d.Allow)
	assert.Equal(t, Budget{Limit: 10, Used: 4}, d.Budget)
}

// A refusal names the time until enough calls leave the window, not just
// the first of them.
func TestCallBudgetRetryAfterWaitsForEnoughCalls(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	b.Record(Iteration{Calls: 1})
	clock.Advance(10 * time.Minute)
	b.Record(Iteration{Calls: 1})
	clock.Advance(10 * time.Minute)
	b.Record(Iteration{Calls: 10}) // the host went over the budget
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, 12, d.Reason.Count)
	assert.Equal(t, time.Hour, d.RetryAfter, "12 calls: the 10 at 9:20 must leave too")
}

func TestCallsThatCount(t *testing.T) {
	tests := []struct {
		name string
		it   Iteration
		used int
	}{
		{"an iteration that says nothing is one call", Iteration{}, 1},
		{"an iteration that made 7 calls", Iteration{Calls: 7}, 7},
		{"a negative count is one call", Iteration{Calls: -3}, 1},
		{"a failed iteration", Iteration{Err: errA(1), Calls: 2}, 2},
		{"a cancelled iteration spent its calls too", Iteration{Err: errCanceled, Calls: 5}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 100}})
			b.Record(tt.it)
			assert.Equal(t, tt.used, b.Stats().Budget.Used)
		})
	}
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 100}})
	b.RecordSuccess()
	b.RecordFailure("boom")
	assert.Equal(t, 2, b.Stats().Budget.Used, "the seed-style calls count one each")
}

// The budget outlives Reset: the calls were made.
func TestResetKeepsTheCallBudget(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 5}})
	b.Record(Iteration{Calls: 5})
	b.Reset()
	assert.False(t, b.Check().Allow)
}

// A half-open circuit whose budget is spent keeps its probe for when a
// call frees up.
func TestCallBudgetKeepsTheProbe(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 3}})
	for i := range 3 {
		b.Record(Iteration{Err: errA(i)})
	}
	require.True(t, b.IsTripped())
	clock.Advance(DefaultConfig().Cooldown)
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonCallBudget, d.Reason.Kind)
	assert.Equal(t, HalfOpen, d.State)

	clock.Advance(d.RetryAfter)
	d = b.Check()
	assert.True(t, d.Allow)
	assert.True(t, d.Probe)
}

func TestCallBudgetMemoryIsBounded(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 1_000_000}})
	for range 20_000 {
		b.Record(Iteration{})
		clock.Advance(time.Millisecond)
	}
	assert.LessOrEqual(t, len(b.calls.entries)-b.calls.head, maxCallEntries)
	assert.Equal(t, 20_000, b.Stats().Budget.Used, "no call is lost")
	clock.Advance(time.Hour)
	assert.Equal(t, 0, b.Stats().Budget.Used)
}

func TestBudgetWarningBoundaries(t *testing.T) {
	tests := []struct {
		budget Budget
		want   string
	}{
		{Budget{}, ""},
		{Budget{Limit: 100, Used: 79}, ""},
		{Budget{Limit: 100, Used: 80}, "Call budget 80% used: 80 of 100 calls in the last hour, 20 left"},
		{Budget{Limit: 100, Used: 100}, "Call budget 100% used: 100 of 100 calls in the last hour, 0 left"},
		{Budget{Limit: 3, Used: 2}, ""},
		{Budget{Limit: 3, Used: 3}, "Call budget 100% used: 3 of 3 calls in the last hour, 0 left"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.budget.Warning(), "%+v", tt.budget)
	}
}

// A restarted loop must not get its budget back: the calls of the rolling
// hour are in the snapshot.
func TestCallBudgetSurvivesARestart(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	b.Record(Iteration{Calls: 4})
	clock.Advance(30 * time.Minute)
	b.Record(Iteration{Calls: 6})
	snap := roundTrip(t, b.Snapshot())
	require.Len(t, snap.data.Calls, 2)

	restarted, err := New(Config{Spend: SpendRules{MaxCallsPerHour: 10}, Now: clock.Now})
	require.NoError(t, err)
	require.NoError(t, restarted.Restore(snap))
	d := restarted.Check()
	require.False(t, d.Allow)
	assert.Equal(t, 30*time.Minute, d.RetryAfter)

	clock.Advance(30 * time.Minute)
	assert.Equal(t, Budget{Limit: 10, Used: 6}, restarted.Check().Budget)
}

func TestCorruptCallsAreRefused(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	b.Record(Iteration{Calls: 2})
	clock.Advance(time.Minute)
	b.Record(Iteration{Calls: 2})
	for name, spoil := range map[string]func(s *snapshotData){
		"no calls in an entry": func(s *snapshotData) { s.Calls[0].Calls = 0 },
		"no time":              func(s *snapshotData) { s.Calls[1].At = time.Time{} },
		"out of order":         func(s *snapshotData) { s.Calls[0], s.Calls[1] = s.Calls[1], s.Calls[0] },
		"a stall called complete": func(s *snapshotData) {
			s.Completion.Complete = Reason{Kind: ReasonNoProgress}
		},
		"a negative done streak": func(s *snapshotData) { s.Completion.ConsecutiveDoneSignals = -1 },
	} {
		s := b.Snapshot()
		spoil(&s.data)
		assert.ErrorIs(t, s.Validate(), ErrCorruptState, name)
	}
}

// Calls saved at T0 and restored under a clock two hours earlier never
// keep the budget spent for longer than its window: they count as made
// when the breaker was restored.
func TestRestoreUnderAnEarlierClockNeverHoldsTheBudgetPastItsWindow(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	b.Record(Iteration{Calls: 10})
	snap := b.Snapshot()

	clock.Advance(-2 * time.Hour)
	restored, err := New(Config{Spend: SpendRules{MaxCallsPerHour: 10}, Now: clock.Now})
	require.NoError(t, err)
	require.NoError(t, restored.Restore(roundTrip(t, snap)))

	d := restored.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonCallBudget, d.Reason.Kind)
	assert.Equal(t, callBudgetWindow, d.RetryAfter, "an hour from now at most, not three")

	clock.Advance(callBudgetWindow)
	assert.True(t, restored.Check().Allow)
}

// The same holds when the clock of a running breaker is set back: the calls
// already made leave the window an hour from the step at the latest.
func TestClockSetBackNeverHoldsTheBudgetPastItsWindow(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}})
	b.Record(Iteration{Calls: 10})
	clock.Advance(-2 * time.Hour)

	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, callBudgetWindow, d.RetryAfter)
	clock.Advance(callBudgetWindow)
	assert.True(t, b.Check().Allow)
}
