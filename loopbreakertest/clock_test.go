package loopbreakertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var start = time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)

func TestSleepMovesTheClockInsteadOfWaiting(t *testing.T) {
	clock := NewClock(start)
	assert.NoError(t, clock.Sleep(context.Background(), 90*time.Minute))
	assert.NoError(t, clock.Sleep(context.Background(), -time.Second))
	assert.Equal(t, start.Add(90*time.Minute), clock.Now(), "a negative sleep does not move it")
	assert.Equal(t, []time.Duration{90 * time.Minute, -time.Second}, clock.Slept())

	clock.Advance(10 * time.Minute)
	assert.Equal(t, start.Add(100*time.Minute), clock.Now())
	assert.Len(t, clock.Slept(), 2, "Advance is no sleep")
}

func TestASleepOnADoneContextDoesNotHappen(t *testing.T) {
	clock := NewClock(start)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, clock.Sleep(ctx, time.Hour), context.Canceled)
	assert.Equal(t, start, clock.Now())
	assert.Nil(t, clock.Slept())
}

func TestSleptIsTheCallersCopy(t *testing.T) {
	clock := NewClock(start)
	_ = clock.Sleep(context.Background(), time.Second)
	clock.Slept()[0] = time.Hour
	assert.Equal(t, []time.Duration{time.Second}, clock.Slept())
}
