package loopbreaker

import (
	"errors"
	"fmt"
	"strings"
)

// preset is a named set of thresholds for one kind of work (seed 000).
type preset struct {
	name                   string
	maxConsecutiveFailures int
	maxSameErrorCount      int
}

// presets in the order PresetNames lists them.
var presets = []preset{
	{"feature", 3, 5},           // the defaults: balanced tolerance
	{"tdd-red-green", 5, 3},     // red-green cycling looks like failures; repeats do not
	{"refactor", 2, 3},          // refactoring should not produce repeated failures
	{"incident-response", 2, 2}, // production fixes work fast or escalate
	{"migration-safety", 1, 2},  // a broken migration risks data loss
}

// ErrUnknownPreset is matched (errors.Is) by the error Preset returns for a
// name it does not know.
var ErrUnknownPreset = errors.New("loopbreaker: unknown preset")

// Preset returns DefaultConfig with the thresholds of the named preset:
//
//	preset             consecutive failures  same-error max
//	feature            3                     5
//	tdd-red-green      5                     3
//	refactor           2                     3
//	incident-response  2                     2
//	migration-safety   1                     2
//
// The host overrides a preset by setting fields on the returned Config; an
// explicit value wins, as command-line flags win over presets in seed 000.
// An unknown name is an error matching ErrUnknownPreset that lists the
// known names.
func Preset(name string) (Config, error) {
	for _, p := range presets {
		if p.name == name {
			cfg := DefaultConfig()
			cfg.MaxConsecutiveFailures = p.maxConsecutiveFailures
			cfg.MaxSameErrorCount = p.maxSameErrorCount
			return cfg, nil
		}
	}
	return Config{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownPreset, name, strings.Join(PresetNames(), ", "))
}

// PresetNames returns the names Preset knows, in a fixed order. The slice
// is the caller's.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}
