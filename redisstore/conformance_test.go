package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The fleet is the breaker: fleet.lua is a second implementation of the
// signals a fleet shares, so the same sequences of iterations run through
// a loopbreaker.CircuitBreaker and through a fleet of one worker must get
// the same decisions, reasons and counts. A signal the fleet shares is a
// row of conformanceCases; the fuzz target mixes them all.

// move is one thing a loop does: an iteration (Check, then, when it is
// allowed, Record with what it did), a report of the provider's usage
// windows (during an iteration, the fleet's or its own), time passing, or a
// person's control.
type move byte

const (
	moveSuccess  move = iota // an iteration that succeeded
	moveFailure              // an iteration that failed with the error "deploy: connection refused"
	moveFailure2             // ... with "go test: FAIL ./store"
	moveFailure3             // ... with "lint: 3 issues"
	moveNoticed              // a success that noticed the error "deploy: connection refused"
	moveNeutral              // an iteration the host cancelled (context.Canceled)
	moveCalls                // a success that made 3 calls
	moveSpend                // a success that spent 300 input and 100 output tokens, $0.25
	moveLimit                // an iteration a provider refused until an hour from now
	moveStop                 // an iteration a provider stopped (no credit)
	moveCooldown             // the cooldown passes (every clock: the breaker's, Redis's)
	moveAbort
	moveForceOpen
	moveResume
	moveSkip
	moveReset
	moveUsage        // a success whose spend (300 and 100 tokens, $0.25) was reported as it happened (AddUsage)
	moveMinute       // a minute passes (every clock)
	moveWindowWarn   // the provider reports its 5-hour window 70% used, resetting in an hour
	moveWindowFull   // ... the same window 90% used
	moveWindowWeekly // ... its weekly window (of another source) 50% used, resetting in 3 days
	moveWindowOver   // ... the 5-hour window with a reset already past: it started again
	moveCount        // how many moves there are
)

var moveNames = [...]string{"success", "failure", "failure2", "failure3", "noticed", "neutral", "calls", "spend",
	"limit", "stop", "cooldown", "abort", "force-open", "resume", "skip", "reset",
	"usage", "minute", "window-warn", "window-full", "window-weekly", "window-over"}

func (m move) String() string { return moveNames[m%moveCount] }

var failureTexts = map[move]string{
	moveFailure:  "deploy: connection refused",
	moveFailure2: "go test: FAIL ./store",
	moveFailure3: "lint: 3 issues",
}

// conformanceCooldown is long beside a test's moves: the fleet's cooldown
// runs on Redis's clock, the machine's, and passes only by a cooldown move.
const conformanceCooldown = 30 * time.Second

// conformanceConfig has every shared signal on but the burn rate (see
// withBurnRate), with thresholds a short sequence reaches.
func conformanceConfig() loopbreaker.Config {
	return loopbreaker.Config{
		Cooldown:            conformanceCooldown,
		MaxConsecutiveOpens: 3,
		Failures: loopbreaker.FailureRules{
			MaxConsecutive:     3,
			MaxSameError:       4,
			MaxSameErrorInARow: 0,
			MaxFingerprints:    2,
		},
		Spend: loopbreaker.SpendRules{MaxCallsPerHour: 12, MaxTokens: 1500, MaxCostUSD: 1, MaxWindowShare: 80},
	}
}

// withBurnRate sets a burn rate that three spending iterations within a
// minute reach ($0.60 a minute, 1000 tokens a minute over a minute), before
// the spend cap of the loop's life does.
func withBurnRate(c *loopbreaker.Config) {
	c.Spend.MaxCostUSDPerMinute, c.Spend.MaxTokensPerMinute, c.Spend.BurnWindow = 0.6, 1000, time.Minute
}

