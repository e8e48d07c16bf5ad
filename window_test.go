package loopbreaker

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The 5-hour and weekly windows, as Anthropic's headers and Claude Code
// name them.
const (
	fiveHours = 5 * time.Hour
	aWeek     = 7 * 24 * time.Hour
)

// A subscriber keeps a fifth of the 5-hour window for themselves: the loop
// is warned from 80% of its cap (64%), and at 80% Check refuses, the
// circuit closed and no failure counted, until the window resets; Wait
// sleeps until then, and the loop goes on.
func TestWindowShareWaitsForTheWindowsReset(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 80}})
	reset := testStart.Add(3 * time.Hour)
	b.ObserveWindow(Window{Length: fiveHours, Used: 50, Reset: reset, Source: "api.anthropic.com"})
	d := b.Check()
	assert.True(t, d.Allow)
	assert.Empty(t, warningsText(d))

	b.ObserveWindow(Window{Length: fiveHours, Used: 64.2, Reset: reset, Source: "api.anthropic.com"})
	d = b.Check()
	assert.True(t, d.Allow)
	assert.Equal(t, "Window share 64% of the 5-hour window used (cap: 80%); resets 2026-01-19 12:00 UTC", warningsText(d))
	assert.Equal(t, ReasonWindowShareWarning, d.Warnings[0].Kind)

	b.RecordSuccess()
	clock.Advance(time.Hour)
	b.ObserveWindow(Window{Length: fiveHours, Used: 81, Reset: reset, Source: "api.anthropic.com"})
	d = b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, Closed, d.State, "the circuit does not open")
	assert.Equal(t, ReasonWindowShare, d.Reason.Kind)
	assert.Equal(t, "Window share cap reached: 81% of the 5-hour window used (cap: 80%); resets 2026-01-19 12:00 UTC", d.Reason.String())
	assert.Equal(t, Reason{Kind: ReasonWindowShare, Count: 81, Threshold: 80, Window: 300, Message: "resets 2026-01-19 12:00 UTC"}, d.Reason)
	assert.Equal(t, 2*time.Hour, d.RetryAfter)
	assert.ErrorIs(t, d.Err(), ErrSpendCap)
	assert.NotErrorIs(t, d.Err(), ErrOpen)
	assert.True(t, d.WaitHelps())
	assert.Equal(t, 0, b.Stats().Failures.Total)

	d, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, d.Allow, "the window reset: what it said is over")
	assert.Equal(t, reset, clock.Now())
	assert.Empty(t, b.Stats().Spend.Windows)
}

// With StopAtWindowShare the loop stops at the cap for a person: no waiting
// ends it, not even the window's reset; Resume lifts it, and the next
// report at the cap stops it again.
func TestWindowShareStopWaitsForAPerson(t *testing.T) {
	b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 90, StopAtWindowShare: true}})
	reset := testStart.Add(2 * 24 * time.Hour)
	b.ObserveWindow(Window{Length: aWeek, Used: 92.5, Reset: reset, Source: "Claude Code"})
	d := b.Check()
	require.False(t, d.Allow)
	assert.Equal(t, "Window share cap reached: 92% of the weekly window used (cap: 90%); no waiting ends this: resume the loop, or raise the cap", d.Reason.String())
	assert.Zero(t, d.RetryAfter)
	assert.False(t, d.WaitHelps())
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	_, err := b.Wait(ctx)
	assert.ErrorIs(t, err, ErrSpendCap, "Wait returns at once")

	clock.Advance(3 * 24 * time.Hour)
	assert.Equal(t, ReasonWindowShare, b.Check().Reason.Kind, "the reset does not lift a stop")
	b.Resume()
	assert.True(t, b.Check().Allow)
	b.ObserveWindow(Window{Length: aWeek, Used: 95, Reset: clock.Now().Add(time.Hour), Source: "Claude Code"})
	assert.Equal(t, ReasonWindowShare, b.Check().Reason.Kind)
	b.Reset()
	assert.True(t, b.Check().Allow, "Reset forgets the windows too")
}

