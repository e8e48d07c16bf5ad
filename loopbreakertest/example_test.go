package loopbreakertest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
)

// A test of a runner: the breaker opens after three failures, and Wait
// sleeps out the 30-second cooldown on the test's clock, at once.
func ExampleClock() {
	clock := loopbreakertest.NewClock(time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC))
	cfg := loopbreaker.DefaultConfig()
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	cfg.Cooldown = 30 * time.Second
	cb, err := loopbreaker.New(cfg)
	if err != nil {
		panic(err)
	}
	for range 3 {
		cb.Record(loopbreaker.Iteration{Err: errors.New("exit status 1")})
	}
	fmt.Println(cb.Check().Allow)

	d, err := cb.Wait(context.Background())
	fmt.Println(d.Allow, err, clock.Slept())
	// Output:
	// false
	// true <nil> [30s]
}
