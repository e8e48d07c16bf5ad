package loopbreaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPresetsHaveTheSeedThresholds(t *testing.T) {
	tests := []struct {
		name                 string
		consecutive, sameErr int
	}{
		{"feature", 3, 5},
		{"tdd-red-green", 5, 3},
		{"refactor", 2, 3},
		{"incident-response", 2, 2},
		{"migration-safety", 1, 2},
	}
	names := []string{}
	for _, tt := range tests {
		names = append(names, tt.name)
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Preset(tt.name)
			require.NoError(t, err)
			want := DefaultConfig()
			want.Failures.MaxConsecutive = tt.consecutive
			want.Failures.MaxSameError = tt.sameErr
			assert.Equal(t, want, cfg)
		})
	}
	assert.Equal(t, append(names, "autonomous", "tool-steps"), PresetNames()[:len(names)+2])
}

// ralph-starter's presets that set no breaker values run with its
// standard 3/5: a user coming from ralph-starter with one of them is not
// told the name is unknown.
func TestRalphStarterPresetsWithoutValuesTakeTheStandardOnes(t *testing.T) {
	names := []string{
		"feature-minimal", "spec-driven", "debug", "code-archaeology",
		"review", "pr-review", "adversarial-review", "docs", "documentation-first",
		"api-design", "performance-optimization", "scientific-method", "research",
		"gap-analysis", "mob-programming", "socratic-learning", "confession-loop",
		"pdd-to-code-assist",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cfg, err := Preset(name)
			require.NoError(t, err)
			assert.Equal(t, DefaultConfig(), cfg)
			assert.Equal(t, 3, cfg.Failures.MaxConsecutive)
			assert.Equal(t, 5, cfg.Failures.MaxSameError)
		})
	}
	assert.Equal(t, names, PresetNames()[7:], "listed after the presets with values of their own")
}

// autonomous is seed 003: every signal on, its thresholds, a 30 minute
// cooldown that doubles after each failed probe, up to 4 hours.
func TestAutonomousPresetHasSeed003Values(t *testing.T) {
	cfg, err := Preset("autonomous")
	require.NoError(t, err)
	assert.Equal(t, 10, cfg.Failures.MaxConsecutive)
	assert.Equal(t, 5, cfg.Failures.MaxSameError)
	assert.Equal(t, 5, cfg.Failures.MaxSameErrorInARow)
	assert.Equal(t, 100, cfg.Spend.MaxCallsPerHour)
	assert.Equal(t, 3, cfg.Progress.MaxNoProgress)
	assert.Equal(t, 70, cfg.Progress.OutputDeclinePercent)
	assert.Equal(t, 3, cfg.Progress.MaxPermissionDenials)
	assert.Equal(t, 3, cfg.Progress.ScoreWindow)
	assert.Equal(t, 6, cfg.Progress.CircularApproachWindow)
	assert.Equal(t, 5, cfg.Progress.TestFixWindow)
	assert.Equal(t, 80, cfg.Progress.TestFixPercent)
	assert.Equal(t, 30*time.Minute, cfg.Cooldown)
	assert.Equal(t, 3, cfg.RelapseWindow, "superkit watches the next 3 iterations after a recovery")
	require.NotNil(t, cfg.CooldownPolicy)
	var waits []time.Duration
	for opens := 1; opens <= 6; opens++ {
		waits = append(waits, cfg.CooldownPolicy(cfg.Cooldown, opens))
	}
	assert.Equal(t, []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour}, waits)
}

// Under autonomous, five identical errors in a row speak before the
// consecutive-failure limit.
func TestAutonomousPresetStopsOnFiveIdenticalErrorsInARow(t *testing.T) {
	cfg, err := Preset("autonomous")
	require.NoError(t, err)
	b, _ := newTestBreaker(t, cfg)
	for line := 1; line <= 4; line++ {
		b.Record(Iteration{Err: errA(line)})
		require.Equal(t, Closed, b.State(), "failure %d", line)
	}
	b.Record(Iteration{Err: errA(5)})
	assert.Equal(t, ReasonSameErrorInARow, b.Stats().Reason.Kind)
	assert.Equal(t, "Same error repeated 5 times in a row (threshold: 5)", b.TripReason())
}

// migration-safety: a single failure stops the loop.
func TestMigrationSafetyTripsOnFirstFailure(t *testing.T) {
	cfg, err := Preset("migration-safety")
	require.NoError(t, err)
	b, _ := newTestBreaker(t, cfg)
	assert.True(t, b.RecordFailure("ERROR: column \"email\" of relation \"users\" already exists"))
	assert.Equal(t, "1 consecutive failures (threshold: 1)", b.TripReason())
}

// An explicit value set on the preset's config wins, as CLI flags do.
func TestExplicitValueBeatsPreset(t *testing.T) {
	cfg, err := Preset("migration-safety")
	require.NoError(t, err)
	cfg.Failures.MaxConsecutive = 3
	b, _ := newTestBreaker(t, cfg)
	assert.False(t, b.RecordFailure("error one"))
	assert.False(t, b.RecordFailure("error two"))
	assert.True(t, b.RecordFailure("error three"))
	assert.Equal(t, "3 consecutive failures (threshold: 3)", b.TripReason())
}

func TestUnknownPresetListsTheKnownNames(t *testing.T) {
	_, err := Preset("yolo")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnknownPreset)
	assert.Equal(t, `loopbreaker: unknown preset "yolo" (known: feature, tdd-red-green, refactor, incident-response, migration-safety, autonomous, tool-steps, `+
		`feature-minimal, spec-driven, debug, code-archaeology, review, pr-review, adversarial-review, docs, documentation-first, `+
		`api-design, performance-optimization, scientific-method, research, gap-analysis, mob-programming, socratic-learning, `+
		`confession-loop, pdd-to-code-assist)`, err.Error())
}

func TestPresetNamesIsTheCallersCopy(t *testing.T) {
	names := PresetNames()
	names[0] = "changed"
	assert.Equal(t, "feature", PresetNames()[0])
}
