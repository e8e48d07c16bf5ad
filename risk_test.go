package loopbreaker

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// superkit's per-iteration status shows a stagnation risk of LOW, MEDIUM
// or HIGH: LOW while all goes well, MEDIUM when something went wrong,
// HIGH when one more bad iteration stops the loop or it is stopped.
func TestStagnationRisk(t *testing.T) {
	distinct := func(i int) error { return fmt.Errorf("KeyError: '%c'", 'a'+i) }
	tests := []struct {
		name  string
		cfg   Config
		story func(b *CircuitBreaker, clock *loopbreakertest.Clock)
		risk  Risk
	}{
		{"a fresh breaker", Config{}, func(*CircuitBreaker, *loopbreakertest.Clock) {}, RiskLow},
		{"a success", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) { b.RecordSuccess() }, RiskLow},
		{"a failure", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) { b.Record(Iteration{Err: distinct(0)}) }, RiskMedium},
		{"two failures: one short of three", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Err: distinct(0)})
			b.Record(Iteration{Err: distinct(1)})
		}, RiskHigh},
		{"a success after them", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Err: distinct(0)})
			b.Record(Iteration{Err: distinct(1)})
			b.RecordSuccess()
		}, RiskLow},
		{"open", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			for i := range 3 {
				b.Record(Iteration{Err: distinct(i)})
			}
		}, RiskHigh},
		{"half-open after the cooldown", Config{}, func(b *CircuitBreaker, clock *loopbreakertest.Clock) {
			for i := range 3 {
				b.Record(Iteration{Err: distinct(i)})
			}
			clock.Advance(DefaultConfig().Cooldown)
		}, RiskHigh},
		{"an iteration without progress", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Progress: &Progress{}})
		}, RiskMedium},
		{"the fourth of five same errors", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			for line := range 4 {
				b.RecordSuccess()
				b.Record(Iteration{Err: errA(line)})
			}
		}, RiskHigh},
		{"two failures on one task", Config{Failures: FailureRules{MaxConsecutive: 5}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Task: "05-01", Err: distinct(0)})
			b.Record(Iteration{Task: "05-01", Err: distinct(1)})
		}, RiskHigh},
		{"a negative score with one iteration left in the window", Config{Progress: ProgressRules{ScoreWindow: 3, MaxNoProgress: -1}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Progress: &Progress{}})                // -3
			b.Record(Iteration{Progress: &Progress{FilesChanged: 1}}) // +1: -2 over two of three
		}, RiskHigh},
		{"a warning in force", Config{Progress: ProgressRules{MaxTaskIterations: 1}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Task: "05-01"})
			b.Record(Iteration{Task: "05-01"})
		}, RiskMedium},
		{"the call budget 80% used", Config{Spend: SpendRules{MaxCallsPerHour: 10}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Calls: 8})
		}, RiskMedium},
		{"the relapse watch after a recovery", Config{RelapseWindow: 3}, func(b *CircuitBreaker, clock *loopbreakertest.Clock) {
			for i := range 3 {
				b.Record(Iteration{Err: distinct(i)})
			}
			clock.Advance(DefaultConfig().Cooldown)
			b.Check()
			b.RecordSuccess()
		}, RiskMedium},
		{"a complete loop", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Err: distinct(0)})
			b.Record(Iteration{Err: distinct(1)})
			b.Record(Iteration{Plan: &Plan{Done: 3}})
		}, RiskLow},
		{"a threshold of one is never one short", Config{Failures: FailureRules{MaxConsecutive: 1, MaxSameError: -1}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.RecordSuccess()
		}, RiskLow},
		{"failures with the signals off", Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1, MaxSameTask: -1}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			for i := range 10 {
				b.Record(Iteration{Task: "05-01", Err: distinct(i)})
			}
		}, RiskMedium},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, tt.cfg)
			tt.story(b, clock)
			s := b.Stats()
			assert.Equal(t, tt.risk, s.Risk)
			if tt.risk != RiskHigh || s.State == Closed {
				return
			}
			assert.Contains(t, tt.name, "open", "only the stories about an open circuit are HIGH for it")
		})
	}
}

func TestRiskNames(t *testing.T) {
	assert.Equal(t, "LOW", RiskLow.String())
	assert.Equal(t, "MEDIUM", RiskMedium.String())
	assert.Equal(t, "HIGH", RiskHigh.String())
	assert.Equal(t, "Risk(7)", Risk(7).String())

	data, err := json.Marshal(map[string]Risk{"risk": RiskHigh})
	require.NoError(t, err)
	assert.Equal(t, `{"risk":"HIGH"}`, string(data))
	var back map[string]Risk
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, RiskHigh, back["risk"])
	assert.Error(t, json.Unmarshal([]byte(`{"risk":"EXTREME"}`), &back))
	_, err = json.Marshal(Risk(7))
	assert.Error(t, err)
}