// conformanceCases are the sequences of the table: one or more for each
// signal the fleet shares. A new shared signal is a new row.
var conformanceCases = []struct {
	name  string
	cfg   func(*loopbreaker.Config) // changes to conformanceConfig
	moves []move
}{
	{"consecutive failures open, a success ends the run", nil,
		[]move{moveFailure, moveFailure2, moveSuccess, moveFailure, moveFailure2, moveFailure3, moveSuccess}},
	{"the same error across successes", func(c *loopbreaker.Config) { c.Failures.MaxConsecutive = -1 },
		[]move{moveFailure, moveSuccess, moveFailure, moveNoticed, moveSuccess, moveFailure, moveSuccess}},
	{"the same error in a row", func(c *loopbreaker.Config) {
		c.Failures.MaxConsecutive, c.Failures.MaxSameErrorInARow = -1, 2
	}, []move{moveFailure, moveFailure2, moveFailure2, moveSuccess}},
	{"fingerprints beyond the cap are evicted", func(c *loopbreaker.Config) { c.Failures.MaxConsecutive = -1 },
		[]move{moveFailure, moveFailure2, moveFailure3, moveFailure, moveSuccess, moveFailure, moveFailure, moveFailure, moveSuccess}},
	{"a neutral iteration changes no count", nil,
		[]move{moveFailure, moveNeutral, moveFailure, moveNeutral, moveFailure, moveSuccess}},
	{"the cooldown ends in one probe, whose success closes", nil,
		[]move{moveFailure, moveFailure, moveFailure, moveSuccess, moveCooldown, moveSuccess, moveSuccess}},
	{"a failed probe opens again, and the breaker gives up", nil,
		[]move{moveFailure, moveFailure, moveFailure, moveCooldown, moveFailure, moveCooldown, moveFailure, moveCooldown, moveSuccess}},
	{"a neutral probe gives the probe back", nil,
		[]move{moveFailure, moveFailure, moveFailure, moveCooldown, moveNeutral, moveSuccess, moveSuccess}},
	{"the call budget of the hour, and its warning", nil,
		[]move{moveCalls, moveCalls, moveSuccess, moveCalls, moveSuccess, moveSuccess, moveSuccess}},
	{"the spend caps, and the spend warning", func(c *loopbreaker.Config) { c.Spend.MaxCallsPerHour = 0 },
		[]move{moveSpend, moveSpend, moveSpend, moveSuccess, moveSpend, moveSuccess}},
	{"a provider limit refuses until it lifts, counting nothing", nil,
		[]move{moveFailure, moveLimit, moveSuccess, moveResume, moveSuccess}},
	{"a provider stop until a person resumes", nil,
		[]move{moveStop, moveSuccess, moveCooldown, moveSuccess, moveResume, moveSuccess}},
	{"abort holds, resume releases and starts the counts again", nil,
		[]move{moveFailure, moveFailure, moveAbort, moveSuccess, moveCooldown, moveSuccess, moveResume, moveFailure, moveSuccess}},
	{"force open holds, skip releases", nil,
		[]move{moveForceOpen, moveSuccess, moveSkip, moveFailure, moveSuccess}},
	{"reset starts afresh but for the calls and the spend", nil,
		[]move{moveFailure, moveFailure, moveFailure, moveReset, moveSpend, moveCalls, moveSuccess}},

	// The window share.
	{"a window at the share waits for its reset, warned from 80% of the cap", nil,
		[]move{moveWindowWarn, moveSuccess, moveWindowFull, moveSuccess, moveCooldown, moveSuccess, moveResume, moveSuccess, moveWindowWarn, moveSuccess}},
	{"a reset already past forgets the window, and the loop goes on", nil,
		[]move{moveWindowFull, moveSuccess, moveWindowOver, moveSuccess, moveWindowWarn, moveSuccess, moveWindowOver, moveSuccess}},
	{"the most used window warns, the one at the share refuses", nil,
		[]move{moveWindowWeekly, moveSuccess, moveWindowWarn, moveSuccess, moveWindowFull, moveSuccess, moveReset, moveSuccess}},
	{"with StopAtWindowShare the share stops until a person resumes", func(c *loopbreaker.Config) { c.Spend.StopAtWindowShare = true },
		[]move{moveWindowWarn, moveSuccess, moveWindowFull, moveSuccess, moveWindowOver, moveMinute, moveSuccess, moveSkip, moveSuccess, moveWindowFull, moveReset, moveSuccess}},
	{"the share's stop comes before the open circuit, the spend cap of the loop's life before it", func(c *loopbreaker.Config) { c.Spend.StopAtWindowShare = true },
		[]move{moveFailure, moveFailure, moveFailure, moveWindowFull, moveSuccess, moveResume, moveSpend, moveSpend, moveSpend, moveSpend, moveWindowFull, moveSuccess}},
	{"the open circuit and a provider limit come before the share that waits", nil,
		[]move{moveFailure, moveFailure, moveFailure, moveWindowFull, moveSuccess, moveCooldown, moveSuccess, moveWindowOver, moveSuccess,
			moveLimit, moveWindowFull, moveSuccess, moveResume, moveSuccess}},
	{"without a cap the windows are kept and refuse nothing", func(c *loopbreaker.Config) { c.Spend.MaxWindowShare = 0 },
		[]move{moveWindowFull, moveWindowWeekly, moveSuccess, moveWindowOver, moveSuccess}},

	// The burn rate.
	{"the burn rate refuses until the spend leaves its window, warned from 80%", func(c *loopbreaker.Config) {
		withBurnRate(c)
		c.Spend.MaxCostUSD = 0
	}, []move{moveSpend, moveSpend, moveSuccess, moveSpend, moveSuccess, moveMinute, moveSuccess, moveSpend, moveSuccess}},
	{"the burn rate in tokens", func(c *loopbreaker.Config) {
		c.Spend.MaxTokensPerMinute, c.Spend.MaxTokens, c.Spend.MaxCostUSD = 100, 0, 0
	}, []move{moveSpend, moveUsage, moveSuccess, moveUsage, moveSuccess, moveMinute, moveMinute, moveMinute, moveSuccess, moveMinute, moveMinute, moveSuccess}},
	{"spend leaves a five-minute window a minute at a time", func(c *loopbreaker.Config) {
		c.Spend.MaxCostUSDPerMinute, c.Spend.BurnWindow, c.Spend.MaxCostUSD = 0.1, 5*time.Minute, 0
	}, []move{moveSpend, moveMinute, moveMinute, moveUsage, moveSuccess, moveMinute, moveMinute, moveSuccess, moveMinute, moveSuccess, moveMinute, moveSuccess}},
	{"the burn rate after the window share, the hourly cap and the open circuit", func(c *loopbreaker.Config) {
		withBurnRate(c)
		c.Spend.MaxCostUSD, c.Spend.MaxTokens, c.Spend.MaxCostUSDPerHour = 0, 0, 1
	}, []move{moveSpend, moveSpend, moveSpend, moveSuccess, moveWindowFull, moveSuccess, moveWindowOver, moveSuccess,
		moveForceOpen, moveSuccess, moveResume, moveSuccess, moveMinute, moveSpend, moveSuccess}},
	{"reset and resume give no spend back: the burn rate stays", withBurnRate,
		[]move{moveSpend, moveSpend, moveUsage, moveSuccess, moveResume, moveSuccess, moveReset, moveSuccess, moveMinute, moveSuccess}},
}

