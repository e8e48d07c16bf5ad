package loopbreaker

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfigHasTheSeedValues(t *testing.T) {
	cfg := DefaultConfig()
	assert.Equal(t, 3, cfg.Failures.MaxConsecutive)
	assert.Equal(t, 5, cfg.Failures.MaxSameError)
	assert.Equal(t, 30*time.Second, cfg.Cooldown)
	assert.Equal(t, 10000, cfg.Failures.MaxFingerprints)
	assert.Equal(t, 3, cfg.Progress.MaxNoProgress)
	assert.Equal(t, 70, cfg.Progress.OutputDeclinePercent)
	assert.Equal(t, 3, cfg.Progress.MaxPermissionDenials)
	assert.NoError(t, cfg.Validate())
}

// The task signals, the warnings and the error samples are on by default
// with the values of the tools they follow; the relapse watch is off.
func TestDefaultConfigHasTheTaskAndEvidenceValues(t *testing.T) {
	cfg := DefaultConfig()
	assert.Equal(t, 3, cfg.Failures.MaxSameTask, "GSD's exit.sh: stuck after 3 failures on one task")
	assert.Equal(t, 20, cfg.Progress.MaxTaskIterations, "superkit: more than 20 iterations for a single task")
	assert.Equal(t, 3, cfg.Progress.TestsDeclining, "superkit: declining for 3+ iterations")
	assert.Equal(t, 3, cfg.Progress.ErrorsRising, "superkit: increasing for 3+ iterations")
	assert.Equal(t, 0, cfg.RelapseWindow, "off, as in ralph-starter")
	assert.Equal(t, 1000, cfg.Failures.MaxSamples)
}

// The zero Config behaves exactly as DefaultConfig.
func TestZeroConfigMeansDefaults(t *testing.T) {
	assert.NoError(t, Config{}.Validate())
	got := Config{}.withDefaults()
	want := DefaultConfig().withDefaults()
	assert.NotNil(t, got.Now)
	assert.NotNil(t, got.CooldownPolicy)
	assert.NotNil(t, got.Classify)
	assert.NotNil(t, got.Sleep)
	assert.Equal(t, DefaultScoreWeights(), got.Progress.ScoreWeights)
	got.Now, want.Now = nil, nil
	got.Sleep, want.Sleep = nil, nil
	got.CooldownPolicy, want.CooldownPolicy = nil, nil
	got.Classify, want.Classify = nil, nil
	assert.Equal(t, want, got)
}

// aboveInt32 is one more than math.MaxInt32, as a variable: on a 32-bit
// machine int(aboveInt32) wraps to a negative bound, which is refused too.
var aboveInt32 = int64(math.MaxInt32) + 1

func TestValidateNamesTheBadField(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"negative cooldown", Config{Cooldown: -time.Second}, "Cooldown"},
		{"negative fingerprint bound", Config{Failures: FailureRules{MaxFingerprints: -1}}, "Failures.MaxFingerprints"},
		{"fingerprint bound too large", Config{Failures: FailureRules{MaxFingerprints: int(aboveInt32)}}, "Failures.MaxFingerprints"},
		{"output cannot decline by 100%", Config{Progress: ProgressRules{OutputDeclinePercent: 100}}, "Progress.OutputDeclinePercent"},
		{"output cannot decline by more", Config{Progress: ProgressRules{OutputDeclinePercent: 250}}, "Progress.OutputDeclinePercent"},
		{"score window too large", Config{Progress: ProgressRules{ScoreWindow: 1001}}, "Progress.ScoreWindow"},
		{"circular window below two cycles", Config{Progress: ProgressRules{CircularApproachWindow: 3}}, "Progress.CircularApproachWindow"},
		{"circular window of one", Config{Progress: ProgressRules{CircularApproachWindow: 1}}, "Progress.CircularApproachWindow"},
		{"circular window too large", Config{Progress: ProgressRules{CircularApproachWindow: 1001}}, "Progress.CircularApproachWindow"},
		{"test-fix window too large", Config{Progress: ProgressRules{TestFixWindow: 1001}}, "Progress.TestFixWindow"},
		{"test-fix share of 100%", Config{Progress: ProgressRules{TestFixPercent: 100}}, "Progress.TestFixPercent"},
		{"relapse window too large", Config{RelapseWindow: 1001}, "RelapseWindow"},
		{"too many error samples", Config{Failures: FailureRules{MaxSamples: 10001}}, "Failures.MaxSamples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidConfig)
			var cerr *ConfigError
			require.ErrorAs(t, err, &cerr)
			assert.Equal(t, tt.field, cerr.Field)
			assert.Contains(t, err.Error(), tt.field)

			b, err := New(tt.cfg)
			assert.Nil(t, b)
			assert.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestValidateReportsEveryBadField(t *testing.T) {
	err := Config{Cooldown: -1, Failures: FailureRules{MaxFingerprints: -1}}.Validate()
	require.Error(t, err)
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var cerr *ConfigError
		require.True(t, errors.As(e, &cerr))
		fields = append(fields, cerr.Field)
	}
	assert.Equal(t, []string{"Cooldown", "Failures.MaxFingerprints"}, fields)
}

func TestNegativeThresholdsAreValidAndSwitchOff(t *testing.T) {
	cfg := Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -5}, Progress: ProgressRules{OutputDeclinePercent: -1}}
	require.NoError(t, cfg.Validate())
	b, _ := newTestBreaker(t, cfg)
	for i := 0; i < 100; i++ {
		b.Record(Iteration{Err: errA(i)})
	}
	assert.Equal(t, Closed, b.State())
}
