package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
)

// Options say how the page is made.
type Options struct {
	// Title is the page's title; "" names the loop.
	Title string
	// Now is when the page is made (the time it says it was made).
	Now time.Time
	// Location is the time zone the page tells times in; nil is
	// time.Local.
	Location *time.Location
	// Refresh, when positive, has the page reload itself that often: the
	// live page of -serve.
	Refresh time.Duration
	// LogLink returns the link to an iteration's log file; "" leaves the
	// iteration without one. Nil links each log by its path relative to
	// LinkBase, the directory the page is written to (file names relative
	// to it work wherever the two are moved together).
	LogLink  func(iteration int, path string) string
	LinkBase string
}

func (o Options) logLink(iteration int, path string) string {
	if o.LogLink != nil {
		return o.LogLink(iteration, path)
	}
	if rel, err := filepath.Rel(o.LinkBase, path); err == nil && o.LinkBase != "" {
		return filepath.ToSlash(rel)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	return "file://" + filepath.ToSlash(abs)
}

// Write writes the page of loops (one, or each worker of a fleet) and,
// for a fleet, its shared breaker (nil for a loop of its own) to w.
func Write(w io.Writer, loops []*Loop, fleet *Fleet, o Options) error {
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	p := &page{w: bufio.NewWriterSize(w, 64<<10), o: o, fleet: fleet}
	for _, l := range loops {
		p.loops = append(p.loops, view(l))
	}
	p.write()
	return p.w.Flush()
}

// page writes one page.
type page struct {
	w          *bufio.Writer
	o          Options
	fleet      *Fleet
	loops      []*loopView
	start, end time.Time
}

func (p *page) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }
func (p *page) s(s string)                   { p.w.WriteString(s) }

// esc escapes text for HTML.
func esc(s string) string { return html.EscapeString(s) }

func (p *page) write() {
	title := p.o.Title
	if title == "" {
		names := make([]string, len(p.loops))
		for i, v := range p.loops {
			names[i] = v.l.Name
		}
		title = "looprun: " + strings.Join(names, ", ")
		if p.fleet != nil {
			title = "looprun: fleet " + p.fleet.Name
		}
	}
	for _, v := range p.loops {
		if !v.first.IsZero() && (p.start.IsZero() || v.first.Before(p.start)) {
			p.start = v.first
		}
		if v.last.After(p.end) {
			p.end = v.last
		}
	}
	if p.o.Refresh > 0 && p.o.Now.After(p.end) {
		p.end = p.o.Now // live: up to now
	}
	p.s("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n")
	p.s("<meta name=viewport content=\"width=device-width, initial-scale=1\">\n")
	if p.o.Refresh > 0 {
		p.f("<meta http-equiv=refresh content=%d>\n", max(1, int(p.o.Refresh.Seconds())))
	}
	p.f("<title>%s</title>\n<style>%s</style></head><body>\n", esc(title), css)
	p.f("<header><h1>%s</h1><p class=made>", esc(title))
	if p.o.Refresh > 0 {
		p.f("live, refreshed every %s; ", p.o.Refresh)
	}
	p.f("made %s</p></header>\n<main>\n", esc(p.time(p.o.Now)))
	if p.fleet != nil {
		p.fleetSection()
	}
	for _, v := range p.loops {
		p.loop(v)
	}
	p.s("</main></body></html>\n")
}

func (p *page) time(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(p.o.Location).Format("2006-01-02 15:04:05")
}

func (p *page) clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(p.o.Location).Format(time.TimeOnly)
}

// loop writes the sections of one loop.
func (p *page) loop(v *loopView) {
	id := "loop-" + slug(v.l.Name)
	p.f("<section class=loop id=%s>\n", id)
	if len(p.loops) > 1 {
		p.f("<h2>%s</h2>\n", esc(v.l.Name))
	}
	p.summary(v)
	p.stuck(v)
	p.timeline(v)
	p.spendChart(v)
	p.perIteration(v)
	p.circuit(v)
	p.errorTable(v)
	p.limitTable(v)
	p.taskTable(v)
	p.hookTable(v)
	p.iterationTable(v)
	p.s("</section>\n")
}

