package redisstore

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
)

//go:embed fleet.lua
var fleetSource string

// fleetScript is the shared breaker: every call of a worker runs it once
// (EVALSHA, and EVAL when Redis does not have it yet).
var fleetScript = redis.NewScript(fleetSource)

// reply is what the script answers: the shared state after the operation.
type reply struct {
	state      loopbreaker.State
	reason     loopbreaker.Reason
	held       bool
	allow      bool
	probe      bool
	token      string        // the probe lease's token, when probe
	retry      time.Duration // until the refusal may end: the cooldown, a limit's reset, the rolling hour
	used       int           // calls in the rolling hour
	why        string        // a refusal's cause beside the circuit: "budget", "limit", "spend" or ""
	budget     bool          // refused because the budget is spent
	gen        int64         // counts Resume, Skip and Reset
	opens      int
	failures   int                // consecutive failures, fleet-wide
	now        time.Time          // Redis's clock
	limit      loopbreaker.Reason // the provider limit in force; zero when none is
	limitLeft  time.Duration      // until a wait lifts; zero for a stop
	limitAt    time.Time          // when a wait lifts, by Redis's clock; zero for a stop
	spend      loopbreaker.Usage  // over the fleet's life
	hour       loopbreaker.Usage  // in the rolling hour (with an hourly cap)
	capped     string             // the spend cap reached ("c", "t", "hc", "ht"; see fleet.lua)
	warned     string             // the spend cap most spent, from 80%
	burn       loopbreaker.Usage  // in the burn window (with a burn-rate cap)
	windows    []windowReport     // the usage windows' reports in force, oldest first
	windowStop loopbreaker.Reason // the stop of the window share; zero when none is in force
	stats      *sharedStats
	rawReason  string
}

// sharedStats are the figures only the stats operation reads.
type sharedStats struct {
	openedAt         time.Time
	cooldown         time.Duration
	consecutiveOpens int
	totalFailures    int
	iterations       int
	neutral          int
	sameInARow       int
	lastFingerprint  string
	evicted          int
	probeOwner       string
	budgetRetry      time.Duration
	errors           map[string]int
}

// keysOf returns the keys of the fleet name, all under one hash tag.
func keysOf(name string) []string {
	tag := "{loopbreaker:" + name + "}:"
	return []string{tag + "state", tag + "errors", tag + "calls", tag + "replays", tag + "spend"}
}

// call runs op on the shared state with args, bounded by the worker's
// Timeout.
func (w *Worker) call(op string, args ...any) (reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout)
	defer cancel()
	s := &w.shared
	stop := ""
	if s.stopAtWindowShare {
		stop = "1"
	}
	all := make([]any, 0, 20+len(args))
	all = append(all, op, w.id, w.cfg.IdleTTL.Milliseconds(), s.cooldowns, w.cfg.ProbeLease.Milliseconds(),
		s.callsPerHour, s.maxFailures, s.maxSameError, s.maxSameInARow, s.maxFingerprints,
		s.maxTokens, formatCost(s.maxCost), s.maxTokensPerHour, formatCost(s.maxCostPerHour), s.maxOpens,
		s.maxWindowShare, stop, formatCost(s.maxCostPerMinute), s.maxTokensPerMinute, s.burnWindow.Milliseconds())
	all = append(all, args...)
	v, err := fleetScript.Run(ctx, w.cfg.Client, w.keys, all...).Slice()
	if err != nil {
		if w.addr != "" {
			err = fmt.Errorf("redis at %s: %w", w.addr, err)
		}
		return reply{}, err
	}
	return parseReply(op, v, w.cfg.Breaker.Now().Location())
}

// addressOf returns where client reaches Redis, for messages: its address
// (host:port, or a unix socket's path), never its user or password; ""
// for a client of another kind.
func addressOf(client redis.Scripter) string {
	switch c := client.(type) {
	case *redis.Client:
		o := c.Options()
		if o.Network == "unix" {
			return "unix://" + o.Addr
		}
		return o.Addr
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	case *redis.Ring:
		return strings.Join(slices.Sorted(maps.Values(c.Options().Addrs)), ",")
	}
	return ""
}

