package loopbreaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoublingCooldown(t *testing.T) {
	tests := []struct {
		name    string
		ceiling time.Duration
		base    time.Duration
		opens   []int
		want    []time.Duration
	}{
		{"doubles up to the ceiling", 4 * time.Minute, time.Minute,
			[]int{1, 2, 3, 4, 5}, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute, 4 * time.Minute}},
		{"a ceiling between two doublings", 3 * time.Minute, time.Minute,
			[]int{2, 3}, []time.Duration{2 * time.Minute, 3 * time.Minute}},
		{"a base above the ceiling", time.Minute, time.Hour,
			[]int{1}, []time.Duration{time.Minute}},
		{"no ceiling saturates instead of overflowing", 0, time.Hour,
			[]int{1, 10, 1000}, []time.Duration{time.Hour, 512 * time.Hour, maxDuration}},
		{"a negative ceiling is no ceiling", -time.Second, time.Second,
			[]int{3}, []time.Duration{4 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := DoublingCooldown(tt.ceiling)
			for i, opens := range tt.opens {
				assert.Equal(t, tt.want[i], policy(tt.base, opens), "opens %d", opens)
			}
		})
	}
}

// Seed 003: a failed probe opens the circuit again with twice the
// cooldown; a close starts again from the base.
func TestFailedProbeDoublesTheCooldown(t *testing.T) {
	b, clock := tripped(t, Config{Cooldown: time.Minute, CooldownPolicy: DoublingCooldown(3 * time.Minute)})
	s := b.Stats()
	assert.Equal(t, 1, s.ConsecutiveOpens)
	assert.Equal(t, time.Minute, s.Cooldown)
	assert.Equal(t, time.Minute, s.RetryAfter)

	probeFails := func() {
		t.Helper()
		require.True(t, b.Check().Probe)
		b.Record(Iteration{Err: errA(99)})
		require.True(t, b.IsTripped())
	}
	clock.Advance(time.Minute)
	probeFails()
	s = b.Stats()
	assert.Equal(t, 2, s.ConsecutiveOpens)
	assert.Equal(t, 2*time.Minute, s.Cooldown)
	assert.Equal(t, 2*time.Minute, b.Check().RetryAfter)

	clock.Advance(2*time.Minute - time.Second)
	assert.True(t, b.IsTripped(), "a second before the doubled cooldown ends")
	clock.Advance(time.Second)
	probeFails()
	assert.Equal(t, 3*time.Minute, b.Stats().Cooldown, "the ceiling")

	clock.Advance(3 * time.Minute)
	require.True(t, b.Check().Probe)
	b.RecordSuccess()
	s = b.Stats()
	assert.Equal(t, Closed, s.State)
	assert.Equal(t, 0, s.ConsecutiveOpens)
	assert.Equal(t, 3, s.Opens, "the open count over the breaker's life stays")

	for i := range 3 {
		b.Record(Iteration{Err: errB(i)})
	}
	assert.Equal(t, time.Minute, b.Stats().Cooldown, "a close starts again from the base")
}

// Seed 000: by default a failed probe restarts the same cooldown.
func TestDefaultCooldownStaysTheSame(t *testing.T) {
	b, clock := tripped(t, Config{})
	for range 3 {
		clock.Advance(DefaultConfig().Cooldown)
		require.True(t, b.Check().Probe)
		b.Record(Iteration{Err: errA(1)})
		assert.Equal(t, DefaultConfig().Cooldown, b.Stats().RetryAfter)
	}
	assert.Equal(t, 4, b.Stats().ConsecutiveOpens)
}

// A custom policy sees the base and the opens since the last close; a
// negative answer means no cooldown at all.
func TestCustomCooldownPolicy(t *testing.T) {
	var calls [][2]any
	b, _ := newTestBreaker(t, Config{
		Cooldown: time.Second,
		CooldownPolicy: func(base time.Duration, opens int) time.Duration {
			calls = append(calls, [2]any{base, opens})
			return -time.Hour
		},
	})
	for i := range 3 {
		b.Record(Iteration{Err: errA(i)})
	}
	assert.Equal(t, [][2]any{{time.Second, 1}}, calls)
	assert.Equal(t, HalfOpen, b.State(), "a negative cooldown is none")
}