// summary writes the figures: the circuit now, the counts, the spend.
func (p *page) summary(v *loopView) {
	s := v.l.Stats
	p.s("<section id=summary class=cards>\n")
	state := s.State.String()
	if !v.l.Saved && len(v.runs) > 0 {
		state = v.runs[len(v.runs)-1].State
	}
	p.f("<div class=\"card state %s\"><h3>circuit</h3><p class=big>%s</p>", stateClass(state), esc(state))
	if s.Reason.Kind != loopbreaker.ReasonNone {
		p.f("<p>%s</p>", esc(s.Reason.String()))
		switch {
		case s.State == loopbreaker.Open && s.Reason.Kind.Held():
			p.s("<p class=note>held open until a person resumes or skips</p>")
		case s.State == loopbreaker.Open && !s.OpenedAt.IsZero():
			p.f("<p class=note>opened %s; probe at %s</p>", esc(p.time(s.OpenedAt)), esc(p.clock(s.OpenedAt.Add(s.Cooldown))))
		}
	}
	if s.Complete.Kind != loopbreaker.ReasonNone {
		p.f("<p>complete: %s</p>", esc(s.Complete.String()))
	}
	p.s("</div>\n")
	p.f("<div class=card><h3>iterations</h3><p class=big>%d</p><p>%d failed, %d limited; %d in this journal</p></div>\n",
		s.Iterations, s.Failures.Total, s.LimitedIterations, len(v.runs))
	p.f("<div class=card><h3>openings</h3><p class=big>%d</p><p>%d in a row now</p></div>\n", s.Opens, s.ConsecutiveOpens)
	if sp := s.Spend; sp.Total != (loopbreaker.Usage{}) || v.maxCost > 0 || v.maxTokens > 0 {
		p.s("<div class=card><h3>spend</h3>")
		p.f("<p class=big>$%.2f</p>", sp.Total.CostUSD)
		if v.maxCost > 0 {
			p.f("<p>of $%.2f (%.0f%%)</p>", v.maxCost, 100*sp.Total.CostUSD/v.maxCost)
		}
		p.f("<p>%s tokens", thousands(sp.Total.Tokens()))
		if v.maxTokens > 0 {
			p.f(" of %s (%.0f%%)", thousands(v.maxTokens), 100*float64(sp.Total.Tokens())/float64(v.maxTokens))
		}
		p.s("</p></div>\n")
	}
	if s.Budget.Limit > 0 {
		p.f("<div class=card><h3>calls this hour</h3><p class=big>%d</p><p>of %d</p></div>\n", s.Budget.Used, s.Budget.Limit)
	}
	if s.ProviderLimit.Kind != loopbreaker.ReasonNone {
		p.f("<div class=\"card limit\"><h3>provider limit</h3><p>%s</p>", esc(s.ProviderLimit.String()))
		if !s.ProviderLimitUntil.IsZero() {
			p.f("<p>until %s</p>", esc(p.time(s.ProviderLimitUntil)))
		}
		p.s("</div>\n")
	}
	if v.exit != nil {
		p.f("<div class=card><h3>last run</h3><p class=big>%s</p><p>%s</p><p class=note>exit code %d; %d iterations</p></div>\n",
			esc(v.exit.Name), esc(v.exit.Stopped), v.exit.Code, v.exit.Iterations)
	}
	p.s("</section>\n")
	p.s("<p class=where>")
	if v.start != nil && v.start.Command != "" {
		p.f("<code>%s</code> · ", esc(v.start.Command))
	}
	p.f("state <code>%s</code>", esc(filepath.Join(v.l.StateDir, v.l.Name+".json")))
	if v.l.Saved {
		p.f(", saved %s", esc(p.time(v.l.SavedAt)))
	}
	if v.worker != "" {
		p.f(" · worker <code>%s</code> of fleet <code>%s</code>", esc(v.worker), esc(v.fleet))
	}
	if v.l.Unreadable > 0 {
		p.f(" · %d journal lines could not be read", v.l.Unreadable)
	}
	p.s("</p>\n")
}

// stuck writes the analysis of the last opening: what the loop kept
// meeting, and what to try.
func (p *page) stuck(v *loopView) {
	e := v.stuck
	if e == nil {
		return
	}
	a := e.Stuck
	open := v.l.Stats.State != loopbreaker.Closed
	p.s("<section id=stuck class=stuck>")
	if open {
		p.f("<h2>Stuck</h2><p>The circuit opened at iteration %d, %s", e.Iteration, esc(p.time(e.At)))
	} else {
		p.f("<h2>Last stuck</h2><p>At iteration %d, %s (it has closed since)", e.Iteration, esc(p.time(e.At)))
	}
	if e.Reason != nil {
		p.f(": <b>%s</b>", esc(e.Reason.Text))
	}
	p.s("</p>\n<dl>")
	if a.Fingerprint != "" {
		p.f("<dt>error</dt><dd><code>%s</code>, seen %d times", esc(a.Fingerprint), a.Seen)
		if a.ErrorFrom != "" {
			p.f(", from %s", esc(a.ErrorFrom))
		}
		p.s("</dd>")
	}
	if a.Error != "" {
		p.f("<dd><pre>%s</pre></dd>", esc(a.Error))
	}
	if a.Task != "" {
		p.f("<dt>task</dt><dd>%s", esc(a.Task))
		if a.TaskFailures > 0 {
			p.f(", %d failures in a row", a.TaskFailures)
		}
		p.s("</dd>")
	}
	if a.Approaches != "" {
		p.f("<dt>approaches going round</dt><dd>%s</dd>", esc(a.Approaches))
	}
	if a.Tests != "" {
		p.f("<dt>tests</dt><dd>%s</dd>", esc(a.Tests))
	}
	p.f("<dt>progress score</dt><dd>%s; risk %s</dd></dl>\n", esc(score(a.Score)), esc(a.Risk))
	if len(a.Try) > 0 {
		p.f("<p>Try (%s):</p><ol>", esc(a.TryFrom))
		for _, t := range a.Try {
			p.f("<li>%s</li>", esc(t))
		}
		p.s("</ol>\n")
	}
	p.s("</section>\n")
}

