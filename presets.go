package loopbreaker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// preset is a named set of thresholds for one kind of work (ralph-starter's), and
// anything else it changes.
type preset struct {
	name                   string
	maxConsecutiveFailures int
	maxSameErrorCount      int
	more                   func(c *Config) // nil: nothing else
}

// presets in the order [PresetNames] lists them.
var presets = []preset{
	{"feature", 3, 5, nil},            // the defaults: balanced tolerance
	{"tdd-red-green", 5, 3, nil},      // red-green cycling looks like failures; repeats do not
	{"refactor", 2, 3, nil},           // refactoring should not produce repeated failures
	{"incident-response", 2, 2, nil},  // production fixes work fast or escalate
	{"migration-safety", 1, 2, nil},   // a broken migration risks data loss
	{"autonomous", 10, 5, autonomous}, // superkit's unattended loop
	{"tool-steps", 10, -1, toolSteps}, // one model turn and its tool calls per iteration, judged as OpenHands does
}

// standardPresets are ralph-starter's presets that set no circuit-breaker
// values of their own: its loop executor runs them with the standard 3
// consecutive failures and 5 same errors, and so does Preset, so that a
// user coming from ralph-starter is not told that the name is unknown.
// In ralph-starter's order; PresetNames lists them after the presets
// above.
var standardPresets = []string{
	"feature-minimal", "spec-driven", "debug", "code-archaeology",
	"review", "pr-review", "adversarial-review", "docs", "documentation-first",
	"api-design", "performance-optimization", "scientific-method", "research",
	"gap-analysis", "mob-programming", "socratic-learning", "confession-loop",
	"pdd-to-code-assist",
}

// superkit's cooldown: 30 minutes, doubled after each failed probe; the
// ceiling (ours) stops an unattended loop from sleeping for days.
const (
	autonomousCooldown        = 30 * time.Minute
	autonomousCooldownCeiling = 4 * time.Hour
)

// autonomous turns on every superkit signal with superkit's values. The
// consecutive-failure limit is raised to 10 so that superkit's "5
// identical errors in a row" can speak before it.
func autonomous(c *Config) {
	c.Failures.MaxSameErrorInARow = 5
	c.Spend.MaxCallsPerHour = 100
	c.Progress.ScoreWindow = 3
	c.Cooldown = autonomousCooldown
	c.CooldownPolicy = DoublingCooldown(autonomousCooldownCeiling)
	c.RelapseWindow = 3
}

// toolSteps judges a tool-calling loop step by step, as OpenHands' stuck
// detector does: by what the steps repeat, not by how many fail or look
// without changing anything. Why each threshold is what it is, and what it
// was measured on, is in the tool-steps guide (docs/tool-steps.md).
//
//   - 10 consecutive failures, not 3: a step's failure is often expected
//     (a grep that finds nothing, tests failing before the fix), and
//     different errors in a row are an agent trying things. OpenHands
//     waits for the same action to fail 3 times; a long run of failures
//     of every kind is still a broken environment.
//   - No lifetime count of one error: the same "no match" over a long run
//     is no loop. The same action failing 3 times in a row is.
//   - No no-progress or output-decline signal: most good steps only look
//     (read, search, list), and a step's output length says nothing. The
//     step signals say when looking goes round in circles.
//   - The step signals at OpenHands' thresholds, as in [DefaultConfig].
func toolSteps(c *Config) {
	c.Progress.MaxNoProgress = -1
	c.Progress.OutputDeclinePercent = -1
}

// ErrUnknownPreset matches (errors.Is) Preset's error for an unknown name.
var ErrUnknownPreset = errors.New("loopbreaker: unknown preset")

// Preset returns [DefaultConfig] with the thresholds of the named preset:
// ralph-starter's (feature, tdd-red-green, refactor, incident-response,
// migration-safety, and those with the standard values), "autonomous"
// (superkit's unattended loop) and "tool-steps" (OpenHands' step signals).
// An unknown name is an error matching [ErrUnknownPreset].
func Preset(name string) (Config, error) {
	for _, p := range presets {
		if p.name == name {
			cfg := DefaultConfig()
			cfg.Failures.MaxConsecutive = p.maxConsecutiveFailures
			cfg.Failures.MaxSameError = p.maxSameErrorCount
			if p.more != nil {
				p.more(&cfg)
			}
			return cfg, nil
		}
	}
	if slices.Contains(standardPresets, name) {
		return DefaultConfig(), nil
	}
	return Config{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownPreset, name, strings.Join(PresetNames(), ", "))
}

// PresetNames returns the names Preset knows, those with values of their
// own first. The slice is the caller's.
func PresetNames() []string {
	names := make([]string, 0, len(presets)+len(standardPresets))
	for _, p := range presets {
		names = append(names, p.name)
	}
	return append(names, standardPresets...)
}
