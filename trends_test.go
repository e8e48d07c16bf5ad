package loopbreaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measured is one iteration of a trend story: nil for an iteration
// without Progress, else the figure it reports.
func measured(n int) *int { return &n }

// superkit's trend alerts are warnings in the decision, with the figures,
// never stops: the passing tests declining for 3 iterations, and the
// errors of an iteration rising for 3.
func TestTrendWarnings(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		kind    ReasonKind
		figures []*int // TestsPassing or Errors, one per iteration
		text    string // "": no warning after the last
	}{
		{"tests fall three times in a row", Config{}, ReasonTestsDeclining,
			[]*int{measured(40), measured(38), measured(35), measured(31)},
			"Passing tests fell in 3 measured iterations in a row, from 40 to 31 (threshold: 3)"},
		{"two falls are not yet a trend", Config{}, ReasonTestsDeclining,
			[]*int{measured(40), measured(38), measured(35)}, ""},
		{"tests holding steady break the trend", Config{}, ReasonTestsDeclining,
			[]*int{measured(40), measured(38), measured(38), measured(35), measured(31)}, ""},
		{"the trend counts from where it began", Config{}, ReasonTestsDeclining,
			[]*int{measured(40), measured(38), measured(39), measured(35), measured(31), measured(30)},
			"Passing tests fell in 3 measured iterations in a row, from 39 to 30 (threshold: 3)"},
		{"unmeasured iterations are left out", Config{}, ReasonTestsDeclining,
			[]*int{measured(40), nil, measured(38), nil, measured(35), measured(31)},
			"Passing tests fell in 3 measured iterations in a row, from 40 to 31 (threshold: 3)"},
		{"tests recovering end the warning", Config{}, ReasonTestsDeclining,
			[]*int{measured(40), measured(38), measured(35), measured(31), measured(33)}, ""},
		{"a threshold of its own", Config{Progress: ProgressRules{TestsDeclining: 1}}, ReasonTestsDeclining,
			[]*int{measured(40), measured(39)},
			"Passing tests fell in 1 measured iterations in a row, from 40 to 39 (threshold: 1)"},
		{"tests declining switched off", Config{Progress: ProgressRules{TestsDeclining: -1}}, ReasonTestsDeclining,
			[]*int{measured(40), measured(38), measured(35), measured(31), measured(20)}, ""},

		{"errors rise three times in a row", Config{}, ReasonErrorsRising,
			[]*int{measured(1), measured(2), measured(4), measured(7)},
			"Errors rose in 3 measured iterations in a row, from 1 to 7 (threshold: 3)"},
		{"two rises are not yet a trend", Config{}, ReasonErrorsRising,
			[]*int{measured(1), measured(2), measured(4)}, ""},
		{"errors holding steady break the trend", Config{}, ReasonErrorsRising,
			[]*int{measured(1), measured(2), measured(2), measured(4), measured(7)}, ""},
		{"unmeasured iterations are left out of the errors too", Config{}, ReasonErrorsRising,
			[]*int{measured(0), nil, measured(3), measured(5), nil, measured(9)},
			"Errors rose in 3 measured iterations in a row, from 0 to 9 (threshold: 3)"},
		{"fewer errors end the warning", Config{}, ReasonErrorsRising,
			[]*int{measured(1), measured(2), measured(4), measured(7), measured(3)}, ""},
		{"errors rising switched off", Config{Progress: ProgressRules{ErrorsRising: -1}}, ReasonErrorsRising,
			[]*int{measured(1), measured(2), measured(4), measured(7), measured(9)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBreaker(t, tt.cfg)
			for _, n := range tt.figures {
				it := Iteration{}
				if n != nil {
					it.Progress = &Progress{FilesChanged: 1} // progress all along: no stop
					if tt.kind == ReasonTestsDeclining {
						it.Progress.TestsPassing = *n
					} else {
						it.Progress.Errors = *n
					}
				}
				b.Record(it)
			}
			d := b.Check()
			assert.True(t, d.Allow, "a warning is not a stop")
			if tt.text == "" {
				assert.Nil(t, d.Warnings)
				return
			}
			require.Len(t, d.Warnings, 1)
			assert.Equal(t, tt.kind, d.Warnings[0].Kind)
			assert.Equal(t, tt.text, d.Warnings[0].String())
			assert.Equal(t, tt.text, warningsText(d))
		})
	}
}

