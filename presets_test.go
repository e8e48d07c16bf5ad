package loopbreaker

import (
	"testing"

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
	var names []string
	for _, tt := range tests {
		names = append(names, tt.name)
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Preset(tt.name)
			require.NoError(t, err)
			want := DefaultConfig()
			want.MaxConsecutiveFailures = tt.consecutive
			want.MaxSameErrorCount = tt.sameErr
			assert.Equal(t, want, cfg)
		})
	}
	assert.Equal(t, names, PresetNames())
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
	cfg.MaxConsecutiveFailures = 3
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
	assert.Equal(t, `loopbreaker: unknown preset "yolo" (known: feature, tdd-red-green, refactor, incident-response, migration-safety)`, err.Error())
}

func TestPresetNamesIsTheCallersCopy(t *testing.T) {
	names := PresetNames()
	names[0] = "changed"
	assert.Equal(t, "feature", PresetNames()[0])
}
