package report

import (
	"sort"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
)

// loopView is what the page draws of one loop, worked out from its
// journal and its state.
type loopView struct {
	l           *Loop
	runs        []journal.Entry // the iterations, with their Run
	transitions []transition
	limits      []limitRow
	errors      []errorRow
	tasks       []taskRow
	hooks       []journal.Entry // what the hooks inside the sessions said
	warnings    []journal.Entry // the spend warnings and caps
	start       *journal.Start  // the last start's
	exit        *journal.Exit   // the last end's
	stuck       *journal.Entry  // the last opening's, with its analysis
	worker      string          // on a fleet, the runner's name in it
	fleet       string
	spend       []spendPoint
	maxCost     float64
	maxTokens   int
	first, last time.Time // the journal's first and last moments
}

// transition is a change of the circuit, from the journal or, for a loop
// without one, the state's history.
type transition struct {
	at        time.Time
	from, to  string
	cause     string
	kind      journal.Kind
	reason    string
	iteration int
}

type limitRow struct {
	at     time.Time
	limit  journal.Limit
	waited *journal.Limit // how the wait ended; nil while it lasts, or when it was not waited
	reason string
}

type errorRow struct {
	fingerprint string
	count       int // in the journal
	counted     int // by the breaker now (0: forgotten, or reset)
	text        string
	latest      string
	iterations  []int
}

type taskRow struct {
	task                 string
	iterations, failures int
	firstIter, lastIter  int
	skipped, current     bool
}

type spendPoint struct {
	at     time.Time
	cost   float64
	tokens int
}

// view works out what the page shows of l.
func view(l *Loop) *loopView {
	v := &loopView{l: l}
	errs := map[string]*errorRow{}
	tasks := map[string]*taskRow{}
	var taskOrder []string
	for i := range l.Entries {
		e := &l.Entries[i]
		if v.first.IsZero() || e.At.Before(v.first) {
			v.first = e.At
		}
		if e.At.After(v.last) {
			v.last = e.At
		}
		if e.Worker != "" {
			v.worker, v.fleet = e.Worker, e.Fleet
		}
		if e.Source == journal.FromHook {
			v.hooks = append(v.hooks, *e)
			continue
		}
		if e.Transition != nil {
			t := transition{at: e.At, from: e.Transition.From, to: e.Transition.To, cause: e.Transition.Cause, kind: e.Kind, iteration: e.Iteration}
			if e.Reason != nil {
				t.reason = e.Reason.Text
			}
			v.transitions = append(v.transitions, t)
		}
		if e.Spend != nil && e.Kind == journal.IterationRan {
			v.spend = append(v.spend, spendPoint{at: e.At, cost: e.Spend.CostUSD, tokens: e.Spend.Tokens})
			v.maxCost, v.maxTokens = e.Spend.MaxCostUSD, e.Spend.MaxTokens
		}
		switch e.Kind {
		case journal.Started:
			v.start = e.Start
			if e.Start != nil {
				v.maxCost, v.maxTokens = e.Start.MaxCostUSD, e.Start.MaxTokens
			}
		case journal.Ended:
			v.exit = e.Exit
		case journal.SpendWarning, journal.SpendCap:
			v.warnings = append(v.warnings, *e)
		case journal.CircuitOpened, journal.GaveUp:
			if e.Stuck != nil {
				v.stuck = e
			}
		case journal.ProviderLimit:
			if e.Limit != nil {
				row := limitRow{at: e.At, limit: *e.Limit}
				if e.Reason != nil {
					row.reason = e.Reason.Text
				}
				v.limits = append(v.limits, row)
			}
		case journal.LimitWaited:
			if e.Limit != nil && len(v.limits) > 0 && v.limits[len(v.limits)-1].waited == nil {
				w := *e.Limit
				v.limits[len(v.limits)-1].waited = &w
			}
		case journal.IterationRan:
			if e.Run == nil {
				continue
			}
			v.runs = append(v.runs, *e)
			r := e.Run
			if r.Fingerprint != "" && r.Result != journal.ResultLimited && r.Result != journal.ResultStopped {
				row := errs[r.Fingerprint]
				if row == nil {
					row = &errorRow{fingerprint: r.Fingerprint, text: r.Error}
					errs[r.Fingerprint] = row
				}
				row.count++
				row.latest = r.Error
				row.iterations = append(row.iterations, e.Iteration)
			}
			if r.Task != "" && (r.Result == journal.ResultOK || r.Result == journal.ResultFailed) {
				t := tasks[r.Task]
				if t == nil {
					t = &taskRow{task: r.Task, firstIter: e.Iteration}
					tasks[r.Task] = t
					taskOrder = append(taskOrder, r.Task)
				}
				t.iterations++
				t.lastIter = e.Iteration
				if r.Result == journal.ResultFailed {
					t.failures++
				}
			}
		}
	}
	if len(v.transitions) == 0 {
		for _, t := range l.Stats.History {
			cause, _ := t.Cause.MarshalText()
			v.transitions = append(v.transitions, transition{at: t.At, from: t.From.String(), to: t.To.String(),
				cause: string(cause), kind: journal.KindOf(t), reason: reasonText(t.Reason), iteration: t.Iteration})
		}
	}
	if l.Saved {
		if l.SavedAt.After(v.last) {
			v.last = l.SavedAt
		}
		if v.first.IsZero() {
			v.first = l.SavedAt
			if len(v.transitions) > 0 {
				v.first = v.transitions[0].at
			}
		}
		if v.maxCost == 0 {
			v.maxCost = l.Stats.Spend.MaxCostUSD
		}
		if v.maxTokens == 0 {
			v.maxTokens = l.Stats.Spend.MaxTokens
		}
	}
	// The errors the breaker counts, the journal's and those it has not
	// (iterations before the journal began).
	for fp, n := range l.Stats.Failures.Counts {
		row := errs[fp]
		if row == nil {
			row = &errorRow{fingerprint: fp}
			errs[fp] = row
		}
		row.counted = n
		if s, ok := l.Stats.Failures.Samples[fp]; ok {
			if row.text == "" {
				row.text = s.First
			}
			if s.Latest != "" {
				row.latest = s.Latest
			}
		}
	}
	for _, row := range errs {
		v.errors = append(v.errors, *row)
	}
	sort.Slice(v.errors, func(i, j int) bool {
		a, b := v.errors[i], v.errors[j]
		if ca, cb := max(a.count, a.counted), max(b.count, b.counted); ca != cb {
			return ca > cb
		}
		return a.fingerprint < b.fingerprint
	})
	skipped := map[string]bool{}
	for _, t := range l.Stats.Failures.SkippedTasks {
		skipped[t] = true
		if tasks[t] == nil {
			tasks[t] = &taskRow{task: t}
			taskOrder = append(taskOrder, t)
		}
	}
	for _, name := range taskOrder {
		t := tasks[name]
		t.skipped = skipped[name]
		t.current = name == l.Stats.Failures.Task
		v.tasks = append(v.tasks, *t)
	}
	return v
}

func reasonText(r loopbreaker.Reason) string {
	if r.Kind == loopbreaker.ReasonNone {
		return ""
	}
	return r.String()
}
