package redisstore

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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
	state     loopbreaker.State
	reason    loopbreaker.Reason
	held      bool
	allow     bool
	probe     bool
	token     string        // the probe lease's token, when probe
	retry     time.Duration // until the refusal may end: the cooldown, a limit's reset, the rolling hour
	used      int           // calls in the rolling hour
	why       string        // a refusal's cause beside the circuit: "budget", "limit", "spend" or ""
	budget    bool          // refused because the budget is spent
	gen       int64         // counts Resume, Skip and Reset
	opens     int
	failures  int                // consecutive failures, fleet-wide
	now       time.Time          // Redis's clock
	limit     loopbreaker.Reason // the provider limit in force; zero when none is
	limitLeft time.Duration      // until a wait lifts; zero for a stop
	limitAt   time.Time          // when a wait lifts, by Redis's clock; zero for a stop
	spend     loopbreaker.Usage  // over the fleet's life
	hour      loopbreaker.Usage  // in the rolling hour (with an hourly cap)
	capped    string             // the spend cap reached ("c", "t", "hc", "ht"; see fleet.lua)
	warned    string             // the spend cap most spent, from 80%
	stats     *sharedStats
	rawReason string
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
	all := make([]any, 0, 15+len(args))
	all = append(all, op, w.id, w.cfg.IdleTTL.Milliseconds(), s.cooldowns, w.cfg.ProbeLease.Milliseconds(),
		s.callsPerHour, s.maxFailures, s.maxSameError, s.maxSameInARow, s.maxFingerprints,
		s.maxTokens, formatCost(s.maxCost), s.maxTokensPerHour, formatCost(s.maxCostPerHour), s.maxOpens)
	all = append(all, args...)
	v, err := fleetScript.Run(ctx, w.cfg.Client, w.keys, all...).Slice()
	if err != nil {
		return reply{}, err
	}
	return parseReply(op, v)
}

// parseReply reads the script's answer to op.
func parseReply(op string, v []any) (reply, error) {
	const base = 24
	if len(v) < base {
		return reply{}, fmt.Errorf("redisstore: the script answered %d values, not %d", len(v), base)
	}
	var r reply
	r.state = loopbreaker.State(toInt(v[0]))
	r.rawReason = toString(v[1])
	r.reason = parseReason(r.rawReason)
	r.held = toString(v[2]) == "1"
	if before := toString(v[3]); before != "" {
		last := parseReason(before)
		switch r.reason.Kind {
		case loopbreaker.ReasonAborted:
			r.reason.Message = last.String()
		case loopbreaker.ReasonGaveUp:
			r.reason.Message, r.reason.Last = last.String(), last.Kind
		}
	}
	r.allow = toInt(v[4]) == 1
	r.probe = toInt(v[5]) == 1
	r.token = toString(v[6])
	r.retry = time.Duration(toInt(v[7])) * time.Millisecond
	r.used = toInt(v[8])
	r.why = toString(v[9])
	r.budget = r.why == "budget"
	r.gen = int64(toInt(v[10]))
	r.opens = toInt(v[11])
	r.failures = toInt(v[12])
	r.now = time.UnixMilli(int64(toInt(v[13])))
	if r.limit = parseReason(toString(v[14])); r.limit.Kind != loopbreaker.ReasonNone {
		if ms := toInt(v[15]); ms > 0 && r.limit.Kind == loopbreaker.ReasonProviderLimit {
			r.limitAt = time.UnixMilli(int64(ms))
			r.limitLeft = max(r.limitAt.Sub(r.now), 0)
		}
	}
	r.spend = loopbreaker.Usage{InputTokens: toInt(v[16]), OutputTokens: toInt(v[17]), CostUSD: toFloat(v[18])}
	r.hour = loopbreaker.Usage{InputTokens: toInt(v[19]), OutputTokens: toInt(v[20]), CostUSD: toFloat(v[21])}
	r.capped, r.warned = toString(v[22]), toString(v[23])
	if op != "stats" {
		return r, nil
	}
	const extra = 11
	if len(v) < base+extra || (len(v)-base-extra)%2 != 0 {
		return reply{}, fmt.Errorf("redisstore: the script answered %d values to stats", len(v))
	}
	e := v[base:]
	st := &sharedStats{
		cooldown:         time.Duration(toInt(e[1])) * time.Millisecond,
		consecutiveOpens: toInt(e[2]),
		totalFailures:    toInt(e[3]),
		iterations:       toInt(e[4]),
		neutral:          toInt(e[5]),
		sameInARow:       toInt(e[6]),
		lastFingerprint:  toString(e[7]),
		evicted:          toInt(e[8]),
		probeOwner:       toString(e[9]),
		budgetRetry:      time.Duration(toInt(e[10])) * time.Millisecond,
		errors:           make(map[string]int),
	}
	if ms := toInt(e[0]); ms > 0 {
		st.openedAt = time.UnixMilli(int64(ms))
	}
	for i := base + extra; i+1 < len(v); i += 2 {
		st.errors[toString(v[i])] = toInt(v[i+1])
	}
	r.stats = st
	return r, nil
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

func toInt(v any) int {
	switch v := v.(type) {
	case int64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

// toFloat reads a number the script wrote with 17 significant digits.
func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0
		}
		return f
	}
	return 0
}

// formatCost writes a cost in US dollars for the script: the shortest
// text that reads back as the same float64.
func formatCost(c float64) string {
	return strconv.FormatFloat(c, 'g', -1, 64)
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}