// TestTheFleetDecidesAsTheBreaker runs each sequence of the table through
// a CircuitBreaker and a fleet of one worker, side by side, and requires
// the same decision at every Check and the same shared figures after
// every move.
func TestTheFleetDecidesAsTheBreaker(t *testing.T) {
	srv := startRedis(t)
	client := srv.client(t)
	for _, tc := range conformanceCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := conformanceConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			pair := newConformancePair(t, client, cfg)
			for i, m := range tc.moves {
				pair.do(t, fmt.Sprintf("move %d (%s)", i, m), m)
			}
		})
	}
}

// FuzzTheFleetDecidesAsTheBreakerOnRedis runs any sequence of moves
// through a CircuitBreaker and a fleet of one worker (against a real
// redis-server), and requires the same decisions, reasons and counts.
func FuzzTheFleetDecidesAsTheBreakerOnRedis(f *testing.F) {
	for _, tc := range conformanceCases {
		seed := make([]byte, len(tc.moves))
		for i, m := range tc.moves {
			seed[i] = byte(m)
		}
		f.Add(seed)
	}
	srv := startRedis(f)
	client := srv.client(f)
	f.Fuzz(func(t *testing.T, moves []byte) {
		if len(moves) > 24 {
			moves = moves[:24]
		}
		cfg := conformanceConfig()
		withBurnRate(&cfg)
		if len(moves) > 0 && moves[0] >= 128 {
			cfg.Spend.StopAtWindowShare = true
		}
		pair := newConformancePair(t, client, cfg)
		for i, b := range moves {
			m := move(b) % moveCount
			if (m == moveCooldown || m == moveMinute) && pair.passed >= conformanceTime {
				continue
			}
			pair.do(t, fmt.Sprintf("move %d (%s) of %v", i, m, moves), m)
		}
	})
}