// parseReply reads the script's answer to op. A value that cannot be what
// the script writes there (a state that is none, a count that is no
// number, a spend below zero: a key edited by hand, another program's
// data under the fleet's name) is an error, so that the worker treats the
// state as out of reach rather than read a zero into it.
// Times are read into loc, the location of the worker's clock, as a
// breaker's are.
func parseReply(op string, v []any, loc *time.Location) (reply, error) {
	const fixed = 29
	if len(v) < fixed {
		return reply{}, fmt.Errorf("redisstore: the script answered %d values, not %d", len(v), fixed)
	}
	p := replyReader{v: v}
	var r reply
	r.state = loopbreaker.State(p.within(0, "state", int(loopbreaker.Closed), int(loopbreaker.HalfOpen)))
	r.rawReason = p.str(1)
	r.reason = p.reason(1, "reason")
	r.held = p.flag(2, "held")
	if r.state != loopbreaker.Closed && r.reason.Kind == loopbreaker.ReasonNone {
		p.fail(1, "reason", fmt.Sprintf("empty for a %s circuit", r.state))
	}
	if before := p.reason(3, "reason before"); before.Kind != loopbreaker.ReasonNone {
		r.reason = withBefore(r.reason, resolvedReason(p.str(3), 0))
	}
	r.allow = p.within(4, "allow", 0, 1) == 1
	r.probe = p.within(5, "probe", 0, 1) == 1
	r.token = p.str(6)
	r.retry = time.Duration(p.count(7, "retry")) * time.Millisecond
	r.used = p.count(8, "calls used")
	r.why = p.oneOf(9, "refusal", "", "limit", "spend", "budget", "window", "burn")
	r.budget = r.why == "budget"
	r.gen = int64(p.count(10, "generation"))
	r.opens = p.count(11, "opens")
	r.failures = p.count(12, "failures in a row")
	r.now = time.UnixMilli(int64(p.count(13, "time")))
	if r.limit = p.reason(14, "provider limit"); r.limit.Kind != loopbreaker.ReasonNone {
		if ms := p.count(15, "limit until"); ms > 0 && r.limit.Kind == loopbreaker.ReasonProviderLimit {
			r.limitAt = time.UnixMilli(int64(ms))
			r.limitLeft = max(r.limitAt.Sub(r.now), 0)
		}
	}
	r.spend = loopbreaker.Usage{InputTokens: p.count(16, "input tokens"), OutputTokens: p.count(17, "output tokens"), CostUSD: p.cost(18, "cost")}
	r.hour = loopbreaker.Usage{InputTokens: p.count(19, "input tokens this hour"), OutputTokens: p.count(20, "output tokens this hour"), CostUSD: p.cost(21, "cost this hour")}
	caps := []string{"", "c", "t", "hc", "ht"}
	r.capped, r.warned = p.oneOf(22, "cap reached", caps...), p.oneOf(23, "cap warned", caps...)
	if r.windowStop = p.reason(24, "window share stop"); r.windowStop.Kind != loopbreaker.ReasonNone && r.windowStop.Kind != loopbreaker.ReasonWindowShare {
		p.fail(24, "window share stop", fmt.Sprintf("is a reason of kind %s", r.windowStop.Kind))
	}
	r.burn = loopbreaker.Usage{InputTokens: p.count(25, "input tokens in the burn window"), OutputTokens: p.count(26, "output tokens in the burn window"), CostUSD: p.cost(27, "cost in the burn window")}
	n := p.within(28, "usage windows", 0, maxWindows)
	const perWindow = 5
	base := fixed + perWindow*n
	if len(v) < base {
		return reply{}, fmt.Errorf("redisstore: the script answered %d values, not %d", len(v), base)
	}
	for i := fixed; i < base; i += perWindow {
		r.windows = append(r.windows, p.window(i, loc))
	}
	if op != "stats" {
		return r, p.err
	}
	const extra = 11
	if len(v) < base+extra || (len(v)-base-extra)%2 != 0 {
		return reply{}, fmt.Errorf("redisstore: the script answered %d values to stats", len(v))
	}
	st := &sharedStats{
		cooldown:         time.Duration(p.count(base+1, "cooldown")) * time.Millisecond,
		consecutiveOpens: p.count(base+2, "opens in a row"),
		totalFailures:    p.count(base+3, "failures"),
		iterations:       p.count(base+4, "iterations"),
		neutral:          p.count(base+5, "neutral iterations"),
		sameInARow:       p.count(base+6, "same error in a row"),
		lastFingerprint:  p.str(base + 7),
		evicted:          p.count(base+8, "evicted errors"),
		probeOwner:       p.str(base + 9),
		budgetRetry:      time.Duration(p.count(base+10, "budget retry")) * time.Millisecond,
		errors:           make(map[string]int),
	}
	if ms := p.count(base, "opened"); ms > 0 {
		st.openedAt = time.UnixMilli(int64(ms))
	}
	for i := base + extra; i+1 < len(v); i += 2 {
		st.errors[p.str(i)] = p.count(i+1, "error count")
	}
	r.stats = st
	return r, p.err
}

// replyReader reads the values of the script's answer, and keeps the
// first that is not what the script writes there.
type replyReader struct {
	v   []any
	err error
}

// fail records that value i, what, is wrong, and why.
func (p *replyReader) fail(i int, what, why string) {
	if p.err == nil {
		p.err = fmt.Errorf("redisstore: the fleet's state on Redis is not valid: %s (value %d) %s", what, i, why)
	}
}