// Colours of the results and states; the CSS has the same.
var (
	resultColour = map[string]string{
		journal.ResultOK: "#2e7d32", journal.ResultFailed: "#c62828",
		journal.ResultLimited: "#7b1fa2", journal.ResultStopped: "#212121",
	}
	stateColour = map[string]string{"CLOSED": "#a5d6a7", "OPEN": "#ef9a9a", "HALF_OPEN": "#ffe082"}
	results     = []string{journal.ResultOK, journal.ResultFailed, journal.ResultLimited, journal.ResultStopped}
)

// The charts' geometry, in the SVG's user units.
const (
	chartWidth = 1000.0
	plotLeft   = 80.0
	plotRight  = 990.0
)

// xOf places t between the page's start and end.
func (p *page) xOf(t time.Time) float64 {
	span := p.end.Sub(p.start)
	if span <= 0 {
		return plotLeft
	}
	return plotLeft + (plotRight-plotLeft)*float64(t.Sub(p.start))/float64(span)
}

// timeline writes the circuit's states over time, the iterations as
// they ran (their width their duration, their colour their result) and
// the provider limits waited.
func (p *page) timeline(v *loopView) {
	if p.end.Sub(p.start) <= 0 {
		return
	}
	const circuitY, runsY, laneH = 30.0, 58.0, 22.0
	height := runsY + laneH + 30
	p.s("<section id=timeline><h2>Timeline</h2>\n")
	p.f("<svg class=chart viewBox=\"0 0 %.0f %.0f\" role=img aria-label=\"the circuit and the iterations over time\">\n", chartWidth, height)
	p.s("<defs><pattern id=hatch width=6 height=6 patternUnits=userSpaceOnUse patternTransform=\"rotate(45)\"><rect width=3 height=6 fill=\"#7b1fa2\" opacity=.45></rect></pattern></defs>\n")
	p.f("<text x=4 y=%.0f class=lane>circuit</text><text x=4 y=%.0f class=lane>iterations</text>\n", circuitY+15, runsY+15)
	// The circuit: a band of its states.
	state := "CLOSED"
	if len(v.transitions) > 0 {
		state = v.transitions[0].from
	}
	at := p.start
	bands := map[string]*strings.Builder{}
	band := func(from, to time.Time, state string) {
		x0, x1 := p.xOf(from), p.xOf(to)
		if x1 <= x0 {
			return
		}
		b := bands[state]
		if b == nil {
			b = &strings.Builder{}
			bands[state] = b
		}
		fmt.Fprintf(b, "M%.1f %.0fh%.2fv%.0fh%.2fz", x0, circuitY, x1-x0, laneH, x0-x1)
	}
	for _, t := range v.transitions {
		band(at, t.at, state)
		at, state = t.at, t.to
	}
	band(at, p.end, state)
	for _, s := range []string{"CLOSED", "HALF_OPEN", "OPEN"} {
		if b := bands[s]; b != nil {
			p.f("<path class=%s fill=\"%s\" d=\"%s\"><title>%s</title></path>\n", stateClass(s), stateColour[s], b.String(), s)
		}
	}
	// The provider limits waited, over the iterations' lane.
	for _, l := range v.limits {
		end := l.limit.Until
		if l.waited != nil {
			end = l.at.Add(l.waited.Waited)
		}
		if end.IsZero() || end.After(p.end) {
			end = p.end
		}
		x0, x1 := p.xOf(l.at), p.xOf(end)
		p.f("<rect class=waited x=%.1f y=%.0f width=%.2f height=%.0f fill=\"url(#hatch)\"><title>%s</title></rect>\n",
			x0, runsY, max(x1-x0, 1), laneH, esc("provider limit: "+l.reason))
	}
	// The iterations, a path of each result.
	paths := map[string]*strings.Builder{}
	for _, e := range v.runs {
		r := e.Run
		x0 := p.xOf(r.Started)
		x1 := p.xOf(r.Started.Add(r.Duration))
		w := max(x1-x0, 0.6)
		b := paths[r.Result]
		if b == nil {
			b = &strings.Builder{}
			paths[r.Result] = b
		}
		fmt.Fprintf(b, "M%.1f %.0fh%.2fv%.0fh%.2fz", x0, runsY, w, laneH, -w)
	}
	for _, res := range results {
		if b := paths[res]; b != nil {
			p.f("<path class=run-%s fill=\"%s\" d=\"%s\"><title>%s</title></path>\n", res, resultColour[res], b.String(), res)
		}
	}
	// The openings, the give-ups and the recoveries, marked above the band.
	marks := 0
	for _, t := range v.transitions {
		x := p.xOf(t.at)
		shape, colour := "", ""
		switch t.kind {
		case journal.CircuitOpened, journal.ProtectedFiles:
			shape, colour = fmt.Sprintf("M%.1f 28l-4 -8h8z", x), "#c62828"
		case journal.GaveUp:
			shape, colour = fmt.Sprintf("M%.1f 28l-5 -5l5 -5l5 5z", x), "#000"
		case journal.CircuitClosed:
			shape, colour = fmt.Sprintf("M%.1f 20l-4 8h8z", x), "#2e7d32"
		default:
			continue
		}
		marks++
		title := fmt.Sprintf("%s at iteration %d, %s (%s)", t.kind, t.iteration, p.clock(t.at), t.cause)
		if t.reason != "" {
			title += ": " + t.reason
		}
		if marks <= 500 {
			p.f("<a href=\"#i%d\"><path class=\"mark %s\" d=\"%s\" fill=\"%s\"><title>%s</title></path></a>\n", t.iteration, t.kind, shape, colour, esc(title))
		} else {
			p.f("<path class=\"mark %s\" d=\"%s\" fill=\"%s\"></path>\n", t.kind, shape, colour)
		}
	}
	p.axis(runsY + laneH + 14)
	p.s("</svg>\n<p class=legend>")
	for _, s := range []string{"CLOSED", "HALF_OPEN", "OPEN"} {
		p.f("<span><i style=\"background:%s\"></i>%s</span>", stateColour[s], s)
	}
	for _, res := range results {
		p.f("<span><i style=\"background:%s\"></i>%s</span>", resultColour[res], res)
	}
	p.s("<span><i class=hatch></i>provider limit waited</span><span>▼ opened ◆ gave up ▲ closed</span></p>\n</section>\n")
}

