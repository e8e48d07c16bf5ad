package timer

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// These use the real clock, but wait no longer than a zero or an
// hour-long timer that a done context cuts short.

func TestASleepOfNothingReturnsAtOnce(t *testing.T) {
	assert.NoError(t, Sleep(context.Background(), 0))
	assert.NoError(t, Sleep(context.Background(), -time.Hour))
}

func TestADoneContextEndsASleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
}
