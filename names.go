package loopbreaker

import "fmt"

// The enumerations are stored and exchanged by name (their String), never
// by number: the numbering may change between versions, the names do not.

// enum is an enumeration whose values 0 to count-1 have names (String).
type enum interface {
	~uint8
	String() string
}

// marshalName returns v's name, or an error for a value past the last.
func marshalName[T enum](v T, what string, count int) ([]byte, error) {
	if int(v) >= count {
		return nil, fmt.Errorf("loopbreaker: unknown %s %d", what, uint8(v))
	}
	return []byte(v.String()), nil
}

// unmarshalName sets *v to the value named text; an unknown name is an
// error.
func unmarshalName[T enum](v *T, text []byte, what string, count int) error {
	for i := range count {
		if string(text) == T(i).String() {
			*v = T(i)
			return nil
		}
	}
	return fmt.Errorf("loopbreaker: unknown %s %q", what, text)
}

const (
	stateCount    = int(HalfOpen) + 1
	workKindCount = int(WorkTestsOnly) + 1
)

// MarshalText returns the state's name: CLOSED, OPEN or HALF_OPEN. An
// unknown state is an error.
func (s State) MarshalText() ([]byte, error) { return marshalName(s, "state", stateCount) }

// UnmarshalText sets the state from its name; an unknown name is an error.
func (s *State) UnmarshalText(text []byte) error {
	return unmarshalName(s, text, "state", stateCount)
}

// MarshalText returns the kind's name, e.g. "consecutive_failures". An
// unknown kind is an error.
func (k ReasonKind) MarshalText() ([]byte, error) {
	return marshalName(k, "reason kind", len(rules))
}

// UnmarshalText sets the kind from its name; an unknown name is an error.
// The name "alternating_actions", of the signal that the cycle signal
// became, reads as [ReasonCycle].
func (k *ReasonKind) UnmarshalText(text []byte) error {
	if string(text) == "alternating_actions" {
		*k = ReasonCycle
		return nil
	}
	return unmarshalName(k, text, "reason kind", len(rules))
}

// MarshalText returns the work kind's name, e.g. "test_fix". An unknown
// kind is an error.
func (k WorkKind) MarshalText() ([]byte, error) {
	return marshalName(k, "work kind", workKindCount)
}

// UnmarshalText sets the work kind from its name; an unknown name is an
// error.
func (k *WorkKind) UnmarshalText(text []byte) error {
	return unmarshalName(k, text, "work kind", workKindCount)
}

// MarshalText returns the cause's name, e.g. "cooldown_over". An unknown
// cause is an error.
func (c Cause) MarshalText() ([]byte, error) { return marshalName(c, "cause", len(causeNames)) }

// UnmarshalText sets the cause from its name; an unknown name is an error.
func (c *Cause) UnmarshalText(text []byte) error {
	return unmarshalName(c, text, "cause", len(causeNames))
}
