package loopbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// ProviderLimitOf reads a provider limit, and when it lifts, from an
// error: here Claude Code's message, in the time zone it names.
func ExampleProviderLimitOf() {
	now := time.Date(2026, 1, 29, 14, 29, 33, 0, time.UTC)
	err := fmt.Errorf("claude -p: %w", errors.New("You've hit your limit · resets 5pm (Europe/Vilnius)"))
	l, ok := loopbreaker.ProviderLimitOf(err, now)
	fmt.Println(ok, l.Kind, l.Reset.Format(time.RFC3339))
	fmt.Println(l.Why)

	l, _ = loopbreaker.ProviderLimitOf(errors.New(`{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`), now)
	fmt.Println(l.Kind, "-", l.Why)

	_, ok = loopbreaker.ProviderLimitOf(context.DeadlineExceeded, now)
	fmt.Println("a timeout is a limit:", ok)
	// Output:
	// true wait 2026-01-29T17:00:00+02:00
	// You've hit your limit (resets 2026-01-29 17:00 Europe/Vilnius)
	// stop - API error insufficient_quota
	// a timeout is a limit: false
}

// The agent hits Claude's usage limit. The iteration is no failure: Wait
// sleeps until the reset, and the loop goes on.
func Example_providerLimit() {
	now := time.Date(2026, 1, 29, 13, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Now: func() time.Time { return now },
		Sleep: func(ctx context.Context, d time.Duration) error {
			fmt.Println("waiting", d)
			now = now.Add(d)
			return nil
		},
	})
	results := []error{nil, errors.New("You've hit your limit · resets 3pm (UTC)"), nil}
	for _, err := range results {
		if _, werr := cb.Wait(context.Background()); werr != nil {
			fmt.Println("stopped:", werr)
			return
		}
		fmt.Println(now.Format("15:04"), "iteration:", err)
		cb.Record(loopbreaker.Iteration{Err: err})
		if s := cb.Stats(); s.ProviderLimit.Kind != loopbreaker.ReasonNone {
			fmt.Println(s.ProviderLimit, "until", s.ProviderLimitUntil.Format("15:04"))
		}
		now = now.Add(10 * time.Minute)
	}
	s := cb.Stats()
	fmt.Println("failures:", s.Failures.Total, "limited:", s.LimitedIterations)
	// Output:
	// 13:00 iteration: <nil>
	// 13:10 iteration: You've hit your limit · resets 3pm (UTC)
	// Provider limit: You've hit your limit (resets 2026-01-29 15:00 UTC) until 15:00
	// waiting 1h40m0s
	// 15:00 iteration: <nil>
	// failures: 0 limited: 1
}

// A transport that sees each call reports a 429 as it happens, before the
// iteration ends: every Check of the breaker refuses until Retry-After.
func ExampleCircuitBreaker_ObserveLimit() {
	now := time.Date(2026, 1, 29, 13, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{Now: func() time.Time { return now }})
	cb.ObserveLimit(loopbreaker.Limit{Kind: loopbreaker.LimitThrottle, Reset: now.Add(20 * time.Second), Why: "HTTP 429"})
	d := cb.Check()
	fmt.Println(d.Allow, d.Reason, "- retry after", d.RetryAfter)
	fmt.Println(errors.Is(d.Err(), loopbreaker.ErrProviderLimit), errors.Is(d.Err(), loopbreaker.ErrOpen))
	// Output:
	// false Provider limit: HTTP 429 - retry after 20s
	// true false
}

// A cap of $2 over the loop's life: a warning from 80%, then a stop that
// is no failure and that no waiting ends.
func Example_spendCap() {
	cb, _ := loopbreaker.New(loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 2}})
	costs := []float64{0.9, 0.8, 0.5, 0.4}
	for _, cost := range costs {
		d := cb.Check()
		if !d.Allow {
			fmt.Println("stopped:", d.Reason)
			fmt.Println(errors.Is(d.Err(), loopbreaker.ErrSpendCap), "state", d.State)
			break
		}
		for _, w := range d.Warnings {
			fmt.Println(w)
		}
		cb.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 20000, OutputTokens: 1500, CostUSD: cost}})
	}
	s := cb.Stats().Spend
	fmt.Printf("spent $%.2f and %d tokens\n", s.Total.CostUSD, s.Total.Tokens())
	// Output:
	// Spend 85% of the cap: $1.70 of $2.00 over the loop's life, $0.30 left
	// stopped: Spend cap reached: $2.20 over the loop's life (cap: $2.00)
	// true state CLOSED
	// spent $2.20 and 64500 tokens
}