// The warnings' evidence is in their fields, for a host that shows its
// own text.
func TestTrendWarningFigures(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for i, tests := range []int{50, 48, 45, 44} {
		b.Record(Iteration{Progress: &Progress{FilesChanged: 1, TestsPassing: tests, Errors: i * 2}})
	}
	s := b.Stats()
	assert.Equal(t, 3, s.Progress.ConsecutiveTestDeclines)
	assert.Equal(t, 3, s.Progress.ConsecutiveErrorRises)
	assert.Equal(t, []Reason{
		{Kind: ReasonTestsDeclining, Count: 3, Threshold: 3, Baseline: 50, Current: 44},
		{Kind: ReasonErrorsRising, Count: 3, Threshold: 3, Baseline: 0, Current: 6},
	}, s.Warnings)
}

// Every warning in force is in the decision, the call budget's first, and
// warningsText(Decision) joins their texts for a host that prints one line.
func TestDecisionCarriesEveryWarning(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxCallsPerHour: 10}, Progress: ProgressRules{MaxTaskIterations: 3}})
	for i := range 4 {
		b.Record(Iteration{Task: "add login", Progress: &Progress{FilesChanged: 1, TestsPassing: 20 - i}, Calls: 2})
	}
	d := b.Check()
	require.True(t, d.Allow)
	kinds := []ReasonKind{}
	for _, w := range d.Warnings {
		kinds = append(kinds, w.Kind)
	}
	assert.Equal(t, []ReasonKind{ReasonCallBudgetWarning, ReasonLongTask, ReasonTestsDeclining}, kinds)
	assert.Equal(t, "Call budget 80% used: 8 of 10 calls in the last hour, 2 left; "+
		`Task "add login" has taken 4 iterations in a row (warning above 3); `+
		"Passing tests fell in 3 measured iterations in a row, from 20 to 17 (threshold: 3)", warningsText(d))
	assert.Equal(t, d.Warnings, b.Stats().Warnings)

	d.Warnings[0].Count = 99
	assert.Equal(t, 8, b.Check().Warnings[0].Count, "the decision's slice is the caller's")
}

// While the circuit is open, the decision still carries the warnings; a
// complete loop has none.
func TestWarningsOfRefusedDecisions(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Progress: ProgressRules{MaxTaskIterations: 1}})
	for i := range 3 {
		b.Record(Iteration{Task: "add login", Err: errA(i)})
	}
	d := b.Check()
	require.False(t, d.Allow)
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, ReasonLongTask, d.Warnings[0].Kind)

	clock.Advance(time.Hour)
	require.True(t, b.Check().Probe)
	b.Record(Iteration{Task: "add login", Done: true})
	b.Record(Iteration{Task: "add login", Done: true})
	d = b.Check()
	require.True(t, d.Complete)
	assert.Nil(t, d.Warnings)
	assert.Nil(t, b.Stats().Warnings)
}

// The trends survive a restart: the warning is in force again at once,
// and the next iteration goes on counting.
func TestTrendsSurviveARestart(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	for i, tests := range []int{40, 38, 35} {
		b.Record(Iteration{Progress: &Progress{FilesChanged: 1, TestsPassing: tests, Errors: i}})
	}
	nb, _ := restart(t, b, Config{}, clock.Now())
	assert.Nil(t, nb.Check().Warnings, "two of each: not yet")
	nb.Record(Iteration{Progress: &Progress{FilesChanged: 1, TestsPassing: 30, Errors: 5}})
	s := nb.Stats()
	require.Len(t, s.Warnings, 2)
	assert.Equal(t, "Passing tests fell in 3 measured iterations in a row, from 40 to 30 (threshold: 3)", s.Warnings[0].String())
	assert.Equal(t, "Errors rose in 3 measured iterations in a row, from 0 to 5 (threshold: 3)", s.Warnings[1].String())

	again, _ := restart(t, nb, Config{}, clock.Now())
	assert.Equal(t, s.Warnings, again.Check().Warnings)
}
