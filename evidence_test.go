package loopbreaker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each fingerprint keeps the text of its first and of its latest failure,
// in Stats, keyed as ErrorCounts is.
func TestErrorSamplesKeepTheFirstAndTheLatestText(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	b.Record(Iteration{Err: errA(42)})
	b.Record(Iteration{Err: errB(7)})
	b.Record(Iteration{Err: errA(87)})
	b.RecordFailure(errA(99).Error())

	s := b.Stats()
	fpA, fpB := Fingerprint(errA(1).Error()), Fingerprint(errB(1).Error())
	assert.Equal(t, map[string]ErrorSample{
		fpA: {First: errA(42).Error(), Latest: errA(99).Error()},
		fpB: {First: errB(7).Error(), Latest: errB(7).Error()},
	}, s.Failures.Samples)
	assert.Equal(t, 3, s.Failures.Counts[fpA])

	s.Failures.Samples[fpA] = ErrorSample{}
	assert.Equal(t, errA(42).Error(), b.Stats().Failures.Samples[fpA].First, "the caller's copy")
}

// The same-error trip's reason keeps ralph-starter's text word for word,
// and carries the error text it stands for: Sample, which Detail quotes,
// as the Nity Loop quotes the message of a repeated error.
func TestSameErrorReasonsQuoteTheErrorText(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		record func(b *CircuitBreaker, clock *loopbreakertest.Clock)
		kind   ReasonKind
		text   string
	}{
		{"same error over the loop's life", Config{}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			for line := range 5 {
				b.Record(Iteration{Err: errA(line)})
				b.RecordSuccess()
			}
		}, ReasonSameError, "Same error repeated 5 times (threshold: 5)"},
		{"same error in a row", Config{Failures: FailureRules{MaxSameErrorInARow: 2}}, func(b *CircuitBreaker, _ *loopbreakertest.Clock) {
			b.Record(Iteration{Err: errA(3)})
			b.Record(Iteration{Err: errA(4)})
		}, ReasonSameErrorInARow, "Same error repeated 2 times in a row (threshold: 2)"},
		{"the probe failed", Config{}, func(b *CircuitBreaker, clock *loopbreakertest.Clock) {
			for range 3 {
				b.Record(Iteration{Progress: &Progress{}}) // no progress: it opens
			}
			clock.Advance(DefaultConfig().Cooldown)
			b.Check()
			b.Record(Iteration{Err: errA(4)})
		}, ReasonProbeFailed, "Half-open probe failed (error " + Fingerprint(errA(0).Error()) + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, tt.cfg)
			tt.record(b, clock)
			r := b.Stats().Reason
			require.Equal(t, tt.kind, r.Kind)
			assert.Equal(t, tt.text, b.TripReason(), "the text is unchanged")
			assert.Equal(t, tt.text, r.String())
			assert.Equal(t, Fingerprint(errA(0).Error()), r.Fingerprint)
			assert.Equal(t, errA(4).Error(), r.Sample, "the latest text of the error")
			assert.Equal(t, tt.text+`: "`+errA(4).Error()+`"`, r.Detail())
		})
	}
}

// Detail quotes in Go syntax, so that a multi-line error stays on one
// line; a reason without a sample is its String.
func TestReasonDetail(t *testing.T) {
	tests := []struct {
		name   string
		reason Reason
		detail string
	}{
		{"no sample", Reason{Kind: ReasonConsecutiveFailures, Count: 3, Threshold: 3}, "3 consecutive failures (threshold: 3)"},
		{"a sample", Reason{Kind: ReasonSameError, Count: 5, Threshold: 5, Sample: `KeyError: 'a'`},
			`Same error repeated 5 times (threshold: 5): "KeyError: 'a'"`},
		{"a multi-line sample", Reason{Kind: ReasonSameError, Count: 5, Threshold: 5, Sample: "panic: boom\n\tmain.go:3"},
			`Same error repeated 5 times (threshold: 5): "panic: boom\n\tmain.go:3"`},
		{"no reason", Reason{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.detail, tt.reason.Detail())
		})
	}
}

// A sample is the first 200 runes of the error's text, white space around
// them trimmed, as valid UTF-8, however long the error.
func TestSampleOf(t *testing.T) {
	long := strings.Repeat("ab", 600_000)
	tests := []struct{ name, text, sample string }{
		{"short", "exit status 1", "exit status 1"},
		{"trimmed", "\n\n  error: x  \n", "error: x"},
		{"empty", "", ""},
		{"white space alone", " \t\n", ""},
		{"cut to 200 runes", long, long[:200]},
		{"runes, not bytes", strings.Repeat("界", 300), strings.Repeat("界", 200)},
		{"trimmed after the cut", strings.Repeat("x", 199) + "   more", strings.Repeat("x", 199)},
		{"invalid UTF-8 replaced", "bad \xff\xfe byte", "bad \uFFFD byte"},
		{"a NUL kept", "a\x00b", "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.sample, sampleOf(tt.text))
		})
	}
}