// str returns value i as text.
func (p *replyReader) str(i int) string {
	switch v := p.v[i].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// count returns value i, a whole number, 0 or more.
func (p *replyReader) count(i int, what string) int {
	var n int64
	switch v := p.v[i].(type) {
	case int64:
		n = v
	case string:
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil {
			p.fail(i, what, fmt.Sprintf("is %q, not a whole number", v))
			return 0
		}
	default:
		p.fail(i, what, fmt.Sprintf("is %v, not a whole number", v))
		return 0
	}
	if n < 0 || n > math.MaxInt {
		p.fail(i, what, fmt.Sprintf("is %d, out of range", n))
		return 0
	}
	return int(n)
}

// within returns value i, a whole number from lo to hi.
func (p *replyReader) within(i int, what string, lo, hi int) int {
	n := p.count(i, what)
	if n < lo || n > hi {
		p.fail(i, what, fmt.Sprintf("is %d, not between %d and %d", n, lo, hi))
		return lo
	}
	return n
}

// flag returns value i, "1" or "".
func (p *replyReader) flag(i int, what string) bool {
	return p.oneOf(i, what, "", "1") == "1"
}

// oneOf returns value i, one of the texts given.
func (p *replyReader) oneOf(i int, what string, texts ...string) string {
	s := p.str(i)
	if !slices.Contains(texts, s) {
		p.fail(i, what, fmt.Sprintf("is %q, none of %q", s, texts))
		return ""
	}
	return s
}

// cost returns value i, a number of dollars the script wrote with 17
// significant digits: finite, 0 or more.
func (p *replyReader) cost(i int, what string) float64 {
	s := p.str(i)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		p.fail(i, what, fmt.Sprintf("is %q, not a number of dollars", s))
		return 0
	}
	return f
}

// window returns the report of a usage window in values i to i+4: its
// length in ns, its source, the share used, its reset in ms (0 when not
// known) and when it stops counting (ms), its times in loc.
func (p *replyReader) window(i int, loc *time.Location) windowReport {
	length, err := strconv.ParseInt(p.str(i), 10, 64)
	if err != nil || length < 0 {
		p.fail(i, "window length", fmt.Sprintf("is %q, not a duration", p.str(i)))
	}
	used := p.cost(i+2, "window share")
	if used > 100 {
		p.fail(i+2, "window share", fmt.Sprintf("is %v, above 100", used))
	}
	r := windowReport{w: loopbreaker.Window{Length: time.Duration(length), Used: used, Source: p.str(i + 1)}}
	if ms := p.count(i+3, "window reset"); ms > 0 {
		r.w.Reset = time.UnixMilli(int64(ms)).In(loc)
	}
	r.until = time.UnixMilli(int64(p.count(i+4, "window until"))).In(loc)
	return r
}

// reason returns value i, a reason the script stored as JSON; the zero
// Reason for "". A reason this build cannot read but that is JSON (a newer
// worker's kind) still refuses: it reads as forced open, with the JSON as
// its message. Text that is no JSON object is an error.
func (p *replyReader) reason(i int, what string) loopbreaker.Reason {
	s := p.str(i)
	if s == "" {
		return loopbreaker.Reason{}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		p.fail(i, what, fmt.Sprintf("is %q, not a reason", s))
		return loopbreaker.Reason{}
	}
	return parseReason(s)
}

// withBefore returns r, an abort or a give-up, with what the circuit had
// before it in its Message (and Last), as a breaker's reads.
func withBefore(r, before loopbreaker.Reason) loopbreaker.Reason {
	switch r.Kind {
	case loopbreaker.ReasonAborted:
		r.Message = before.String()
	case loopbreaker.ReasonGaveUp:
		r.Message, r.Last = before.String(), before.Kind
	}
	return r
}

// resolvedReason reads a reason the script keeps as what came before an
// abort: its own "before", when it has one, nested (an Abort of an aborted
// or given-up circuit), read into it as withBefore does.
func resolvedReason(s string, depth int) loopbreaker.Reason {
	r := parseReason(s)
	var nested struct {
		Before json.RawMessage `json:"before"`
	}
	if depth < 64 && json.Unmarshal([]byte(s), &nested) == nil && len(nested.Before) > 0 {
		if before := resolvedReason(string(nested.Before), depth+1); before.Kind != loopbreaker.ReasonNone {
			r = withBefore(r, before)
		}
	}
	return r
}

// parseReason reads a reason the script stored as JSON. One this build
// cannot read (a newer worker's kind, or no kind) still refuses: it reads
// as forced open, with the JSON as its message.
func parseReason(s string) loopbreaker.Reason {
	var r loopbreaker.Reason
	if s == "" {
		return r
	}
	if err := json.Unmarshal([]byte(s), &r); err != nil || r.Kind == loopbreaker.ReasonNone {
		return loopbreaker.Reason{Kind: loopbreaker.ReasonForcedOpen, Message: s}
	}
	return r
}

// formatCost writes a cost in US dollars for the script: the shortest
// text that reads back as the same float64.
func formatCost(c float64) string {
	return strconv.FormatFloat(c, 'g', -1, 64)
}
