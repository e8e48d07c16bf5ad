package loopbreaker

import "fmt"

// ReasonKind names the signal that opened the circuit.
type ReasonKind uint8

// The reason kinds. Each stop signal has its own.
const (
	// ReasonNone: the circuit has not opened.
	ReasonNone ReasonKind = iota
	// ReasonConsecutiveFailures: Count failures in a row reached Threshold
	// (Config.MaxConsecutiveFailures).
	ReasonConsecutiveFailures
	// ReasonSameError: the error Fingerprint was seen Count times over the
	// breaker's life, reaching Threshold (Config.MaxSameErrorCount).
	ReasonSameError
	// ReasonProbeFailed: the half-open probe failed with the error
	// Fingerprint although no threshold was reached.
	ReasonProbeFailed
)

// rule is one stop signal: the name and text of its reason and, for the
// signals evaluated after each iteration, the test that fires it. Adding a
// signal means adding a kind above and a row, at that index, below.
type rule struct {
	name string
	text func(r Reason) string
	// fires evaluates the signal after an iteration was recorded, with
	// b.mu held. Nil for kinds that the state machine sets itself.
	fires func(b *CircuitBreaker) (Reason, bool)
}

// rules is indexed by ReasonKind; the signals are evaluated in this order
// and the first that fires gives the reason.
var rules = [...]rule{
	ReasonNone: {
		name: "none",
		text: func(Reason) string { return "" },
	},
	ReasonConsecutiveFailures: {
		name: "consecutive_failures",
		text: func(r Reason) string {
			return fmt.Sprintf("%d consecutive failures (threshold: %d)", r.Count, r.Threshold)
		},
		fires: func(b *CircuitBreaker) (Reason, bool) {
			limit := b.cfg.MaxConsecutiveFailures
			if limit < 0 || b.consecutiveFailures < limit {
				return Reason{}, false
			}
			return Reason{Kind: ReasonConsecutiveFailures, Count: b.consecutiveFailures, Threshold: limit}, true
		},
	},
	ReasonSameError: {
		name: "same_error",
		text: func(r Reason) string {
			return fmt.Sprintf("Same error repeated %d times (threshold: %d)", r.Count, r.Threshold)
		},
		fires: func(b *CircuitBreaker) (Reason, bool) {
			limit := b.cfg.MaxSameErrorCount
			if limit < 0 || !b.lastFailed || b.lastFingerprintCount < limit {
				return Reason{}, false
			}
			return Reason{
				Kind:        ReasonSameError,
				Count:       b.lastFingerprintCount,
				Threshold:   limit,
				Fingerprint: formatFingerprint(b.lastFingerprint),
			}, true
		},
	},
	ReasonProbeFailed: {
		name: "probe_failed",
		text: func(r Reason) string {
			return fmt.Sprintf("Probe failed after cooldown (error %s)", r.Fingerprint)
		},
	},
}

// firstFiringRule evaluates the signals in order and returns the reason of
// the first that fires.
func (b *CircuitBreaker) firstFiringRule() (Reason, bool) {
	for i := range rules {
		if rules[i].fires == nil {
			continue
		}
		if r, fired := rules[i].fires(b); fired {
			return r, true
		}
	}
	return Reason{}, false
}

// String returns the kind's name in snake case, e.g. "same_error".
func (k ReasonKind) String() string {
	if int(k) < len(rules) {
		return rules[k].name
	}
	return fmt.Sprintf("ReasonKind(%d)", uint8(k))
}
