package loopbreaker

import (
	"fmt"
	"math"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// A subscriber's budget is not dollars but a share of the provider's usage
// windows: Claude's 5-hour and weekly limits, Codex's primary and secondary
// windows. The provider reports how much of each is used (Anthropic's
// unified rate-limit headers, Claude Code's rate_limit_event, Codex's
// rate_limits), and [SpendRules.MaxWindowShare] stops the loop at a share
// of it, so that the rest stays for the person.

// Window is how much of one of the provider's usage windows is used, as
// the provider reports it ([CircuitBreaker.ObserveWindow]).
type Window struct {
	// Length is the window's length: 5h for Claude's and Codex's 5-hour
	// window, 168h for the weekly one; zero when not known. Reports of one
	// Source and Length are of one window: the latest counts.
	Length time.Duration
	// Used is the share used, in percent, from 0 to 100. A report whose
	// share is negative or not a number is ignored; above 100 counts as 100.
	Used float64
	// Reset is when the window resets; zero when not known.
	Reset time.Time
	// Source is who reported it: the API's host (the transport), "Claude
	// Code", "Codex".
	Source string
}

// Name returns the window's name, as reasons say it: "5-hour window",
// "weekly window", "usage window" for a Length not known.
func (w Window) Name() string { return windowName(int(w.Length / time.Minute)) }

// windowName names a window of minutes: "5-hour window", "weekly window".
func windowName(minutes int) string {
	switch {
	case minutes <= 0:
		return "usage window"
	case minutes == 7*24*60:
		return "weekly window"
	case minutes == 24*60:
		return "daily window"
	case minutes%(24*60) == 0:
		return fmt.Sprintf("%d-day window", minutes/(24*60))
	case minutes%60 == 0:
		return fmt.Sprintf("%d-hour window", minutes/60)
	}
	return fmt.Sprintf("%d-minute window", minutes)
}

// windowWarningPercent is the share of [SpendRules.MaxWindowShare] from
// which a warning is given, as for the spend caps.
const windowWarningPercent = spendWarningPercent

// maxWindows bounds the windows a breaker keeps, the oldest report out.
const maxWindows = 8

// windowState is what the breaker knows of the provider's usage windows.
type windowState struct {
	reports []windowReport // the latest report of each window, oldest first
	// stopped is the refusal of [SpendRules.StopAtWindowShare]: set when
	// a report reached the cap, it stays until Resume, Skip or Reset.
	stopped Reason
}

// windowReport is the latest report of one window.
type windowReport struct {
	w Window
	// until is when the report stops counting: the window's reset, or
	// for a report without one, its Length ([LimitRules.Wait] for a
	// length not known) after it was made.
	until time.Time
}

// ObserveWindow tells the breaker how much of one of the provider's usage
// windows is used, as the provider reported it, during an iteration: a
// transport reads Anthropic's unified rate-limit headers, looprun Claude
// Code's and Codex's reports. With [SpendRules.MaxWindowShare] set, Check
// refuses once a window in force is used up to the cap, until it resets
// (or, with StopAtWindowShare, until a person resumes). A report counts
// until its Reset, or without one for its Length; a Reset already past
// means the window started again, and the report of it is forgotten.
func (b *CircuitBreaker) ObserveWindow(w Window) {
	if !(w.Used >= 0) {
		return // not a number, or negative: no share
	}
	w.Used = math.Min(w.Used, 100)
	w.Length = max(w.Length, 0)
	w.Source = errtext.FirstLine(w.Source) // at most 200 bytes
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	defer b.wake()
	b.windowSeen(w, now)
}

// windowSeen records the report w, made at now: the reports that are
// over are forgotten first, so that a ninth window drops the oldest report
// still in force. Called with b.mu held.
func (b *CircuitBreaker) windowSeen(w Window, now time.Time) {
	b.windowsAt(now)
	ws := &b.windows
	i := 0
	for _, r := range ws.reports {
		if r.w.Source != w.Source || r.w.Length != w.Length {
			ws.reports[i] = r
			i++
		}
	}
	ws.reports = ws.reports[:i]
	var until time.Time
	switch {
	case w.Reset.IsZero():
		length := w.Length
		if length == 0 {
			length = b.cfg.Limits.Wait
		}
		until = now.Add(length)
	case !w.Reset.After(now):
		return // the window started again: what it said is over
	default:
		w.Reset = w.Reset.In(now.Location())
		until = w.Reset
	}
	until = minTime(until, now.Add(maxProviderLimitWait))
	if len(ws.reports) == maxWindows {
		ws.reports = append(ws.reports[:0], ws.reports[1:]...)
	}
	ws.reports = append(ws.reports, windowReport{w: w, until: until})
	if stop, ok := w.ShareStop(b.cfg.Spend.MaxWindowShare); ok && b.cfg.Spend.StopAtWindowShare && ws.stopped.Kind == ReasonNone {
		ws.stopped = stop
	}
}

// windowsAt returns the reports in force at now, forgetting those that
// are over. Called with b.mu held.
func (b *CircuitBreaker) windowsAt(now time.Time) []windowReport {
	ws := &b.windows
	i := 0
	for _, r := range ws.reports {
		if now.Before(r.until) {
			ws.reports[i] = r
			i++
		}
	}
	ws.reports = ws.reports[:i]
	return ws.reports
}

// windowRefusal returns the refusal of [SpendRules.MaxWindowShare] at now:
// the stop that holds until a person resumes (final), or the window in
// force used up to the cap whose report lasts longest, and the time until
// it is over. Called with b.mu held.
func (b *CircuitBreaker) windowRefusal(now time.Time) (r Reason, wait time.Duration, final, ok bool) {
	if b.windows.stopped.Kind != ReasonNone {
		return b.windows.stopped, 0, true, true
	}
	limit := b.cfg.Spend.MaxWindowShare
	if limit <= 0 || b.cfg.Spend.StopAtWindowShare {
		return Reason{}, 0, false, false
	}
	var longest *windowReport
	reports := b.windowsAt(now)
	for i := range reports {
		if reports[i].w.reaches(limit) && (longest == nil || reports[i].until.After(longest.until)) {
			longest = &reports[i]
		}
	}
	if longest == nil {
		return Reason{}, 0, false, false
	}
	r, _ = longest.w.ShareRefusal(limit, longest.until)
	return r, longest.until.Sub(now), false, true
}

// WindowShareWarning returns the [ReasonWindowShareWarning] of the most
// used of s.Windows (of two used alike, the older report), once it is
// used 80% of [SpendRules.MaxWindowShare] or more, at the cap and over it
// too; its Message says when the window resets, or is empty when the
// report gave no Reset. It returns false below 80%, without windows, and
// without a MaxWindowShare. A breaker gives it itself in
// [Decision.Warnings]; a fleet worker that keeps the windows elsewhere
// calls it on the fleet's Spend.
func (s Spend) WindowShareWarning() (Reason, bool) {
	limit := s.MaxWindowShare
	if limit <= 0 {
		return Reason{}, false
	}
	var most *Window
	for i := range s.Windows {
		if most == nil || s.Windows[i].Used > most.Used {
			most = &s.Windows[i]
		}
	}
	if most == nil || most.Used*100 < float64(limit*windowWarningPercent) {
		return Reason{}, false
	}
	tail := ""
	if !most.Reset.IsZero() {
		tail = "resets " + most.Reset.Format(windowTimeLayout)
	}
	return windowReason(ReasonWindowShareWarning, *most, limit, tail), true
}

// ShareRefusal returns the [ReasonWindowShare] refusal of w once it is
// used up to limit, the cap in percent ([SpendRules.MaxWindowShare]), or
// over it: the loop waits for the window to reset. The reason's Message
// says when w resets; for a w with no Reset, that its report counts
// until until (the Length, or [LimitRules.Wait], after it was made). It
// returns false below the cap, and for a limit of zero or less (no cap).
// A breaker gives it itself in [Decision.Reason]; a fleet worker that
// keeps the windows elsewhere calls it for the report that lasts longest.
func (w Window) ShareRefusal(limit int, until time.Time) (Reason, bool) {
	if limit <= 0 || !w.reaches(limit) {
		return Reason{}, false
	}
	tail := "resets " + w.Reset.Format(windowTimeLayout)
	if w.Reset.IsZero() {
		tail = "no reset time given: counted until " + until.Format(windowTimeLayout)
	}
	return windowReason(ReasonWindowShare, w, limit, tail), true
}

// ShareStop returns the [ReasonWindowShare] refusal that
// [SpendRules.StopAtWindowShare] makes once w is used up to limit, the
// cap in percent, or over it: no waiting ends it, and its Message says
// so. It returns false below the cap, and for a limit of zero or less.
// Whether StopAtWindowShare is set is the caller's to judge: a breaker
// gives this reason itself, a fleet worker stores it for the fleet.
func (w Window) ShareStop(limit int) (Reason, bool) {
	if limit <= 0 || !w.reaches(limit) {
		return Reason{}, false
	}
	return windowReason(ReasonWindowShare, w, limit, "no waiting ends this: resume the loop, or raise the cap"), true
}

// reaches reports whether w is used up to the cap limit, in percent.
func (w Window) reaches(limit int) bool { return w.Used >= float64(limit) }

// windowTimeLayout is how a window's reset is written in a reason.
const windowTimeLayout = "2006-01-02 15:04 MST"

// windowReason is a window share reason of kind: Count is the share used,
// in whole percent, Threshold the cap, Window the window's length in
// minutes, Message tail.
func windowReason(kind ReasonKind, w Window, limit int, tail string) Reason {
	return Reason{Kind: kind, Count: int(w.Used), Threshold: limit, Window: int(w.Length / time.Minute), Message: tail}
}

// windowsOf returns the windows of reports, for Stats; nil for none.
func windowsOf(reports []windowReport) []Window {
	if len(reports) == 0 {
		return nil
	}
	ws := make([]Window, len(reports))
	for i, r := range reports {
		ws[i] = r.w
	}
	return ws
}