// What a report counts for, report by report: the latest of a window
// replaces the one before, windows of other lengths and sources are kept
// apart, and the one whose reset lies furthest speaks for them; a report
// without a reset lasts its window's length; a reset already past, and a
// share that is no share, count for nothing.
func TestWindowReports(t *testing.T) {
	type report struct {
		after time.Duration // the clock advances this much before it
		w     Window
	}
	at := func(d time.Duration) time.Time { return testStart.Add(d) }
	cases := []struct {
		name    string
		reports []report
		check   time.Duration // the clock advances this much before Check
		want    string        // the refusal's text; "" allows
		wait    time.Duration
		windows int // the reports in force after Check
	}{
		{"below the cap", []report{{0, Window{Length: fiveHours, Used: 79.9, Reset: at(time.Hour)}}}, 0, "", 0, 1},
		{"at the cap", []report{{0, Window{Length: fiveHours, Used: 80, Reset: at(time.Hour)}}}, 0,
			"Window share cap reached: 80% of the 5-hour window used (cap: 80%); resets 2026-01-19 10:00 UTC", time.Hour, 1},
		{"a later report of the window replaces it", []report{
			{0, Window{Length: fiveHours, Used: 95, Reset: at(time.Hour)}},
			{time.Minute, Window{Length: fiveHours, Used: 3, Reset: at(5 * time.Hour)}},
		}, 0, "", 0, 1},
		{"the weekly window holds longer than the 5-hour one", []report{
			{0, Window{Length: fiveHours, Used: 99, Reset: at(time.Hour)}},
			{0, Window{Length: aWeek, Used: 85, Reset: at(50 * time.Hour)}},
		}, 0, "Window share cap reached: 85% of the weekly window used (cap: 80%); resets 2026-01-21 11:00 UTC", 50 * time.Hour, 2},
		{"two sources are two windows", []report{
			{0, Window{Length: fiveHours, Used: 90, Reset: at(time.Hour), Source: "Claude Code"}},
			{0, Window{Length: fiveHours, Used: 10, Reset: at(time.Hour), Source: "Codex"}},
		}, 0, "Window share cap reached: 90% of the 5-hour window used (cap: 80%); resets 2026-01-19 10:00 UTC", time.Hour, 2},
		{"a window that reset is over", []report{{0, Window{Length: fiveHours, Used: 90, Reset: at(time.Hour)}}}, time.Hour, "", 0, 0},
		{"a report with a reset past forgets the window", []report{
			{0, Window{Length: fiveHours, Used: 90, Reset: at(time.Hour)}},
			{0, Window{Length: fiveHours, Used: 90, Reset: at(-time.Second)}},
		}, 0, "", 0, 0},
		{"without a reset, a report lasts the window's length", []report{{0, Window{Length: fiveHours, Used: 90}}}, 4 * time.Hour,
			"Window share cap reached: 90% of the 5-hour window used (cap: 80%); no reset time given: counted until 2026-01-19 14:00 UTC", time.Hour, 1},
		{"...and is over after it", []report{{0, Window{Length: fiveHours, Used: 90}}}, fiveHours, "", 0, 0},
		{"without a length either, Limits.Wait", []report{{0, Window{Used: 90}}}, 0,
			"Window share cap reached: 90% of the usage window used (cap: 80%); no reset time given: counted until 2026-01-19 10:00 UTC", time.Hour, 1},
		{"a reset months off counts 35 days", []report{{0, Window{Length: aWeek, Used: 90, Reset: at(90 * 24 * time.Hour)}}}, 0,
			"Window share cap reached: 90% of the weekly window used (cap: 80%); resets 2026-04-19 09:00 UTC", maxProviderLimitWait, 1},
		{"more than 100% counts as 100", []report{{0, Window{Length: fiveHours, Used: 250, Reset: at(time.Hour)}}}, 0,
			"Window share cap reached: 100% of the 5-hour window used (cap: 80%); resets 2026-01-19 10:00 UTC", time.Hour, 1},
		{"a negative share is no report", []report{{0, Window{Length: fiveHours, Used: -5, Reset: at(time.Hour)}}}, 0, "", 0, 0},
		{"NaN is no report", []report{{0, Window{Length: fiveHours, Used: math.NaN(), Reset: at(time.Hour)}}}, 0, "", 0, 0},
		{"a window of 90 minutes", []report{{0, Window{Length: 90 * time.Minute, Used: 80, Reset: at(time.Hour)}}}, 0,
			"Window share cap reached: 80% of the 90-minute window used (cap: 80%); resets 2026-01-19 10:00 UTC", time.Hour, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, clock := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 80}})
			for _, r := range tc.reports {
				clock.Advance(r.after)
				b.ObserveWindow(r.w)
			}
			clock.Advance(tc.check)
			d := b.Check()
			if tc.want == "" {
				assert.True(t, d.Allow, "%s", d.Reason)
			} else {
				assert.False(t, d.Allow)
				assert.Equal(t, tc.want, d.Reason.String())
				assert.Equal(t, tc.wait, d.RetryAfter)
			}
			assert.Len(t, b.Stats().Spend.Windows, tc.windows)
		})
	}
}

