package loopbreaker

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var limitFuzzSeeds = []string{
	"",
	"You've hit your limit · resets 5pm (Europe/Vilnius)",
	"You've hit your session limit · resets Mon 12:00am",
	"Claude usage limit reached. Your limit will reset at 7pm (Asia/Tokyo).",
	"Claude AI usage limit reached|1766502000",
	"Your usage allocation has been disabled by your admin",
	"API Error: Request rejected (429)",
	`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1769709600}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","content":"You've hit your limit"}]}}`,
	`429 {"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`,
	"Error 429, Message: x, Status: RESOURCE_EXHAUSTED, Details: [map[retryDelay:37s]]",
}

// checkProviderLimit fails t unless l keeps the promises of a recognised
// limit: a known kind, a reason, and a reset only on a wait, never before
// now and at most maxProviderLimitWait after it.
func checkProviderLimit(t *testing.T, l Limit, ok bool, now time.Time) {
	t.Helper()
	if !ok {
		if l != (Limit{}) {
			t.Fatalf("no limit, but %+v", l)
		}
		return
	}
	if int(l.Kind) >= limitKindCount || l.Why == "" {
		t.Fatalf("limit %+v", l)
	}
	if l.Reset.IsZero() {
		return
	}
	if l.Kind == LimitStop || l.Reset.Before(now) || l.Reset.Sub(now) > maxProviderLimitWait {
		t.Fatalf("limit %+v at %v", l, now)
	}
}

// FuzzProviderLimitInText: any text gives a limit that keeps its promises,
// or none, without panicking.
func FuzzProviderLimitInText(f *testing.F) {
	for _, s := range limitFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		l, ok := ProviderLimitInText(text, limitNow)
		checkProviderLimit(t, l, ok, limitNow)
	})
}

// FuzzProviderLimitOf: an error of any text, bare or wrapped, gives a
// limit that keeps its promises, and DefaultClassify agrees with it.
func FuzzProviderLimitOf(f *testing.F) {
	for _, s := range limitFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, err := range []error{errors.New(text), fmt.Errorf("agent: %w", errors.New(text))} {
			l, ok := ProviderLimitOf(err, limitNow)
			checkProviderLimit(t, l, ok, limitNow)
			want := Failure
			if ok {
				want = l.outcome()
			}
			if got := DefaultClassify(err); got != want {
				t.Fatalf("DefaultClassify %v, ProviderLimitOf %+v %v", got, l, ok)
			}
		}
	})
}

// FuzzRecordLimitText: a breaker fed any error text keeps its promises: a
// limit refuses with a RetryAfter within the ceiling, and anything else
// counts as a failure.
func FuzzRecordLimitText(f *testing.F) {
	for _, s := range limitFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		b, err := New(Config{Now: func() time.Time { return limitNow }, Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
		if err != nil {
			t.Fatal(err)
		}
		b.Record(Iteration{Err: errors.New(text)})
		d := b.Check()
		s := b.Stats()
		switch {
		case d.Allow:
			if s.Failures.Total+s.NeutralIterations != 1 {
				t.Fatalf("allowed after %+v", s)
			}
		case d.Reason.Kind == ReasonProviderLimit:
			if d.RetryAfter <= 0 || d.RetryAfter > maxProviderLimitWait || s.LimitedIterations != 1 {
				t.Fatalf("limit %+v, retry after %v", d.Reason, d.RetryAfter)
			}
		case d.Reason.Kind == ReasonProviderStopped:
			if d.RetryAfter != 0 {
				t.Fatalf("a stop with a retry after %v", d.RetryAfter)
			}
		default:
			t.Fatalf("refused for %v", d.Reason)
		}
		if _, err := b.Snapshot().MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	})
}