// axis writes the time axis at y: a few ticks and their times.
func (p *page) axis(y float64) {
	span := p.end.Sub(p.start)
	steps := []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, time.Minute, 5 * time.Minute,
		15 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	layout := time.TimeOnly
	if span > 24*time.Hour {
		layout = "Jan 2 15:04"
	} else if step >= time.Minute {
		layout = "15:04"
	}
	local := p.start.In(p.o.Location)
	t := local.Truncate(step)
	if step >= time.Hour {
		_, offset := local.Zone()
		t = local.Add(time.Duration(offset) * time.Second).Truncate(step).Add(-time.Duration(offset) * time.Second)
	}
	for ; !t.After(p.end); t = t.Add(step) {
		if t.Before(p.start) {
			continue
		}
		x := p.xOf(t)
		p.f("<line class=tick x1=%.1f x2=%.1f y1=%.0f y2=%.0f></line><text class=tick x=%.1f y=%.0f>%s</text>\n",
			x, x, 24.0, y-10, x, y, t.In(p.o.Location).Format(layout))
	}
}

// spendChart writes the spend over time against its caps.
func (p *page) spendChart(v *loopView) {
	if len(v.spend) == 0 || p.end.Sub(p.start) <= 0 {
		return
	}
	last := v.spend[len(v.spend)-1]
	useCost := last.cost > 0 || v.maxCost > 0
	if !useCost && last.tokens == 0 && v.maxTokens == 0 {
		return
	}
	value := func(sp spendPoint) float64 {
		if useCost {
			return sp.cost
		}
		return float64(sp.tokens)
	}
	capV := float64(v.maxTokens)
	label := func(x float64) string { return thousands(int(x)) + " tokens" }
	if useCost {
		capV = v.maxCost
		label = func(x float64) string { return fmt.Sprintf("$%.2f", x) }
	}
	top := math.Max(capV, value(last)) * 1.08
	if top <= 0 {
		return
	}
	const y0, y1 = 150.0, 12.0 // the plot's bottom and top
	yOf := func(x float64) float64 { return y0 - (y0-y1)*x/top }
	p.s("<section id=spend><h2>Spend</h2>\n")
	p.f("<svg class=chart viewBox=\"0 0 %.0f 180\" role=img aria-label=\"the spend over time against its caps\">\n", chartWidth)
	if capV > 0 {
		p.f("<line class=cap x1=%.0f x2=%.0f y1=%.1f y2=%.1f></line><text class=cap x=%.0f y=%.1f>cap %s</text>\n",
			plotLeft, plotRight, yOf(capV), yOf(capV), plotLeft+4, yOf(capV)-3, esc(label(capV)))
		p.f("<line class=warn x1=%.0f x2=%.0f y1=%.1f y2=%.1f></line><text class=warn x=%.0f y=%.1f>80%%: the warning</text>\n",
			plotLeft, plotRight, yOf(0.8*capV), yOf(0.8*capV), plotLeft+4, yOf(0.8*capV)-3)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%.1f,%.1f", p.xOf(p.start), y0)
	prevX := -1.0
	for i, sp := range v.spend {
		x := p.xOf(sp.at)
		if x-prevX < 0.5 && i < len(v.spend)-1 {
			continue // a point a pixel holds already
		}
		fmt.Fprintf(&b, " %.1f,%.1f", x, yOf(value(sp)))
		prevX = x
	}
	p.f("<polyline class=spent points=\"%s\"></polyline>\n", b.String())
	for _, w := range v.warnings {
		x, y := p.xOf(w.At), y0
		if w.Spend != nil {
			y = yOf(value(spendPoint{cost: w.Spend.CostUSD, tokens: w.Spend.Tokens}))
		}
		cls, words := "warn", "spend warning"
		if w.Kind == journal.SpendCap {
			cls, words = "cap", "spend cap"
		}
		p.f("<circle class=\"mark %s\" cx=%.1f cy=%.1f r=5><title>%s</title></circle><text class=%s x=%.1f y=%.1f text-anchor=end>%s</text>\n",
			w.Kind, x, y, esc(w.Text), cls, x-8, y+4, words)
	}
	p.f("<text class=axis x=4 y=%.0f>%s</text><text class=axis x=4 y=%.0f>%s</text>\n", y0, esc(label(0)), yOf(value(last))+4, esc(label(value(last))))
	p.axis(172)
	p.s("</svg>\n</section>\n")
}

// perIteration writes each iteration's duration and cost, by iteration:
// beyond a column a pixel, the longest of those it holds, in the colour
// of the worst result.
func (p *page) perIteration(v *loopView) {
	n := len(v.runs)
	if n == 0 {
		return
	}
	cols := min(n, 910)
	type column struct {
		longest time.Duration
		cost    float64
		worst   int
	}
	rank := map[string]int{journal.ResultOK: 0, journal.ResultLimited: 1, journal.ResultStopped: 2, journal.ResultFailed: 3}
	columns := make([]column, cols)
	var longest time.Duration
	var costliest float64
	for i, e := range v.runs {
		c := &columns[i*cols/n]
		c.longest = max(c.longest, e.Run.Duration)
		c.cost += e.Run.CostUSD
		c.worst = max(c.worst, rank[e.Run.Result])
	}
	for _, c := range columns {
		longest, costliest = max(longest, c.longest), max(costliest, c.cost)
	}
	if longest <= 0 {
		return
	}
	const y0, h = 110.0, 96.0
	width := (plotRight - plotLeft) / float64(cols)
	p.s("<section id=per-iteration><h2>Duration and cost of each iteration</h2>\n")
	p.f("<svg class=chart viewBox=\"0 0 %.0f 130\" role=img aria-label=\"each iteration's duration and cost\">\n", chartWidth)
	paths := make([]strings.Builder, len(results))
	for i, c := range columns {
		bh := h * float64(c.longest) / float64(longest)
		fmt.Fprintf(&paths[c.worst], "M%.2f %.1fh%.2fv%.1fh%.2fz", plotLeft+float64(i)*width, y0-bh, max(width-0.3, 0.3), bh, -max(width-0.3, 0.3))
	}
	for rank, res := range []string{journal.ResultOK, journal.ResultLimited, journal.ResultStopped, journal.ResultFailed} {
		if paths[rank].Len() > 0 {
			p.f("<path fill=\"%s\" d=\"%s\"><title>%s</title></path>\n", resultColour[res], paths[rank].String(), res)
		}
	}
	if costliest > 0 {
		var b strings.Builder
		for i, c := range columns {
			fmt.Fprintf(&b, "%.1f,%.1f ", plotLeft+(float64(i)+0.5)*width, y0-h*c.cost/costliest)
		}
		p.f("<polyline class=cost points=\"%s\"><title>cost</title></polyline>\n", b.String())
		p.f("<text class=cost x=%.0f y=12 text-anchor=end>cost, up to $%.4f</text>\n", plotRight, costliest)
	}
	p.f("<text class=axis x=4 y=%.0f>%s</text><text class=axis x=4 y=%.0f>0</text>\n", y0-h+8, esc(duration(longest)), y0)
	first, lastN := v.runs[0].Iteration, v.runs[n-1].Iteration
	p.f("<text class=tick x=%.0f y=126>iteration %d</text><text class=tick x=%.0f y=126 text-anchor=end>%d</text>\n", plotLeft, first, plotRight, lastN)
	p.s("</svg>\n</section>\n")
}

// circuit writes the circuit's history: each opening, probe, give-up,
// resume and skip.
func (p *page) circuit(v *loopView) {
	if len(v.transitions) == 0 {
		return
	}
	p.s("<section id=circuit><h2>The circuit</h2>\n<table><thead><tr><th>when<th>iteration<th>what<th>from → to<th>cause<th>reason</thead><tbody>\n")
	for _, t := range v.transitions {
		p.f("<tr class=\"%s\"><td>%s<td><a href=\"#i%d\">%d</a><td>%s<td>%s → %s<td>%s<td>%s\n",
			esc(string(t.kind)), esc(p.time(t.at)), t.iteration, t.iteration, esc(kindWords(t.kind)), esc(t.from), esc(t.to), esc(t.cause), esc(t.reason))
	}
	p.s("</tbody></table>\n</section>\n")
}

// kindWords says what a transition was.
func kindWords(k journal.Kind) string {
	switch k {
	case journal.CircuitOpened:
		return "opened"
	case journal.GaveUp:
		return "gave up"
	case journal.HalfOpen:
		return "probe due"
	case journal.CircuitClosed:
		return "closed"
	case journal.ProtectedFiles:
		return "protected files lost"
	case journal.ProviderLimit:
		return "provider limit"
	}
	return strings.ReplaceAll(string(k), "_", " ")
}

// errorTable writes the errors by fingerprint: how often, their text,
// and the iterations that met them.
func (p *page) errorTable(v *loopView) {
	if len(v.errors) == 0 {
		return
	}
	p.s("<section id=errors><h2>Errors</h2>\n<table><thead><tr><th>error<th>seen<th>counted now<th>text<th>iterations</thead><tbody>\n")
	for _, e := range v.errors {
		p.f("<tr id=\"e%s\"><td><code>%s</code><td>%d<td>%d<td><pre>%s</pre>", esc(e.fingerprint), esc(e.fingerprint), e.count, e.counted, esc(e.text))
		if e.latest != "" && e.latest != e.text {
			p.f("<p class=note>latest:</p><pre>%s</pre>", esc(e.latest))
		}
		p.s("<td>")
		shown := e.iterations
		if len(shown) > 12 {
			shown = append(shown[:6:6], shown[len(shown)-6:]...)
		}
		for i, n := range shown {
			if len(e.iterations) > 12 && i == 6 {
				p.f("… %d more … ", len(e.iterations)-12)
			}
			p.f("<a href=\"#i%d\">%d</a> ", n, n)
		}
		p.s("\n")
	}
	p.s("</tbody></table>\n</section>\n")
}

// limitTable writes the provider limits: what the provider said, until
// when, and how long the loop waited.
func (p *page) limitTable(v *loopView) {
	if len(v.limits) == 0 {
		return
	}
	p.s("<section id=limits><h2>Provider limits</h2>\n<table><thead><tr><th>when<th>what<th>until<th>waited<th>ended</thead><tbody>\n")
	for _, l := range v.limits {
		what := l.reason
		if l.limit.Text != "" {
			what = l.limit.Text
		}
		waited, ended := "-", "not waited"
		if l.limit.Kind == "stop" {
			ended = "a stop: no waiting ends it"
		}
		if l.waited != nil {
			waited, ended = duration(l.waited.Waited), l.waited.Ended
		}
		until := "-"
		if !l.limit.Until.IsZero() {
			until = p.time(l.limit.Until)
		}
		p.f("<tr><td>%s<td>%s<td>%s<td>%s<td>%s\n", esc(p.time(l.at)), esc(what), esc(until), esc(waited), esc(ended))
	}
	p.s("</tbody></table>\n</section>\n")
}

// taskTable writes the tasks the iterations worked on, and those a
// person skipped.
func (p *page) taskTable(v *loopView) {
	if len(v.tasks) == 0 {
		return
	}
	p.s("<section id=tasks><h2>Tasks</h2>\n<table><thead><tr><th>task<th>iterations<th>failed<th>from<th>to<th></thead><tbody>\n")
	for _, t := range v.tasks {
		mark := ""
		switch {
		case t.skipped:
			mark = "skipped"
		case t.current:
			mark = "current"
		}
		p.f("<tr class=\"%s\"><td>%s<td>%d<td>%d<td>%s<td>%s<td>%s\n", mark, esc(t.task), t.iterations, t.failures,
			iterLink(t.firstIter), iterLink(t.lastIter), mark)
	}
	p.s("</tbody></table>\n</section>\n")
}

func iterLink(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("<a href=\"#i%d\">%d</a>", n, n)
}

// hookTable writes what looprun's hooks said inside the agent's sessions.
func (p *page) hookTable(v *loopView) {
	if len(v.hooks) == 0 {
		return
	}
	p.s("<section id=hooks><h2>Inside the sessions (looprun's hooks)</h2>\n<table><thead><tr><th>when<th>session<th>what<th></thead><tbody>\n")
	for _, e := range v.hooks {
		p.f("<tr><td>%s<td><code>%s</code><td>%s<td>%s\n", esc(p.time(e.At)), esc(e.Session), esc(kindWords(e.Kind)), esc(e.Text))
	}
	p.s("</tbody></table>\n</section>\n")
}

// rowChunk is how many rows of the iterations' table a tbody holds.
const rowChunk = 250

// iterationTable writes a row of each iteration, linked to its log.
func (p *page) iterationTable(v *loopView) {
	if len(v.runs) == 0 {
		return
	}
	p.s("<section id=iterations><h2>Iterations</h2>\n")
	p.s("<table class=runs><colgroup><col class=n><col class=t><col class=t><col class=r><col class=c><col class=n><col class=n><col class=n><col class=c><col class=n><col class=err><col class=t><col class=t><col class=task><col class=n></colgroup>\n")
	p.s("<thead><tr><th>#<th>started<th>took<th>result<th>circuit<th>files<th>tests<th>score<th>risk<th>in a row<th>error<th>cost<th>tokens<th>task<th>log</thead>\n")
	for i, e := range v.runs {
		// The rows in bodies of rowChunk, which the browser lays out only
		// when they come into view: a page of 10,000 opens at once.
		if i%rowChunk == 0 {
			if i > 0 {
				p.s("</tbody>")
			}
			p.f("<tbody style=\"contain-intrinsic-size:auto %dpx\">\n", 22*min(rowChunk, len(v.runs)-i))
		}
		r := e.Run
		res := r.Result
		if r.Probe {
			res += "*"
		}
		// A limited run is no iteration: the same runs again, under the
		// same number, and the link goes to that.
		id := "i"
		if r.Result == journal.ResultLimited || r.Result == journal.ResultStopped {
			id = "l"
		}
		p.f("<tr id=%s%d class=%s><td>%d<td>%s<td>%s<td><b>%s</b><td>%s<td>%d<td>%s<td>%s<td>%s<td>%d<td>",
			id, e.Iteration, r.Result, e.Iteration, esc(p.clock(r.Started)), esc(duration(r.Duration)), esc(res), esc(e.State),
			r.Files, esc(testsColumn(r.Tests)), esc(score(r.Score)), esc(r.Risk), r.Consecutive)
		if r.Fingerprint != "" {
			p.f("<a href=\"#e%s\"><code>%s</code></a> %s", esc(r.Fingerprint), esc(r.Fingerprint), esc(firstLine(r.Error, 120)))
		}
		p.s("<td>")
		if r.CostUSD > 0 {
			p.f("$%.4f", r.CostUSD)
		}
		p.s("<td>")
		if r.Tokens > 0 {
			p.s(strconv.Itoa(r.Tokens))
		}
		p.f("<td>%s<td>", esc(firstLine(r.Task, 60)))
		if path, ok := v.l.Logs[e.Iteration]; ok {
			if href := p.o.logLink(e.Iteration, path); href != "" {
				p.f("<a href=\"%s\">log</a>", esc(href))
			}
		}
		p.s("\n")
	}
	p.s("</tbody></table>\n</section>\n")
}

// fleetSection writes the breaker a fleet shares, and its workers.
func (p *page) fleetSection() {
	f := p.fleet
	p.f("<section id=fleet><h2>Fleet %s</h2>\n", esc(f.Name))
	if f.Err != nil {
		p.f("<p class=problem>The shared breaker on %s could not be read: %s</p>\n", esc(f.Redis), esc(f.Err.Error()))
	} else {
		s := f.Stats
		p.f("<div class=cards><div class=\"card state %s\"><h3>shared circuit</h3><p class=big>%s</p>", stateClass(s.State.String()), esc(s.State.String()))
		if s.Reason.Kind != loopbreaker.ReasonNone {
			p.f("<p>%s</p>", esc(s.Reason.String()))
		}
		p.f("<p class=note>on %s</p></div>", esc(f.Redis))
		p.f("<div class=card><h3>shared counts</h3><p>%d failures in a row, %d in all; %d openings (%d in a row)</p></div>",
			s.Failures.Consecutive, s.Failures.Total, s.Opens, s.ConsecutiveOpens)
		if s.Spend.Total != (loopbreaker.Usage{}) || s.Spend.MaxCostUSD > 0 {
			p.f("<div class=card><h3>the fleet's spend</h3><p class=big>$%.2f</p><p>%s tokens</p></div>", s.Spend.Total.CostUSD, thousands(s.Spend.Total.Tokens()))
		}
		if s.ProviderLimit.Kind != loopbreaker.ReasonNone {
			p.f("<div class=\"card limit\"><h3>provider limit</h3><p>%s</p></div>", esc(s.ProviderLimit.String()))
		}
		p.s("</div>\n")
	}
	p.s("<table><thead><tr><th>loop<th>worker<th>iterations<th>failed<th>last iteration<th>circuit then<th>last run</thead><tbody>\n")
	for _, v := range p.loops {
		failed, lastAt, lastState := 0, time.Time{}, "-"
		for _, e := range v.runs {
			if e.Run.Result == journal.ResultFailed {
				failed++
			}
			lastAt, lastState = e.At, e.State
		}
		exit := "-"
		if v.exit != nil {
			exit = v.exit.Name + ": " + v.exit.Stopped
		}
		p.f("<tr><td><a href=\"#loop-%s\">%s</a><td><code>%s</code><td>%d<td>%d<td>%s<td>%s<td>%s\n",
			slug(v.l.Name), esc(v.l.Name), esc(v.worker), len(v.runs), failed, esc(p.time(lastAt)), esc(lastState), esc(exit))
	}
	p.s("</tbody></table>\n</section>\n")
}

func stateClass(s string) string {
	switch s {
	case "OPEN":
		return "open"
	case "HALF_OPEN", "WATCH":
		return "half"
	}
	return "closed"
}

func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

func score(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func testsColumn(t *journal.Tests) string {
	if t == nil {
		return "-"
	}
	passing := "?"
	if t.Passing != nil {
		passing = strconv.Itoa(*t.Passing)
	}
	return passing + "/" + strconv.Itoa(t.Failing+t.Errors)
}

func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

const css = `
:root{--ok:#2e7d32;--failed:#c62828;--limited:#7b1fa2;--stopped:#212121;--line:#ddd;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;background:#fafafa}
body{margin:0}header{padding:12px 24px;background:#263238;color:#fff}header h1{margin:0;font-size:20px}.made{margin:4px 0 0;color:#b0bec5;font-size:13px}
main{padding:8px 24px 48px;max-width:1400px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:16px}.card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:150px;max-width:380px}
.card h3{margin:0;font-size:12px;text-transform:uppercase;color:#666;letter-spacing:.04em}.card p{margin:4px 0;font-size:14px}.big{font-size:26px!important;font-weight:600}
.state.closed{border-left:6px solid #66bb6a}.state.open{border-left:6px solid #e53935}.state.half{border-left:6px solid #ffb300}.card.limit{border-left:6px solid var(--limited)}
.note,.where{color:#666;font-size:13px}.problem{color:var(--failed)}
.stuck{background:#fff3f3;border:1px solid #f3c1c1;border-radius:6px;padding:4px 16px 8px;margin-top:16px}.stuck dt{font-weight:600;margin-top:6px}.stuck dd{margin-left:16px}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:12px;background:#f4f4f4;padding:4px 6px;border-radius:3px;max-height:14em;overflow:auto}
.chart{width:100%;height:auto;background:#fff;border:1px solid var(--line);border-radius:6px}.chart text{font-size:11px;fill:#555}.lane{font-weight:600}
.tick{stroke:#eee}text.tick{stroke:none;text-anchor:middle}.cap{stroke:var(--failed);stroke-dasharray:6 4}text.cap{fill:var(--failed);stroke:none}
.warn{stroke:#ffa000;stroke-dasharray:2 3}circle.spend_warning{fill:#ffa000;stroke:#fff}circle.spend_cap{fill:var(--failed);stroke:#fff}text.warn{fill:#b26a00;stroke:none}.spent{fill:none;stroke:#1565c0;stroke-width:2}.cost{fill:none;stroke:#1565c0;stroke-width:1}text.cost{fill:#1565c0;stroke:none}
.legend{font-size:12px;color:#555;display:flex;flex-wrap:wrap;gap:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px;border-radius:2px}
.legend i.hatch{background:repeating-linear-gradient(45deg,#c9a3d6 0 3px,#fff 3px 6px)}
table{border-collapse:collapse;background:#fff;font-size:13px;width:100%}th,td{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f0f0f0;position:sticky;top:0}
.runs{table-layout:fixed}.runs tbody{content-visibility:auto}.runs td{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
col.n{width:4.5em}col.t{width:6.5em}col.r{width:6.5em}col.c{width:7em}col.task{width:12em}col.err{width:auto}
.runs b{font-weight:600}.failed b{color:var(--failed)}.limited b{color:var(--limited)}.stopped b{color:var(--stopped)}.ok b{color:var(--ok);font-weight:400}
tr.circuit_opened td,tr.gave_up td,tr.protected_files td{background:#fff0f0}tr.circuit_closed td{background:#f0fff0}tr.skipped td{color:#999;text-decoration:line-through}tr.current td{font-weight:600}
tr:target td{background:#fff8c4!important}a{color:#1565c0}code{font-size:12px}
`