// A breaker keeps the latest report of at most 8 windows: a ninth drops
// the oldest report.
func TestWindowReportsAreBounded(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	for i := range maxWindows + 1 {
		b.ObserveWindow(Window{Length: time.Duration(i+1) * time.Hour, Used: float64(i), Reset: testStart.Add(time.Hour)})
	}
	ws := b.Stats().Spend.Windows
	require.Len(t, ws, maxWindows)
	assert.Equal(t, 2*time.Hour, ws[0].Length, "the first report went")
	assert.Equal(t, "2-hour window", ws[0].Name())
}

// A report that is over makes room: the ninth window drops it, not the
// oldest report still in force.
func TestAReportThatIsOverMakesRoomForANinthWindow(t *testing.T) {
	b, clock := newTestBreaker(t, Config{})
	for i := range maxWindows {
		reset := testStart.Add(time.Hour)
		if i == 3 {
			reset = testStart.Add(time.Minute)
		}
		b.ObserveWindow(Window{Length: time.Duration(i+1) * time.Hour, Used: float64(i), Reset: reset})
	}
	clock.Advance(2 * time.Minute) // the 4-hour window's report is over
	b.ObserveWindow(Window{Length: 9 * time.Hour, Used: 9, Reset: testStart.Add(time.Hour)})
	ws := b.Stats().Spend.Windows
	require.Len(t, ws, maxWindows)
	assert.Equal(t, time.Hour, ws[0].Length, "the oldest report in force is kept")
	assert.Equal(t, 9*time.Hour, ws[maxWindows-1].Length)
}

// Without a cap the reports are kept, for Stats, and refuse nothing.
func TestWindowsWithoutACapRefuseNothing(t *testing.T) {
	b, _ := newTestBreaker(t, Config{})
	b.ObserveWindow(Window{Length: fiveHours, Used: 100, Reset: testStart.Add(time.Hour), Source: "api.anthropic.com"})
	d := b.Check()
	assert.True(t, d.Allow)
	assert.Empty(t, d.Warnings)
	s := b.Stats().Spend
	require.Len(t, s.Windows, 1)
	assert.Equal(t, Window{Length: fiveHours, Used: 100, Reset: testStart.Add(time.Hour), Source: "api.anthropic.com"}, s.Windows[0])
	assert.Zero(t, s.MaxWindowShare)
}

// The reports, and a window share's stop, are kept across a restart; a
// state saved before windows were kept reads as none.
func TestWindowsSurviveARestart(t *testing.T) {
	cfg := Config{Spend: SpendRules{MaxWindowShare: 80}}
	b, clock := newTestBreaker(t, cfg)
	b.ObserveWindow(Window{Length: fiveHours, Used: 85, Reset: testStart.Add(time.Hour), Source: "api.anthropic.com"})
	b.ObserveWindow(Window{Length: aWeek, Used: 40, Reset: testStart.Add(72 * time.Hour), Source: "api.anthropic.com"})
	snap := roundTrip(t, b.Snapshot())

	clock.Advance(10 * time.Minute)
	cfg.Now = clock.Now
	again, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, again.Restore(snap))
	d := again.Check()
	assert.Equal(t, ReasonWindowShare, d.Reason.Kind)
	assert.Equal(t, 50*time.Minute, d.RetryAfter)
	assert.Len(t, again.Stats().Spend.Windows, 2)

	stop := Config{Spend: SpendRules{MaxWindowShare: 80, StopAtWindowShare: true}, Now: clock.Now}
	b, err = New(stop)
	require.NoError(t, err)
	b.ObserveWindow(Window{Length: fiveHours, Used: 85, Reset: clock.Now().Add(time.Hour)})
	snap = roundTrip(t, b.Snapshot())
	clock.Advance(2 * time.Hour)
	again, err = New(stop)
	require.NoError(t, err)
	require.NoError(t, again.Restore(snap))
	d = again.Check()
	assert.Equal(t, ReasonWindowShare, d.Reason.Kind, "the stop holds, the window over")
	assert.Zero(t, d.RetryAfter)

	old, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, old.Restore(roundTrip(t, newBreakerSnapshot(t))))
	assert.Empty(t, old.Stats().Spend.Windows)
}

// newBreakerSnapshot is the snapshot of a fresh breaker: no windows.
func newBreakerSnapshot(t *testing.T) Snapshot {
	t.Helper()
	b, _ := newTestBreaker(t, Config{})
	return b.Snapshot()
}

