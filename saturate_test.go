package loopbreaker

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The saturating operations give the exact result when it fits in an int,
// and the nearest end of int when it does not.
func TestSaturatingArithmeticNeverWraps(t *testing.T) {
	root := int(math.Sqrt(float64(math.MaxInt))) + 1 // its square overflows
	values := []int{math.MinInt, math.MinInt + 1, -root, -100, -2, -1, 0, 1, 2, 3, 100, root, math.MaxInt - 1, math.MaxInt}
	clamp := func(z *big.Int) int {
		switch {
		case z.Cmp(big.NewInt(math.MaxInt)) > 0:
			return math.MaxInt
		case z.Cmp(big.NewInt(math.MinInt)) < 0:
			return math.MinInt
		}
		return int(z.Int64())
	}
	for _, a := range values {
		for _, b := range values {
			x, y := big.NewInt(int64(a)), big.NewInt(int64(b))
			assert.Equal(t, clamp(new(big.Int).Add(x, y)), addSat(a, b), "%d + %d", a, b)
			assert.Equal(t, clamp(new(big.Int).Sub(x, y)), subSat(a, b), "%d - %d", a, b)
			assert.Equal(t, clamp(new(big.Int).Mul(x, y)), mulSat(a, b), "%d * %d", a, b)
		}
	}
}

// A call budget as large as an int holds warns from 80%, never at 0%.
func TestHugeCallBudgetWarnsOnlyFromEightyPercent(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: math.MaxInt}})
	b.Record(Iteration{Calls: 5})
	d := b.Check()
	assert.True(t, d.Allow)
	assert.Empty(t, warningsText(d))

	b.Record(Iteration{Calls: math.MaxInt / 10 * 8})
	assert.Contains(t, warningsText(b.Check()), "Call budget 80% used")
}

// Two iterations of math.MaxInt calls spend the budget: the count
// saturates instead of wrapping negative.
func TestHugeCallCountsSpendTheBudget(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 100}})
	b.Record(Iteration{Calls: math.MaxInt})
	b.Record(Iteration{Calls: math.MaxInt})

	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, ReasonCallBudget, d.Reason.Kind)
	assert.Equal(t, math.MaxInt, d.Budget.Used)

	// One of the two entries leaves the window: the other still spends it.
	clock.Advance(time.Second)
	b.Record(Iteration{Calls: 1})
	clock.Advance(callBudgetWindow - time.Second)
	d = b.Check()
	assert.True(t, d.Allow, "the huge calls left the window; one call is left")
	assert.Equal(t, 1, d.Budget.Used)
}

// Huge progress is huge progress: neither a jump of the passing tests to
// math.MaxInt nor weights near it make the progress score negative.
func TestHugeProgressNeverTripsTheProgressScore(t *testing.T) {
	cases := map[string]struct {
		weights ScoreWeights
		steps   []Progress
	}{
		"passing tests jump to MaxInt": {
			steps: []Progress{{TestsPassing: 0}, {TestsPassing: math.MaxInt, FilesChanged: 1}, {TestsPassing: math.MaxInt, FilesChanged: 1}},
		},
		"passing tests jump by two thirds of MaxInt": {
			steps: []Progress{{TestsPassing: 0}, {TestsPassing: math.MaxInt / 3 * 2, FilesChanged: 1}, {TestsPassing: math.MaxInt / 3 * 2, FilesChanged: 1}},
		},
		"passing tests jump from MinInt": {
			steps: []Progress{{TestsPassing: math.MinInt}, {TestsPassing: math.MaxInt, FilesChanged: 1}, {TestsPassing: math.MaxInt, FilesChanged: 1}},
		},
		"huge weights": {
			weights: ScoreWeights{TestPassing: math.MaxInt, TaskCompleted: math.MaxInt, FilesChanged: math.MaxInt, NoFilesChanged: -1},
			steps:   []Progress{{TasksCompleted: 3, FilesChanged: 1}, {TasksCompleted: math.MaxInt, FilesChanged: 1}, {TasksCompleted: 2, FilesChanged: 1}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{Progress: ProgressRules{ScoreWindow: 3, ScoreWeights: c.weights}})
			for i := range c.steps {
				b.Record(Iteration{Progress: &c.steps[i]})
			}
			s := b.Stats()
			assert.Equal(t, Closed, s.State, "huge progress tripped: %s", s.Reason)
			assert.GreaterOrEqual(t, s.Progress.Score, 0)
		})
	}
}

// Output lengths near math.MaxInt are judged like any others: a collapse
// from them trips the output-decline signal with the right evidence, and
// steady huge output does not.
func TestHugeOutputLengthsAreJudgedLikeAnyOthers(t *testing.T) {
	huge := math.MaxInt / 2
	b, _ := newTestBreaker(t, Config{})
	for range 3 {
		b.Record(Iteration{Progress: &Progress{OutputLength: huge, FilesChanged: 1}})
	}
	assert.Equal(t, Closed, b.State())
	b.Record(Iteration{Progress: &Progress{OutputLength: 10}})
	s := b.Stats()
	require.Equal(t, Open, s.State)
	assert.Equal(t, ReasonOutputDecline, s.Reason.Kind)
	assert.InDelta(t, 99, s.Reason.Count, 1, "at lengths past 2^53 the percentage is as exact as floating point")
}
