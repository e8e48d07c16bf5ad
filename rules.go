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
	// ReasonNoProgress: Count measured iterations in a row made no
	// progress. At Threshold-1 the circuit is half-open ("one more
	// chance"); at Threshold (Config.NoProgressThreshold) it opens.
	ReasonNoProgress
	// ReasonOutputDecline: an iteration without progress produced output
	// (Current) more than Threshold percent (Config.OutputDeclinePercent)
	// below the Baseline; Count is the decline in whole percent, rounded
	// down.
	ReasonOutputDecline
	// ReasonPermissionDenials: Count measured iterations in a row had
	// permission denials, reaching Threshold
	// (Config.PermissionDenialThreshold).
	ReasonPermissionDenials
	// ReasonProbeFailed: the half-open probe failed with the error
	// Fingerprint although no threshold was reached.
	ReasonProbeFailed
)

// verdict is what a signal says about the iteration just recorded.
type verdict uint8

const (
	pass  verdict = iota // nothing to report
	watch                // one more chance: the circuit goes half-open
	trip                 // the circuit opens
)

// rule is one stop signal: the name and text of its reason and, for the
// signals evaluated after each iteration, its test and its evidence.
// Adding a signal means adding a kind above and a row, at that index,
// below.
type rule struct {
	name string
	text func(r Reason) string
	// check evaluates the signal after an iteration was recorded, with
	// b.mu held. Nil for kinds that the state machine sets itself.
	check func(b *CircuitBreaker) verdict
	// evidence returns the reason when check did not pass.
	evidence func(b *CircuitBreaker) Reason
}

// rules is indexed by ReasonKind; the signals are evaluated in this order,
// and the first that trips gives the reason.
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
		check: func(b *CircuitBreaker) verdict {
			return atThreshold(b.consecutiveFailures, b.cfg.MaxConsecutiveFailures)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.consecutiveFailures, Threshold: b.cfg.MaxConsecutiveFailures}
		},
	},
	ReasonSameError: {
		name: "same_error",
		text: func(r Reason) string {
			return fmt.Sprintf("Same error repeated %d times (threshold: %d)", r.Count, r.Threshold)
		},
		check: func(b *CircuitBreaker) verdict {
			if !b.lastFailed {
				return pass
			}
			return atThreshold(b.lastFingerprintCount, b.cfg.MaxSameErrorCount)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{
				Count:       b.lastFingerprintCount,
				Threshold:   b.cfg.MaxSameErrorCount,
				Fingerprint: formatFingerprint(b.lastFingerprint),
			}
		},
	},
	ReasonNoProgress: {
		name: "no_progress",
		text: func(r Reason) string {
			return fmt.Sprintf("No progress in %d consecutive iterations (threshold: %d)", r.Count, r.Threshold)
		},
		check: func(b *CircuitBreaker) verdict {
			limit, n := b.cfg.NoProgressThreshold, b.progress.consecutiveNoProgress
			switch {
			case !b.progress.measured || limit < 0:
				return pass
			case n >= limit:
				return trip
			case n == limit-1:
				return watch
			}
			return pass
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.progress.consecutiveNoProgress, Threshold: b.cfg.NoProgressThreshold}
		},
	},
	ReasonOutputDecline: {
		name: "output_decline",
		text: func(r Reason) string {
			decline := 100 * (1 - float64(r.Current)/r.Baseline)
			return fmt.Sprintf("Output declined %.1f%% below baseline (current: %d, baseline: %.0f, threshold: %d%%)",
				decline, r.Current, r.Baseline, r.Threshold)
		},
		check: func(b *CircuitBreaker) verdict {
			ps, limit := &b.progress, b.cfg.OutputDeclinePercent
			if !ps.measured || ps.made || limit < 0 || ps.baselineSum <= 0 {
				return pass
			}
			// (baseline-current)/baseline > limit%, in whole numbers, with
			// baseline = baselineSum/baselineSize.
			if (ps.baselineSum-ps.output*ps.baselineSize)*100 <= limit*ps.baselineSum {
				return pass
			}
			return trip
		},
		evidence: func(b *CircuitBreaker) Reason {
			ps := &b.progress
			return Reason{
				Count:     (ps.baselineSum - ps.output*ps.baselineSize) * 100 / ps.baselineSum,
				Threshold: b.cfg.OutputDeclinePercent,
				Baseline:  float64(ps.baselineSum) / float64(ps.baselineSize),
				Current:   ps.output,
			}
		},
	},
	ReasonPermissionDenials: {
		name: "permission_denials",
		text: func(r Reason) string {
			return fmt.Sprintf("Permission denied in %d consecutive iterations (threshold: %d)", r.Count, r.Threshold)
		},
		check: func(b *CircuitBreaker) verdict {
			if !b.progress.measured {
				return pass
			}
			return atThreshold(b.progress.consecutiveDenials, b.cfg.PermissionDenialThreshold)
		},
		evidence: func(b *CircuitBreaker) Reason {
			return Reason{Count: b.progress.consecutiveDenials, Threshold: b.cfg.PermissionDenialThreshold}
		},
	},
	ReasonProbeFailed: {
		name: "probe_failed",
		text: func(r Reason) string {
			return fmt.Sprintf("Half-open probe failed (error %s)", r.Fingerprint)
		},
	},
}

// atThreshold trips when count has reached a non-negative limit.
func atThreshold(count, limit int) verdict {
	if limit < 0 || count < limit {
		return pass
	}
	return trip
}

// evaluate runs the signals in order. It returns the reason of the first
// that trips, or else of the first that watches, with its verdict.
func (b *CircuitBreaker) evaluate() (Reason, verdict) {
	watched := -1
	for i := range rules {
		if rules[i].check == nil {
			continue
		}
		switch rules[i].check(b) {
		case trip:
			return rules[i].reason(b, ReasonKind(i)), trip
		case watch:
			if watched < 0 {
				watched = i
			}
		}
	}
	if watched < 0 {
		return Reason{}, pass
	}
	return rules[watched].reason(b, ReasonKind(watched)), watch
}

// reason returns the rule's evidence as a Reason of its kind.
func (r *rule) reason(b *CircuitBreaker, kind ReasonKind) Reason {
	reason := r.evidence(b)
	reason.Kind = kind
	return reason
}

// String returns the kind's name in snake case, e.g. "same_error".
func (k ReasonKind) String() string {
	if int(k) < len(rules) {
		return rules[k].name
	}
	return fmt.Sprintf("ReasonKind(%d)", uint8(k))
}