// The samples are kept for the most recently seen fingerprints only,
// Config.Failures.MaxSamples of them; a fingerprint seen again after its
// sample was forgotten starts a new one.
func TestErrorSamplesAreBounded(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxSamples: 2, MaxConsecutive: -1, MaxSameError: -1}})
	errs := []string{"KeyError: 'a'", "KeyError: 'b'", "KeyError: 'c'"}
	for _, e := range errs {
		b.RecordFailure(e)
	}
	s := b.Stats()
	assert.Len(t, s.Failures.Counts, 3, "the counts are kept for every fingerprint")
	assert.Equal(t, map[string]ErrorSample{
		Fingerprint(errs[1]): {First: errs[1], Latest: errs[1]},
		Fingerprint(errs[2]): {First: errs[2], Latest: errs[2]},
	}, s.Failures.Samples)

	b.RecordFailure(errs[1]) // 'b' is the most recent now, 'c' the older
	b.RecordFailure("KeyError: 'a' ")
	s = b.Stats()
	assert.Equal(t, map[string]ErrorSample{
		Fingerprint(errs[0]): {First: "KeyError: 'a'", Latest: "KeyError: 'a'"},
		Fingerprint(errs[1]): {First: errs[1], Latest: errs[1]},
	}, s.Failures.Samples)
}

// The samples never outnumber the fingerprints of the error history.
func TestErrorSamplesFollowTheErrorHistory(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxFingerprints: 2, MaxConsecutive: -1}})
	for _, e := range []string{"KeyError: 'a'", "KeyError: 'b'", "KeyError: 'c'"} {
		b.RecordFailure(e)
	}
	s := b.Stats()
	require.Len(t, s.Failures.Counts, 2)
	assert.Len(t, s.Failures.Samples, 2)
	for fp := range s.Failures.Samples {
		assert.Contains(t, s.Failures.Counts, fp)
	}
}

// A negative Failures.MaxSamples keeps no error text anywhere: not in Stats,
// not in a reason, not in a snapshot.
func TestNoErrorSamplesWhenSwitchedOff(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxSamples: -1}})
	secret := errors.New("auth failed for token sk-live-12345")
	for range 5 {
		b.Record(Iteration{Err: secret})
		b.RecordSuccess()
	}
	s := b.Stats()
	require.Equal(t, ReasonSameError, s.Reason.Kind)
	assert.Nil(t, s.Failures.Samples)
	assert.Empty(t, s.Reason.Sample)
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "sk-live")
}

// Resume and Skip forget the samples with the error history; Reset too.
func TestManualControlsForgetTheSamples(t *testing.T) {
	for name, control := range map[string]func(b *CircuitBreaker){
		"resume": (*CircuitBreaker).Resume,
		"skip":   (*CircuitBreaker).Skip,
		"reset":  (*CircuitBreaker).Reset,
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := newTestBreaker(t, Config{})
			b.RecordFailure("boom")
			require.Len(t, b.Stats().Failures.Samples, 1)
			control(b)
			assert.Nil(t, b.Stats().Failures.Samples)
		})
	}
}

// The samples survive a restart, and a breaker restored with a smaller
// Failures.MaxSamples keeps the most recent ones.
func TestErrorSamplesSurviveARestart(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1}})
	for _, e := range []string{"KeyError: 'a'", "KeyError: 'b'", "KeyError: 'c'"} {
		b.RecordFailure(e)
	}
	before := b.Stats().Failures.Samples

	same, _ := restart(t, b, Config{Failures: FailureRules{MaxConsecutive: -1}}, clock.Now())
	assert.Equal(t, before, same.Stats().Failures.Samples)

	smaller, _ := restart(t, b, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSamples: 1}}, clock.Now())
	assert.Equal(t, map[string]ErrorSample{
		Fingerprint("KeyError: 'c'"): {First: "KeyError: 'c'", Latest: "KeyError: 'c'"},
	}, smaller.Stats().Failures.Samples)

	none, _ := restart(t, b, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSamples: -1}}, clock.Now())
	assert.Nil(t, none.Stats().Failures.Samples)
}

