package sessions

import (
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// checkAction asks the breaker about a proposed call before it runs:
// refused while the circuit is open (or a limit or cap holds), and when
// it would complete a repeat, which opens the circuit as its run would
// have. It takes no probe slot: a half-open circuit's probe is the model
// call.
func checkAction(cb *loopbreaker.CircuitBreaker, a *loopbreaker.Action) loopbreaker.Decision {
	return cb.CheckAction(*a)
}

// wordsForModel is what the model reads instead of a refused call's
// result: the rule, the call and its error, what to do instead, and for
// how long calls are refused.
func wordsForModel(d loopbreaker.Decision) string { return d.ForModel() }

// shortNow returns the signals one step short of opening the circuit, as
// the model should read them, and their kinds; without taking a probe.
func shortNow(cb *loopbreaker.CircuitBreaker) []loopbreaker.Reason {
	return cb.Short()
}

// warningWords are the warnings of short the model has not read in the
// step before (warned), one a line, and the kinds now short.
func warningWords(short []loopbreaker.Reason, warned map[loopbreaker.ReasonKind]bool) (string, map[loopbreaker.ReasonKind]bool) {
	now := make(map[loopbreaker.ReasonKind]bool, len(short))
	var lines []string
	for _, r := range short {
		now[r.Kind] = true
		if !warned[r.Kind] {
			lines = append(lines, r.ForModel())
		}
	}
	return strings.Join(lines, "\n"), now
}