// conformanceTime bounds the time a sequence lets pass: the calls of the
// hour, a provider limit and the windows' resets (an hour away) stay in
// force on both clocks.
const conformanceTime = 10 * time.Minute

// conformancePair is a CircuitBreaker on a test clock and a worker alone
// in its fleet, both on one config.
type conformancePair struct {
	client *redis.Client
	clock  *loopbreakertest.Clock
	b      *loopbreaker.CircuitBreaker
	w      *Worker
	passed time.Duration // the time the moves let pass
	// The resets of the windows the provider reports: an hour and three
	// days from the machine's time, whole seconds.
	reset5h, resetWeekly time.Time
}

var conformanceFleets int

func newConformancePair(t *testing.T, client *redis.Client, cfg loopbreaker.Config) *conformancePair {
	t.Helper()
	start := time.Now()
	p := &conformancePair{client: client, clock: loopbreakertest.NewClock(start),
		reset5h: start.Add(time.Hour).Truncate(time.Second), resetWeekly: start.Add(72 * time.Hour).Truncate(time.Second)}
	bcfg := cfg
	bcfg.Now = p.clock.Now
	var err error
	p.b, err = loopbreaker.New(bcfg)
	require.NoError(t, err)
	conformanceFleets++
	p.w, err = New(Config{
		Client:  client,
		Name:    fmt.Sprintf("conformance-%d-%d", time.Now().UnixNano(), conformanceFleets),
		Breaker: cfg,
		// A busy machine may hold a script past the default 200ms: an
		// outage would hand the decisions to the local breaker.
		Timeout: 5 * time.Second,
	})
	require.NoError(t, err)
	return p
}

// do makes the move on both and compares them.
func (p *conformancePair) do(t *testing.T, what string, m move) {
	t.Helper()
	switch m {
	case moveCooldown:
		if st := p.b.Stats(); st.State == loopbreaker.Open {
			p.pass(t, st.Cooldown)
		}
	case moveMinute:
		p.pass(t, time.Minute)
	case moveWindowWarn, moveWindowFull, moveWindowWeekly, moveWindowOver:
		w := p.window(m)
		p.b.ObserveWindow(w)
		p.w.ObserveWindow(w)
	case moveAbort:
		p.b.Abort()
		p.w.Abort()
	case moveForceOpen:
		p.b.ForceOpen("maintenance")
		p.w.ForceOpen("maintenance")
	case moveResume:
		p.b.Resume()
		p.w.Resume()
	case moveSkip:
		p.b.Skip()
		p.w.Skip()
	case moveReset:
		p.b.Reset()
		p.w.Reset()
	default:
		bd, wd := p.b.Check(), p.w.Check()
		requireSameDecision(t, what, bd, wd)
		if bd.Allow {
			if m == moveUsage {
				u := loopbreaker.Usage{InputTokens: 300, OutputTokens: 100, CostUSD: 0.25}
				p.b.AddUsage(u)
				p.w.AddUsage(u)
			}
			it := p.iteration(m)
			p.b.Record(it)
			p.w.Record(it)
		}
	}
	requireSameFigures(t, what, p.b.Stats(), p.w.Stats())
}

