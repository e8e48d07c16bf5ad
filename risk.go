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
	case b.state != Closed || len(b.shortNow()) > 0:
		return RiskHigh
	case b.lastFailed || b.progress.ConsecutiveNoProgress > 0 || len(warnings) > 0 || b.relapse.watching():
		return RiskMedium
	}
	return RiskLow
}
