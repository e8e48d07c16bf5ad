package loopbreaker

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every whole-number field of Config is described once, by Thresholds:
// a field added without a description fails here.
func TestEveryIntFieldOfConfigIsAThreshold(t *testing.T) {
	described := map[string]bool{}
	for _, th := range Thresholds() {
		assert.False(t, described[th.Field], "%s described twice", th.Field)
		described[th.Field] = true
	}
	var fields []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Int:
				fields = append(fields, prefix+f.Name)
			case reflect.Struct:
				if strings.HasSuffix(f.Type.Name(), "Rules") {
					walk(prefix+f.Name+".", f.Type)
				}
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	require.NotEmpty(t, fields)
	for _, f := range fields {
		assert.True(t, described[f], "Config.%s has no Threshold", f)
	}
	assert.Len(t, described, len(fields), "a Threshold names no int field of Config")
}

// DefaultConfig, the zero Config and Validate all come from the one
// description: each threshold's default is DefaultConfig's value, a zero
// field takes it, and a value past its bounds is refused naming the field.
func TestThresholdsDriveDefaultsAndValidation(t *testing.T) {
	def := DefaultConfig()
	for _, th := range Thresholds() {
		t.Run(th.Field, func(t *testing.T) {
			assert.Equal(t, th.Default, th.Get(&def), "DefaultConfig")
			zero := Config{}.withDefaults()
			assert.Equal(t, th.Default, th.Get(&zero), "a zero field takes the default")
			assert.NotEmpty(t, th.About)
			if th.Kind != ReasonNone {
				assert.True(t, th.Kind.Class() != ClassNone, "kind %s", th.Kind)
			}

			var cfg Config
			th.Set(&cfg, -1)
			err := cfg.Validate()
			if th.noNegative {
				requireFieldError(t, err, th.Field)
			} else {
				assert.NoError(t, err, "negative switches it off")
			}
			if th.Max > 0 && th.Max < 1<<31-1 {
				th.Set(&cfg, th.Max)
				if th.even && th.Max%2 != 0 {
					th.Set(&cfg, th.Max-1)
				}
				assert.NoError(t, cfg.Validate(), "the bound itself")
				th.Set(&cfg, th.Max+1)
				requireFieldError(t, cfg.Validate(), th.Field)
			}
			if th.Min > 1 {
				th.Set(&cfg, th.Min-1)
				requireFieldError(t, cfg.Validate(), th.Field)
			}
		})
	}
}

// requireFieldError requires err to hold a *ConfigError for field.
func requireFieldError(t *testing.T, err error, field string) {
	t.Helper()
	require.Error(t, err)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, field, ce.Field)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// A threshold's rule says what a value past its bounds is, and what zero
// and negative mean, in the words a person reads.
func TestThresholdProblemsSayTheBoundsAndTheMeaning(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Steps: StepRules{MaxRepeatedAction: 1}}, "Steps.MaxRepeatedAction = 1: must be between 2 (a repetition takes two) and 1000 (zero means the default, 4; negative switches the signal off)"},
		{Config{Progress: ProgressRules{OutputDeclinePercent: 100}}, "Progress.OutputDeclinePercent = 100: must be below 100 (an output cannot decline by 100% or more; zero means the default, 70; negative switches the signal off)"},
		{Config{Progress: ProgressRules{ScoreWindow: 1001}}, "Progress.ScoreWindow = 1001: must be at most 1000 (zero or negative switches the signal off)"},
		{Config{Failures: FailureRules{MaxFingerprints: -1}}, "Failures.MaxFingerprints = -1: must be between 0 and 2147483647 (zero means the default, 10000)"},
		{Config{Failures: FailureRules{MaxSamples: 10001}}, "Failures.MaxSamples = 10001: must be at most 10000 (zero means the default, 1000; negative keeps no error text)"},
		{Config{RelapseWindow: 5000}, "RelapseWindow = 5000: must be at most 1000 (zero or negative switches the relapse watch off)"},
	}
	for _, tt := range tests {
		assert.ErrorContains(t, tt.cfg.Validate(), tt.want)
	}
}