// iteration returns what the iteration of move m did.
func (p *conformancePair) iteration(m move) loopbreaker.Iteration {
	switch m {
	case moveFailure, moveFailure2, moveFailure3:
		return loopbreaker.Iteration{Err: errors.New(failureTexts[m])}
	case moveNoticed:
		return loopbreaker.Iteration{Noticed: errors.New(failureTexts[moveFailure])}
	case moveNeutral:
		return loopbreaker.Iteration{Err: context.Canceled}
	case moveCalls:
		return loopbreaker.Iteration{Calls: 3}
	case moveSpend:
		return loopbreaker.Iteration{Usage: loopbreaker.Usage{InputTokens: 300, OutputTokens: 100, CostUSD: 0.25}}
	case moveLimit:
		// A reset an hour away on both clocks: the breaker's test clock
		// started at the machine's time, and moves by conformanceTime at
		// most.
		return loopbreaker.Iteration{Err: limited(loopbreaker.Limit{Kind: loopbreaker.LimitWait, Reset: time.Now().Add(time.Hour).Truncate(time.Second), Why: "usage limit"})}
	case moveStop:
		return loopbreaker.Iteration{Err: limited(loopbreaker.Limit{Kind: loopbreaker.LimitStop, Why: "credit balance is too low"})}
	}
	return loopbreaker.Iteration{}
}

// window returns the report of a usage window that move m makes.
func (p *conformancePair) window(m move) loopbreaker.Window {
	w := loopbreaker.Window{Length: 5 * time.Hour, Reset: p.reset5h, Source: "api.anthropic.com"}
	switch m {
	case moveWindowWarn:
		w.Used = 70
	case moveWindowFull:
		w.Used = 90
	case moveWindowWeekly:
		w = loopbreaker.Window{Length: 7 * 24 * time.Hour, Used: 50, Reset: p.resetWeekly, Source: "Codex"}
	case moveWindowOver:
		// Past on both clocks: the breaker's is ahead of the machine's by
		// what the moves let pass, behind it by what the test took.
		w.Used, w.Reset = 10, time.Now().Add(-5*time.Minute)
	}
	return w
}

// pass lets d pass: the breaker's clock moves by it, and the fleet's
// times (letPass).
func (p *conformancePair) pass(t *testing.T, d time.Duration) {
	t.Helper()
	p.clock.Advance(d)
	p.passed += d
	letPass(t, p.client, p.w, d)
}

// letPass lets d pass for the fleet of w on Redis, whose clock is the
// machine's, which a test cannot move: every time of the fleet's that
// counts from the past moves back by d: the circuit's opening, the calls
// and spend of the rolling windows, and how far spend has left the burn
// window. (The probe's lease, a provider limit's reset and the windows'
// reports stay: no test lets them pass this way.)
func letPass(t *testing.T, client redis.Scripter, w *Worker, d time.Duration) {
	t.Helper()
	err := client.Eval(context.Background(), `
		local d = tonumber(ARGV[1])
		for _, f in ipairs({ 'opened', 'bcut' }) do
			local v = tonumber(redis.call('HGET', KEYS[1], f) or '')
			if v then redis.call('HSET', KEYS[1], f, string.format('%.17g', v - d)) end
		end
		for _, k in ipairs({ KEYS[2], KEYS[3] }) do
			local es = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
			for i = 1, #es, 2 do redis.call('ZADD', k, tonumber(es[i + 1]) - d, es[i]) end
		end
		return 0`, []string{w.keys[0], w.keys[2], w.keys[4]}, d.Milliseconds()).Err()
	require.NoError(t, err)
}

// sharedReason is the part of a reason the fleet shares: all of it.
func sharedReason(r loopbreaker.Reason) loopbreaker.Reason { return r }