// The worst-case snapshot of the default error history, with the most
// samples a Config allows, every sample and task name as long as it can
// be and made of the runes JSON escapes most ('<' becomes \u003c), and
// every window, list and history full, still fits a state file: about 25
// MB against FileStore's 64 MiB.
func TestWorstCaseSnapshotFitsAStateFile(t *testing.T) {
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	worst := strings.Repeat("<", errtext.SampleRunes)
	d := snapshotData{Version: SnapshotVersion, SavedAt: now, State: Closed}
	for i := range DefaultConfig().Failures.MaxFingerprints {
		fp := formatFingerprint(uint32(i))
		d.Errors = append(d.Errors, errorCount{Fingerprint: fp, Count: 1 << 40})
		if i < maxErrorSamples {
			d.ErrorSamples = append(d.ErrorSamples, errorSampleData{Fingerprint: fp, ErrorSample: ErrorSample{First: worst, Latest: worst}})
		}
	}
	d.Iterations, d.TotalFailures = 1<<50, 1<<50
	for range maxWindow {
		d.ProgressScores = append(d.ProgressScores, -1<<40)
		d.Approaches = append(d.Approaches, approachData{Fingerprint: "ffffffff"})
		d.Works = append(d.Works, WorkImplementation)
	}
	for i := range maxCallEntries {
		d.Calls = append(d.Calls, callsData{At: now.Add(time.Duration(i)), Calls: 1 << 40})
	}
	reason := Reason{Kind: ReasonSameTask, Count: 1 << 40, Threshold: 1 << 40, Task: worst, Fingerprint: "ffffffff", Sample: worst}
	for range historyLen {
		d.History = append(d.History, Transition{At: now, From: Closed, To: Open, Reason: reason, Iteration: 1 << 50})
	}
	d.Tasks.Task, d.Tasks.TaskIterations = worst, 1<<40
	for i := range maxSkippedTasks {
		d.Tasks.Skipped = append(d.Tasks.Skipped, fmt.Sprintf("%03d", i)+worst[3:])
	}
	require.NoError(t, Snapshot{data: d}.Validate())

	data, err := json.Marshal(Snapshot{data: d})
	require.NoError(t, err)
	t.Logf("worst-case snapshot: %d bytes (%.1f MB), limit %d", len(data), float64(len(data))/1e6, MaxStateFileSize)
	assert.Less(t, len(data), MaxStateFileSize)
	assert.Less(t, len(data), 26_000_000)
}

// A sample or a task name is always valid UTF-8 of at most its runes,
// with no white space around it, and whatever is valid of the text's
// start, kept as it was.
func FuzzClipText(f *testing.F) {
	for _, s := range []string{"", " ", "exit status 1", "\xff\xfe", strings.Repeat("界", 250), "a\u00a0", "\t\n x \r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, clip := range []struct {
			f     func(string) string
			runes int
		}{{sampleOf, errtext.SampleRunes}, {taskName, taskNameRunes}} {
			got := clip.f(text)
			if !utf8.ValidString(got) {
				t.Fatalf("not valid UTF-8: %q", got)
			}
			if n := utf8.RuneCountInString(got); n > clip.runes {
				t.Fatalf("%d runes, more than %d", n, clip.runes)
			}
			if strings.TrimFunc(got, unicode.IsSpace) != got {
				t.Fatalf("white space around %q", got)
			}
			if clip.f(got) != got {
				t.Fatalf("clipping %q again changes it", got)
			}
			if utf8.ValidString(text) && !strings.Contains(text, got) {
				t.Fatalf("%q is not part of the valid text", got)
			}
		}
	})
}

// Whatever text a host gives as an error or a task, the breaker's own
// snapshot of it is a valid state that restores to the same snapshot.
func FuzzSnapshotOfArbitraryTaskAndErrorText(f *testing.F) {
	f.Add("05-01 add login", "TypeError: x at a.ts:1:2")
	f.Add(" \t", "")
	f.Add("\xff\xfe", "\x00\n<&>\u2028")
	f.Add(strings.Repeat("界", 300), strings.Repeat("é ", 300))
	now := time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)
	cfg := Config{RelapseWindow: 3, Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, task, text string) {
		b, err := New(cfg)
		require.NoError(t, err)
		for range 3 {
			b.Record(Iteration{Task: task, Err: errors.New(text)})
		}
		b.Skip()
		b.Record(Iteration{Task: task, Err: errors.New(text), Progress: &Progress{Errors: len(text)}})
		data, err := json.Marshal(b.Snapshot())
		require.NoError(t, err)
		snap, err := ParseSnapshot(data)
		require.NoError(t, err, "%s", data)
		b2, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, b2.Restore(snap))
		again, err := json.Marshal(b2.Snapshot())
		require.NoError(t, err)
		require.Equal(t, string(data), string(again))
		assert.True(t, utf8.ValidString(b2.Stats().Reason.Detail()))
	})
}
