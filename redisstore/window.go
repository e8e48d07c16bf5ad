package redisstore

import (
	"math"
	"strconv"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/errtext"
	"github.com/loopbreaker/loopbreaker/transport"
)

// What the fleet shares of a subscriber's budget: the provider's usage
// windows ([loopbreaker.SpendRules.MaxWindowShare]) and the burn rate
// ([loopbreaker.SpendRules.MaxCostUSDPerMinute], MaxTokensPerMinute). The
// script keeps the reports and the spend and decides; the reasons and
// warnings are made here, from what it answers, by the breaker's own
// ([loopbreaker.Spend.WindowShareWarning], BurnRateWarning,
// BurnRateRefusal; [loopbreaker.Window.ShareRefusal], ShareStop). The
// conformance test holds the script to a breaker.

// A worker hears the usage windows a transport reads in a response's
// headers.
var _ transport.WindowMeter = (*Worker)(nil)

// maxWindows bounds the windows the fleet keeps, as a breaker does: a
// ninth drops the oldest report in force.
const maxWindows = 8

// windowReport is the latest report of one window, as the fleet keeps it.
type windowReport struct {
	w     loopbreaker.Window
	until time.Time // when it stops counting: its reset, or its Length after it was made
}

// ObserveWindow tells the whole fleet how much of one of the provider's
// usage windows is used, as the provider reported it, in one round trip:
// a [transport.New] on the worker reads Anthropic's unified rate-limit
// headers and the Codex backend's, looprun Claude Code's and Codex's
// reports. The fleet keeps the latest report of each window (by Source
// and Length, at most 8), whichever worker made it. With
// [loopbreaker.SpendRules.MaxWindowShare] set, every worker's Check
// refuses once a window in force is used up to the cap, until it resets;
// with StopAtWindowShare, until a person's Resume, Skip or Reset on any
// worker. From 80% of the cap every worker's Decision warns. A report
// counts until its Reset, or without one for its Length
// ([loopbreaker.Config.Limits] Wait when the Length is not known); a Reset
// already past (by Redis's clock) means the window started again, and
// the report of it is forgotten. A share negative or not a number is
// ignored; above 100 counts as 100. While Redis is out of reach the local
// breaker judges it, and the fleet is told when the worker rejoins.
func (w *Worker) ObserveWindow(win loopbreaker.Window) {
	if !(win.Used >= 0) {
		return
	}
	win.Used = math.Min(win.Used, 100)
	win.Length = max(win.Length, 0)
	win.Source = errtext.FirstLine(win.Source)
	now := w.cfg.Breaker.Now()
	if w.rejoin(now) {
		r, err := w.call("window", w.windowArgs(win, now)...)
		if err == nil {
			w.observe(r, now)
			return
		}
		// Applied or not, the local breaker has it for the rejoin: a
		// report told twice is told once.
		w.lose(err, now)
	} else {
		w.mu.Lock()
		if !w.down {
			w.mu.Unlock()
			w.ObserveWindow(win) // it rejoined meanwhile: tell the fleet
			return
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	if stop := w.windowStopOf(win); stop != "" && w.outageWindowStop == "" {
		w.outageWindowStop = stop
	}
	local := w.local
	w.mu.Unlock()
	local.ObserveWindow(win)
}

// windowArgs returns the script's arguments for the report win, made at
// now: its length in ns, its source, the share used, its reset in ms of
// the wall clock ("" when not known), how long a report of no length
// counts (ms), and the stop it puts in force ("" for none).
func (w *Worker) windowArgs(win loopbreaker.Window, now time.Time) []any {
	reset := ""
	switch {
	case win.Reset.IsZero():
	case win.Reset.Before(time.UnixMilli(1)):
		reset = "1" // long past
	default:
		// The provider's time, as it said it; no further off than a
		// century, which Redis's numbers hold exactly.
		reset = strconv.FormatInt(minTime(win.Reset, now.AddDate(100, 0, 0)).UnixMilli(), 10)
	}
	return []any{strconv.FormatInt(int64(win.Length), 10), win.Source, formatCost(win.Used), reset,
		w.shared.limitWait.Milliseconds(), w.windowStopOf(win)}
}

// windowStopOf returns the stop (a reason, JSON) that the report win puts
// in force with StopAtWindowShare: "" below the cap, or without it.
func (w *Worker) windowStopOf(win loopbreaker.Window) string {
	stop, ok := win.ShareStop(w.shared.maxWindowShare)
	if !w.shared.stopAtWindowShare || !ok {
		return ""
	}
	return reasonJSON(stop)
}

// windowRejoinArgs returns the rejoin's arguments for the usage windows:
// the stop of the window share the outage put in force ("" for none),
// then the reports in force on the local breaker, which heard them during
// the outage, as windowArgs gives each (one without a reset counts from
// the rejoin).
func (w *Worker) windowRejoinArgs(stop string, s loopbreaker.Stats, now time.Time) []any {
	args := []any{stop}
	for _, win := range s.Spend.Windows {
		args = append(args, w.windowArgs(win, now)...)
	}
	return args
}

// windowWait returns the refusal of the window share that waits, as the
// fleet's answer r shows it: the report at the cap that lasts longest (of
// two, the older), and when it is over; false when none refuses.
func (w *Worker) windowWait(r reply) (loopbreaker.Reason, time.Time, bool) {
	limit := w.shared.maxWindowShare
	if limit <= 0 || w.shared.stopAtWindowShare {
		return loopbreaker.Reason{}, time.Time{}, false
	}
	var (
		refusal loopbreaker.Reason
		until   time.Time
	)
	for _, rep := range r.windows {
		if reason, ok := rep.w.ShareRefusal(limit, rep.until); ok && (refusal.Kind == loopbreaker.ReasonNone || rep.until.After(until)) {
			refusal, until = reason, rep.until
		}
	}
	return refusal, until, refusal.Kind != loopbreaker.ReasonNone
}

// windowRefusal returns the reason of a refusal the script says the
// window share made: its stop, or the report that waits.
func (w *Worker) windowRefusal(r reply) loopbreaker.Reason {
	if r.windowStop.Kind != loopbreaker.ReasonNone {
		return r.windowStop
	}
	reason, _, _ := w.windowWait(r)
	if reason.Kind == loopbreaker.ReasonNone {
		// The script's reports and the worker's config disagree (a
		// worker of other settings): the kind at least.
		reason = loopbreaker.Reason{Kind: loopbreaker.ReasonWindowShare, Threshold: w.shared.maxWindowShare}
	}
	return reason
}

// windowsOf returns the windows of reports, for Stats; nil for none.
func windowsOf(reports []windowReport) []loopbreaker.Window {
	if len(reports) == 0 {
		return nil
	}
	ws := make([]loopbreaker.Window, len(reports))
	for i, r := range reports {
		ws[i] = r.w
	}
	return ws
}

// burnRefusal returns the reason of a refusal the script says the burn
// rate made.
func burnRefusal(s loopbreaker.Spend) loopbreaker.Reason {
	if r, ok := s.BurnRateRefusal(); ok {
		return r
	}
	// The script's spend and the worker's config disagree (a worker of
	// other settings): the kind and the caps at least.
	return loopbreaker.Reason{Kind: loopbreaker.ReasonBurnRate, MaxCostUSD: s.MaxCostUSDPerMinute, Threshold: s.MaxTokensPerMinute,
		Window: int(s.BurnWindow / time.Minute)}
}

// shareWarnings returns the warnings of the window share and the burn
// rate that s, the fleet's spend, is in, in a breaker's order. Unlike a
// breaker's warnings it leaves out the spend caps' warning, which comes
// before them: the script names the cap it warns of (spendWarning).
func shareWarnings(s loopbreaker.Spend) []loopbreaker.Reason {
	var ws []loopbreaker.Reason
	if r, ok := s.WindowShareWarning(); ok {
		ws = append(ws, r)
	}
	if r, ok := s.BurnRateWarning(); ok {
		ws = append(ws, r)
	}
	return ws
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