// requireSameDecision compares what a Check said: whether it allows, the
// state, the probe, the reason, the budget, whether it says when to try
// again, and the shared warnings. (How long to wait differs: the fleet's
// clock is Redis's.)
func requireSameDecision(t *testing.T, what string, b, w loopbreaker.Decision) {
	t.Helper()
	type decision struct {
		Allow, Probe, WaitHelps, RetryLater bool
		State                               loopbreaker.State
		Reason                              loopbreaker.Reason
		Budget                              loopbreaker.Budget
		Warnings                            []string
	}
	of := func(d loopbreaker.Decision) decision {
		return decision{Allow: d.Allow, Probe: d.Probe, WaitHelps: d.WaitHelps(), RetryLater: d.RetryAfter > 0,
			State: d.State, Reason: sharedReason(d.Reason), Budget: d.Budget, Warnings: sharedWarnings(d.Warnings)}
	}
	require.Equal(t, of(b), of(w), "%s: the breaker's decision (expected) and the fleet's (actual)", what)
}

// requireSameFigures compares the shared figures of Stats.
func requireSameFigures(t *testing.T, what string, b, w loopbreaker.Stats) {
	t.Helper()
	type figures struct {
		State                    loopbreaker.State
		Reason                   loopbreaker.Reason
		Opens, ConsecutiveOpens  int
		Failures                 string
		Budget                   loopbreaker.Budget
		Spend                    string
		Windows                  []string
		Warnings                 []string
		ProviderLimit            loopbreaker.ReasonKind
		ProviderLimitUntilIsZero bool
	}
	of := func(s loopbreaker.Stats) figures {
		f := s.Failures
		var counts []string
		for fp, n := range f.Counts {
			counts = append(counts, fmt.Sprintf("%s=%d", fp, n))
		}
		return figures{
			State: s.State, Reason: sharedReason(s.Reason), Opens: s.Opens, ConsecutiveOpens: s.ConsecutiveOpens,
			Failures: fmt.Sprintf("consecutive %d, total %d, same in a row %d, unique %d, evicted %d, last %q, counts %s",
				f.Consecutive, f.Total, f.SameErrorInARow, f.Unique, f.Evicted, f.LastFingerprint, sortedJoin(counts)),
			Budget:                   s.Budget,
			Spend:                    spendFigures(s.Spend),
			Windows:                  windowFigures(s.Spend.Windows),
			Warnings:                 sharedWarnings(s.Warnings),
			ProviderLimit:            s.ProviderLimit.Kind,
			ProviderLimitUntilIsZero: s.ProviderLimitUntil.IsZero(),
		}
	}
	require.Equal(t, of(b), of(w), "%s: the breaker's figures (expected) and the fleet's (actual)", what)
}

// sharedWarnings are the texts of the warnings of what the fleet shares:
// the call budget, the spend caps, the window share and the burn rate.
func sharedWarnings(rs []loopbreaker.Reason) []string {
	var ws []string
	for _, r := range rs {
		switch r.Kind {
		case loopbreaker.ReasonCallBudgetWarning, loopbreaker.ReasonSpendWarning,
			loopbreaker.ReasonWindowShareWarning, loopbreaker.ReasonBurnRateWarning:
			ws = append(ws, fmt.Sprintf("%s %+v", r, r))
		}
	}
	return ws
}

// spendFigures are the figures of s but its windows.
func spendFigures(s loopbreaker.Spend) string {
	s.Windows = nil
	return fmt.Sprintf("%+v; burn rate $%v, %v tokens a minute", s, s.CostPerMinute(), s.TokensPerMinute())
}

// windowFigures are the reports of ws, each as a breaker and a fleet both
// keep it: the fleet keeps a reset to the millisecond.
func windowFigures(ws []loopbreaker.Window) []string {
	var out []string
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%s %q %v%% of %s, resets %d", w.Name(), w.Source, w.Used, w.Length, w.Reset.UnixMilli()))
	}
	return out
}

func sortedJoin(s []string) string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return strings.Join(s, " ")
}