// A state whose windows no breaker could have is refused, naming what is
// wrong.
func TestCorruptWindowsAreRefused(t *testing.T) {
	until := testStart.Add(time.Hour)
	stopped := Reason{Kind: ReasonSpendCap}
	cases := []struct {
		name string
		ws   windowsData
		want string
	}{
		{"a share above 100", windowsData{Reports: []windowData{{Used: 101, Until: until}}}, "windows.reports[0]: used 101"},
		{"a negative share", windowsData{Reports: []windowData{{Used: -1, Until: until}}}, "windows.reports[0]: used -1"},
		{"a negative length", windowsData{Reports: []windowData{{Used: 1, Length: -1, Until: until}}}, "a negative length"},
		{"no end", windowsData{Reports: []windowData{{Used: 1}}}, "no time it stops counting"},
		{"too many", windowsData{Reports: make([]windowData, maxWindows+1)}, "9 reports, more than 8"},
		{"a stop of another kind", windowsData{Stopped: &stopped}, "spend_cap is not a window share"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newBreakerSnapshot(t)
			ws := tc.ws
			s.data.Windows = &ws
			err := s.Validate()
			require.ErrorIs(t, err, ErrCorruptState)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Which refusal speaks when several do: the lifetime spend cap and a
// window share that stops come before the open circuit; a window share
// that waits comes after a provider limit and before the hourly cap.
func TestWindowShareAmongTheOtherRefusals(t *testing.T) {
	reset := testStart.Add(time.Hour)
	full := Window{Length: fiveHours, Used: 100, Reset: reset}
	t.Run("a stop before the open circuit", func(t *testing.T) {
		b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 50, StopAtWindowShare: true}})
		b.ForceOpen("deploy freeze")
		b.ObserveWindow(full)
		assert.Equal(t, ReasonWindowShare, b.Check().Reason.Kind)
	})
	t.Run("the lifetime cap before a stop", func(t *testing.T) {
		b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 50, StopAtWindowShare: true, MaxTokens: 10}})
		b.AddUsage(Usage{InputTokens: 10})
		b.ObserveWindow(full)
		assert.Equal(t, ReasonSpendCap, b.Check().Reason.Kind)
	})
	t.Run("the open circuit before a wait", func(t *testing.T) {
		b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 50}})
		b.ForceOpen("deploy freeze")
		b.ObserveWindow(full)
		assert.Equal(t, ReasonForcedOpen, b.Check().Reason.Kind)
	})
	t.Run("a provider limit before a wait", func(t *testing.T) {
		b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 50}})
		b.ObserveLimit(Limit{Kind: LimitWait, Reset: reset, Why: "five-hour limit"})
		b.ObserveWindow(full)
		assert.Equal(t, ReasonProviderLimit, b.Check().Reason.Kind)
	})
	t.Run("a wait before the hourly cap", func(t *testing.T) {
		b, _ := newTestBreaker(t, Config{Spend: SpendRules{MaxWindowShare: 50, MaxTokensPerHour: 10}})
		b.AddUsage(Usage{InputTokens: 10})
		b.ObserveWindow(full)
		assert.Equal(t, ReasonWindowShare, b.Check().Reason.Kind)
	})
}

// The cap is a percent: 1 to 100, zero or negative for none.
func TestWindowShareIsAPercent(t *testing.T) {
	for _, v := range []int{-1, 0, 1, 100} {
		assert.NoError(t, Config{Spend: SpendRules{MaxWindowShare: v}}.Validate(), "%d", v)
	}
	requireFieldError(t, Config{Spend: SpendRules{MaxWindowShare: 101}}.Validate(), "Spend.MaxWindowShare")
}

// A window's name says its length.
func TestWindowNames(t *testing.T) {
	for length, name := range map[time.Duration]string{
		0:                   "usage window",
		fiveHours:           "5-hour window",
		aWeek:               "weekly window",
		24 * time.Hour:      "daily window",
		30 * 24 * time.Hour: "30-day window",
		90 * time.Minute:    "90-minute window",
		-time.Hour:          "usage window",
	} {
		assert.Equal(t, name, Window{Length: length}.Name(), "%s", length)
	}
}

// ForModel tells a model in the loop that the pause is not its doing.
func TestWindowShareForModel(t *testing.T) {
	r := Reason{Kind: ReasonWindowShare, Count: 81, Threshold: 80, Window: 300, Message: "resets 2026-01-19 12:00 UTC"}
	assert.Equal(t, "loopbreaker paused the loop: Window share cap reached: 81% of the 5-hour window used (cap: 80%); resets 2026-01-19 12:00 UTC. This is not your doing, and no tool call changes it.", r.ForModel())
}
