package limits

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind is what a recognised limit asks of the loop.
type Kind uint8

const (
	// None: not a limit. The error is an ordinary failure, or no error.
	None Kind = iota
	// Wait: a limit that lifts at a reset (Limit.Reset, or a default wait
	// when the text named no time). Waiting it out is the cure.
	Wait
	// Stop: a limit no waiting ends: no credit left, a quota or billing
	// cap, usage disabled by an admin, a refusal under the provider's usage
	// policy. A person has to act.
	Stop
	// Loop: no limit, but the provider's word that the agent is looping: it
	// refused the agent's repeated, identical tool calls (DashScope's
	// "Repetitive tool calls detected"), or the agent's own guard halted
	// them (Gemini CLI's "A potential loop was detected"). Neither waiting
	// nor credit ends it; a new approach does.
	Loop
)

// String returns "none", "wait", "stop" or "loop".
func (k Kind) String() string {
	switch k {
	case None:
		return "none"
	case Wait:
		return "wait"
	case Stop:
		return "stop"
	case Loop:
		return "loop"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Limit is what FromText, FromHTTP and FromError recognised.
type Limit struct {
	Kind Kind
	// Reset is when a Wait lifts, never before the now it was computed
	// against. It is zero when the text named no usable time; the caller
	// then waits its default (Until).
	Reset time.Time
	// Why is a short description of what was recognised, for a person:
	// "You've hit your session limit (resets 2026-01-29 17:00
	// Europe/Vilnius)", "HTTP 429: API error rate_limit_exceeded". Empty
	// for None.
	Why string
	// Throttle marks a Wait that is a short rate or capacity throttle (a
	// per-minute rate limit, an overloaded server, Claude Code's "Server
	// is temporarily limiting requests"), not a usage window of hours or
	// days; a Wait whose Reset is within a minute is one too. It matters
	// when Reset is zero: a caller waits a throttle out for minutes, a
	// usage limit for an hour. Always false for None, Stop and Loop.
	Throttle bool
}

// Until is when a Wait lifts: Reset, or now plus defaultWait when the text
// named no time. It is zero for None, Stop and Loop.
func (l Limit) Until(now time.Time, defaultWait time.Duration) time.Time {
	switch {
	case l.Kind != Wait:
		return time.Time{}
	case l.Reset.IsZero():
		return now.Add(defaultWait)
	}
	return l.Reset
}

// DefaultWait is how long to wait out a limit whose reset time is not
// known: 60 minutes, as ralph-claude-code waits out Claude's usage limit.
const DefaultWait = 60 * time.Minute

// MaxScan is how much of a text FromText reads: its last 64 KiB. A limit
// message ends an agent's output (the agent stops when it hits the
// limit), and the bound keeps the cost of a call the same on any input.
const MaxScan = 64 << 10

// maxHits is how many matches, the last in the text, FromText resolves
// into findings. A real output holds one to three limit messages; the
// bound keeps an input made of thousands of them cheap.
const maxHits = 16

// Pattern is a host's own way of recognising a limit in text.
//
// Patterns run before the built-in rules, in order, and the first that
// matches decides; the built-in rules run only when none matches. A
// pattern of Kind None that matches vetoes the built-in rules: the text is
// no limit. A pattern sees the same text the built-in rules see: the last
// MaxScan bytes, without the tool results of Claude Code's stream-json
// output.
//
// When Match has a group named "reset", its text is read as the time the
// limit lifts: a clock time as Claude Code writes it ("5pm
// (Europe/Vilnius)", "May 5 at 9pm"), a duration ("10 minutes", "in 2h",
// "37s"), a Unix time, an RFC 3339 time or an HTTP date.
//
// A Pattern with a nil Match, or a Kind other than None, Wait and Stop, is
// ignored.
type Pattern struct {
	Match *regexp.Regexp
	Kind  Kind
	// Why is Limit.Why; empty reports the pattern's expression.
	Why string
	// Throttle is Limit.Throttle, for a Wait.
	Throttle bool
}

// rank orders the kinds for outranks: a stop over a loop over a wait.
func (k Kind) rank() int {
	switch k {
	case Wait:
		return 1
	case Loop:
		return 2
	case Stop:
		return 3
	}
	return 0
}

// FromText recognises a provider limit in what an agent printed: Claude
// Code's plain text and its stream-json lines, API error bodies, SDK error
// strings. It reads the last MaxScan bytes of text; now is the time the
// text was produced, against which reset times are resolved. Host patterns
// run first (see Pattern).
func FromText(text string, now time.Time, patterns ...Pattern) Limit {
	return scan(text, now, patterns).limit()
}

// A finding is one limit recognised in a text.
type finding struct {
	kind     Kind
	reset    when
	why      string
	throttle bool // a short throttle (see Limit.Throttle)
}

func (f finding) limit() Limit {
	if f.kind == None {
		return Limit{}
	}
	l := Limit{Kind: f.kind, Why: f.why, Throttle: f.kind == Wait && f.throttle}
	if f.kind == Wait && f.reset.ok {
		l.Reset = f.reset.at
		l.Why += " (resets " + f.reset.at.Format("2006-01-02 15:04") + " " + zoneName(f.reset.at) + ")"
	}
	return l
}

// zoneName names t's zone: its IANA name ("Europe/Vilnius"), or, for the
// machine's local zone, its abbreviation ("EET").
func zoneName(t time.Time) string {
	if name := t.Location().String(); name != "Local" {
		return name
	}
	abbr, _ := t.Zone()
	return abbr
}

// outranks reports whether f decides over g, the finding before it in the
// text: a Stop over a Loop over any Wait (waiting out a throttle does not
// end a loop, and a person has to act on a stop whatever else), a Wait
// with a reset over one without, the later reset over the earlier one, of
// two Waits without a reset a usage limit over a throttle, and, all else
// equal, the later finding.
func (f finding) outranks(g finding) bool {
	switch {
	case f.kind != g.kind:
		return f.kind.rank() > g.kind.rank()
	case f.kind != Wait:
		return true
	case !g.reset.ok && !f.reset.ok:
		return !f.throttle || g.throttle
	case !g.reset.ok:
		return true
	}
	return f.reset.ok && !f.reset.at.Before(g.reset.at)
}

func pick(fs []finding) finding {
	var best finding
	for _, f := range fs {
		if best.kind == None || f.outranks(best) {
			best = f
		}
	}
	return best
}

// scan recognises a limit in text. See FromText.
func scan(text string, now time.Time, patterns []Pattern) finding {
	w := window(text)
	if len(patterns) > 0 {
		if f, ok := hostFinding(segments(w, now), now, patterns); ok {
			return f
		}
	}
	if !hasAnchor(w) {
		return finding{} // most text: no word a limit is made of
	}
	s := scanner{w: w, now: now}
	s.read()
	return s.decide()
}

// hostFinding runs the host's patterns (see Pattern).
func hostFinding(segs []segment, now time.Time, patterns []Pattern) (finding, bool) {
	for _, p := range patterns {
		if p.Match == nil || p.Kind > Stop {
			continue
		}
		for i := len(segs) - 1; i >= 0; i-- {
			if segs[i].event != nil {
				continue
			}
			ms := p.Match.FindAllStringSubmatchIndex(segs[i].text, -1)
			if len(ms) == 0 {
				continue
			}
			if p.Kind == None {
				return finding{}, true
			}
			m := ms[len(ms)-1]
			f := finding{kind: p.Kind, why: p.Why, throttle: p.Throttle}
			if f.why == "" {
				f.why = "pattern " + p.Match.String()
			}
			if g := p.Match.SubexpIndex("reset"); g > 0 && m[2*g] >= 0 && p.Kind == Wait {
				f.reset = parseReset(segs[i].text[m[2*g]:m[2*g+1]], now)
			}
			return f, true
		}
	}
	return finding{}, false
}

// window is the part of text FromText reads: the last MaxScan bytes. When
// the cut falls inside a line that is JSON, the rest of that line is left
// out: a JSON line cut short cannot be read, and it may be a tool result
// that only quotes a limit message.
func window(text string) string {
	if len(text) <= MaxScan {
		return text
	}
	cut := len(text) - MaxScan
	w := text[cut:]
	start := strings.LastIndexByte(text[:cut], '\n') + 1
	if strings.HasPrefix(strings.TrimLeft(text[start:cut], " \t"), "{") {
		i := strings.IndexByte(w, '\n')
		if i < 0 {
			return ""
		}
		return w[i+1:]
	}
	for w != "" && !utf8.RuneStart(w[0]) {
		w = w[1:]
	}
	return w
}
