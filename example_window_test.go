package loopbreaker_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// A subscriber lets the loop use 80% of the 5-hour window: the provider's
// reports (a transport reads them from the response headers) warn from
// 64%, and at 80% Check refuses until the window resets.
func ExampleCircuitBreaker_ObserveWindow() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Spend: loopbreaker.SpendRules{MaxWindowShare: 80},
		Now:   func() time.Time { return now },
	})
	reset := now.Add(2 * time.Hour)
	for _, used := range []float64{40, 70, 85} {
		cb.ObserveWindow(loopbreaker.Window{Length: 5 * time.Hour, Used: used, Reset: reset, Source: "api.anthropic.com"})
		d := cb.Check()
		for _, w := range d.Warnings {
			fmt.Println("warning:", w)
		}
		if !d.Allow {
			fmt.Println(d.Reason, "- retry after", d.RetryAfter, "-", d.State)
			fmt.Println(errors.Is(d.Err(), loopbreaker.ErrSpendCap))
		}
	}
	// Output:
	// warning: Window share 70% of the 5-hour window used (cap: 80%); resets 2026-01-19 11:00 UTC
	// Window share cap reached: 85% of the 5-hour window used (cap: 80%); resets 2026-01-19 11:00 UTC - retry after 2h0m0s - CLOSED
	// true
}

// A cap of $2 a minute over the default 5 minutes: $10 in any 5 minutes.
// A warning from $1.60 a minute, then a refusal until enough spend has
// left the window.
func Example_burnRate() {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cb, _ := loopbreaker.New(loopbreaker.Config{
		Spend: loopbreaker.SpendRules{MaxCostUSDPerMinute: 2},
		Now:   func() time.Time { return now },
	})
	for _, cost := range []float64{4, 4, 3} {
		cb.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: cost}})
		d := cb.Check()
		for _, w := range d.Warnings {
			fmt.Println("warning:", w)
		}
		if !d.Allow {
			fmt.Println(d.Reason, "- retry after", d.RetryAfter)
		}
		now = now.Add(time.Minute)
	}
	// Output:
	// warning: Burn rate near the cap: $1.60 a minute over the last 5 minutes (cap: $2.00 a minute)
	// Burn rate cap reached: $2.20 a minute over the last 5 minutes (cap: $2.00 a minute) - retry after 3m0s
}

// A fleet worker that keeps the usage windows in a shared store of its own
// makes the warnings and refusals a breaker would from what the store
// holds: the fleet's Spend warns, and the report at the cap refuses until
// the window resets.
func ExampleSpend_WindowShareWarning() {
	reset := time.Date(2026, 1, 19, 11, 0, 0, 0, time.UTC)
	fleet := loopbreaker.Spend{
		MaxWindowShare: 80,
		Windows: []loopbreaker.Window{
			{Length: 5 * time.Hour, Used: 70, Reset: reset, Source: "api.anthropic.com"},
			{Length: 7 * 24 * time.Hour, Used: 30, Source: "Claude Code"},
		},
	}
	if warning, ok := fleet.WindowShareWarning(); ok {
		fmt.Println("warning:", warning)
	}
	// A later report: the 5-hour window is used up to the cap.
	fleet.Windows[0].Used = 85
	if refusal, ok := fleet.Windows[0].ShareRefusal(fleet.MaxWindowShare, reset); ok {
		fmt.Println(refusal)
	}
	// Output:
	// warning: Window share 70% of the 5-hour window used (cap: 80%); resets 2026-01-19 11:00 UTC
	// Window share cap reached: 85% of the 5-hour window used (cap: 80%); resets 2026-01-19 11:00 UTC
}

// A fleet worker that adds up the fleet's spend in a store of its own
// asks the fleet's Spend whether its burn rate warns or refuses: $9 in the
// last 5 minutes against a cap of $2 a minute, then $11.
func ExampleSpend_BurnRateRefusal() {
	fleet := loopbreaker.Spend{
		InBurnWindow:        loopbreaker.Usage{CostUSD: 9},
		BurnWindow:          5 * time.Minute,
		MaxCostUSDPerMinute: 2,
	}
	if warning, ok := fleet.BurnRateWarning(); ok {
		fmt.Println("warning:", warning)
	}
	if _, ok := fleet.BurnRateRefusal(); !ok {
		fmt.Println("allowed")
	}
	fleet.InBurnWindow.CostUSD = 11
	if refusal, ok := fleet.BurnRateRefusal(); ok {
		fmt.Println(refusal)
	}
	// Output:
	// warning: Burn rate near the cap: $1.80 a minute over the last 5 minutes (cap: $2.00 a minute)
	// allowed
	// Burn rate cap reached: $2.20 a minute over the last 5 minutes (cap: $2.00 a minute)
}
