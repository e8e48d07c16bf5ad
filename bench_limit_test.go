package loopbreaker

import (
	"errors"
	"testing"
	"time"
)

// An iteration that failed with a 1 KB error: the default classifier now
// also looks for a provider limit in it before it is fingerprinted. The goal is
// at most twice what the fingerprint of the same text costs
// (BenchmarkFingerprint1KB), and no allocation from recognising that the
// text is no limit.
func BenchmarkRecordError1KB(b *testing.B) {
	cb, err := New(Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	if err != nil {
		b.Fatal(err)
	}
	it := Iteration{Err: errors.New(stackTrace(1 << 10))}
	b.ReportAllocs()
	b.SetBytes(1 << 10)
	for i := 0; i < b.N; i++ {
		cb.Record(it)
	}
}

// The fingerprint of the 1 KB error BenchmarkRecordError1KB records: what
// recognising a provider limit in it is measured against.
func BenchmarkFingerprint1KB(b *testing.B) {
	msg := stackTrace(1 << 10)
	b.ReportAllocs()
	b.SetBytes(1 << 10)
	for i := 0; i < b.N; i++ {
		fingerprint32(msg)
	}
}

// An iteration the provider refused: recognised, its reset read, the
// limit put in force.
func BenchmarkRecordProviderLimit(b *testing.B) {
	cb, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	it := Iteration{Err: errors.New("You've hit your limit · resets 5pm (Europe/Vilnius)")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cb.Record(it)
	}
}

// Check with a spend cap and an hourly cap set: the spend is summed on
// every Check.
func BenchmarkCheckRecordWithSpendCaps(b *testing.B) {
	cb, err := New(Config{Spend: SpendRules{MaxCostUSD: 1e12, MaxTokensPerHour: 1 << 60}})
	if err != nil {
		b.Fatal(err)
	}
	it := Iteration{Usage: Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.01}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
		cb.Record(it)
	}
}

// Check with a burn-rate cap beside an hourly cap, each window full (4096
// entries, the bound): both sums are kept as spend is added, so Check
// reads them.
func BenchmarkCheckRecordWithBurnRate(b *testing.B) {
	cb, err := New(Config{Spend: SpendRules{MaxCostUSDPerMinute: 1e12, MaxCostUSDPerHour: 1e12}})
	if err != nil {
		b.Fatal(err)
	}
	it := Iteration{Usage: Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.01}}
	for range maxSpendEntries {
		cb.Record(it)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
		cb.Record(it)
	}
}

// A transport's report of the usage windows of a response, and the Check
// that judges the window share.
func BenchmarkObserveWindowCheck(b *testing.B) {
	cb, err := New(Config{Spend: SpendRules{MaxWindowShare: 90}})
	if err != nil {
		b.Fatal(err)
	}
	w5 := Window{Length: 5 * time.Hour, Used: 42, Reset: time.Now().Add(time.Hour), Source: "api.anthropic.com"}
	w7 := Window{Length: 7 * 24 * time.Hour, Used: 30, Reset: time.Now().Add(72 * time.Hour), Source: "api.anthropic.com"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cb.ObserveWindow(w5)
		cb.ObserveWindow(w7)
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
	}
}
