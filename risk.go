package loopbreaker

import "strconv"

// Risk is superkit's stagnation risk ([Stats.Risk]): HIGH when the circuit
// is open or half-open or one more bad iteration opens it, MEDIUM when the
// last iteration failed or made no progress, a warning is in force or a
// relapse is watched, LOW otherwise.
type Risk uint8

// The stagnation risks.
const (
	RiskLow Risk = iota
	RiskMedium
	RiskHigh
)

const riskCount = int(RiskHigh) + 1

// String returns LOW, MEDIUM or HIGH.
func (r Risk) String() string {
	switch r {
	case RiskLow:
		return "LOW"
	case RiskMedium:
		return "MEDIUM"
	case RiskHigh:
		return "HIGH"
	}
	return "Risk(" + strconv.Itoa(int(r)) + ")"
}

// MarshalText returns the risk's name; an unknown risk is an error.
func (r Risk) MarshalText() ([]byte, error) { return marshalName(r, "risk", riskCount) }

// UnmarshalText sets the risk from its name; an unknown name is an error.
func (r *Risk) UnmarshalText(text []byte) error { return unmarshalName(r, text, "risk", riskCount) }

// risk grades the stagnation risk with warnings in force. Called with
// b.mu held, after advance.
func (b *CircuitBreaker) risk(warnings []Reason) Risk {
	switch {
	case b.completion.Complete.Kind != ReasonNone:
		return RiskLow
	case b.state != Closed || b.oneShortOfStopping():
		return RiskHigh
	case b.lastFailed || b.progress.ConsecutiveNoProgress > 0 || len(warnings) > 0 || b.relapse.watching():
		return RiskMedium
	}
	return RiskLow
}

// oneShortOfStopping reports whether one more bad iteration would open
// the circuit through a counting signal.
func (b *CircuitBreaker) oneShortOfStopping() bool {
	c := &b.cfg
	short := func(count, limit int) bool { return limit > 1 && count >= limit-1 }
	if short(b.count.ConsecutiveFailures, c.Failures.MaxConsecutive) ||
		b.lastFailed && short(b.lastFingerprintCount, c.Failures.MaxSameError) ||
		short(b.count.SameErrorInARow, c.Failures.MaxSameErrorInARow) ||
		short(b.progress.ConsecutiveNoProgress, c.Progress.MaxNoProgress) ||
		short(b.progress.ConsecutivePermissionDenials, c.Progress.MaxPermissionDenials) ||
		short(b.tasks.TaskFailures, c.Failures.MaxSameTask) {
		return true
	}
	if w := c.Progress.ScoreWindow; w > 0 {
		sum, n := b.stagnation.scoreSum()
		return n >= w-1 && sum < 0
	}
	return false
}
