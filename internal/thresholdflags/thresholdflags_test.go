package thresholdflags

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopbreaker/loopbreaker"
)

// parse registers the flags names on a fresh flag set, parses args, and
// returns the Config they give.
func parse(t *testing.T, args []string, names ...string) (loopbreaker.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := Register(fs, names...)
	require.NoError(t, fs.Parse(args))
	return s.Config()
}

// A flag given on the command line wins over the preset, an explicit 0 is
// the library's default, and a flag not given leaves the preset's value.
func TestFlagsGivenWinOverThePreset(t *testing.T) {
	migration, err := loopbreaker.Preset("migration-safety")
	require.NoError(t, err)
	autonomous, err := loopbreaker.Preset("autonomous")
	require.NoError(t, err)
	cases := []struct {
		name string
		args []string
		want func(c *loopbreaker.Config)
		base loopbreaker.Config
	}{
		{"no flags: the preset", []string{"-preset", "migration-safety"}, func(*loopbreaker.Config) {}, migration},
		{"a threshold over the preset", []string{"-preset", "migration-safety", "-failures", "4"},
			func(c *loopbreaker.Config) { c.Failures.MaxConsecutive = 4 }, migration},
		{"negative: off", []string{"-preset", "migration-safety", "-same-errors", "-1"},
			func(c *loopbreaker.Config) { c.Failures.MaxSameError = -1 }, migration},
		{"explicit zero: the library's default", []string{"-preset", "autonomous", "-cooldown", "0"},
			func(c *loopbreaker.Config) { c.Cooldown = 0 }, autonomous},
		{"every threshold", []string{"-same-errors-in-a-row", "2", "-no-progress", "5", "-output-decline", "50",
			"-done-signals", "3", "-cooldown", "1m", "-calls-per-hour", "40"},
			func(c *loopbreaker.Config) {
				c.Failures.MaxSameErrorInARow, c.Progress.MaxNoProgress, c.Progress.OutputDeclinePercent = 2, 5, 50
				c.Progress.DoneSignals, c.Cooldown, c.Spend.MaxCallsPerHour = 3, time.Minute, 40
			}, loopbreaker.DefaultConfig()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parse(t, c.args)
			require.NoError(t, err)
			want := c.base
			c.want(&want)
			got.CooldownPolicy, want.CooldownPolicy = nil, nil // funcs do not compare
			assert.Equal(t, want, got)
		})
	}
}

// A program registers only the flags it offers; the others are not flags.
func TestOnlyTheNamedFlagsAreRegistered(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Register(fs, "failures")
	assert.NotNil(t, fs.Lookup("failures"))
	assert.NotNil(t, fs.Lookup("preset"))
	assert.Nil(t, fs.Lookup("calls-per-hour"))
	assert.Panics(t, func() { Register(flag.NewFlagSet("x", flag.ContinueOnError), "typo") })
}

// -stall-calls, a threshold of tool steps, is there only when named: a
// loop of whole runs judges no steps.
func TestTheToolStepsFlagIsThereOnlyWhenNamed(t *testing.T) {
	all := flag.NewFlagSet("all", flag.ContinueOnError)
	Register(all)
	assert.NotNil(t, all.Lookup("failures"))
	assert.Nil(t, all.Lookup("stall-calls"))

	cfg, err := parse(t, []string{"-stall-calls", "80"}, "stall-calls")
	require.NoError(t, err)
	assert.Equal(t, 80, cfg.Steps.MaxStalled)
	cfg, err = parse(t, nil, "stall-calls")
	require.NoError(t, err)
	assert.Equal(t, loopbreaker.DefaultConfig().Steps.MaxStalled, cfg.Steps.MaxStalled, "not given: the preset's")
}

// An unknown preset and an invalid value are errors that name the flag
// and the value as the person gave them, not the library's Config field,
// and say where a setting gave it; the library's error is still there
// for errors.Is.
func TestBadPresetOrValueNamesTheFlag(t *testing.T) {
	_, err := parse(t, []string{"-preset", "nope"})
	assert.ErrorIs(t, err, loopbreaker.ErrUnknownPreset)
	assert.ErrorContains(t, err, "-preset nope: unknown preset (known: feature, ")

	_, err = parse(t, []string{"-cooldown", "-5s"})
	assert.ErrorIs(t, err, loopbreaker.ErrInvalidConfig)
	assert.EqualError(t, err, "-cooldown -5s: must not be negative (zero means the default, 30s)")
	var fe *FlagError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "cooldown", fe.Flag)

	_, err = parse(t, []string{"-output-decline", "150", "-cooldown", "-1m"})
	assert.ErrorContains(t, err, "-cooldown -1m0s: must not be negative")
	assert.ErrorContains(t, err, "-output-decline 150: must be below 100")
	assert.NotContains(t, err.Error(), "OutputDeclinePercent")

	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	s := Register(fs)
	require.NoError(t, fs.Parse(nil))
	require.NoError(t, s.Apply([]Setting{{Name: "cooldown", Value: "-2s", From: "LOOPRUN_COOLDOWN"}}))
	_, err = s.Config()
	assert.EqualError(t, err, "-cooldown -2s (LOOPRUN_COOLDOWN): must not be negative (zero means the default, 30s)")
}

// Describe gives a program's help what each threshold counts and what 0
// means, and nothing for a flag that is not registered.
func TestDescribeSaysWhatAFlagCounts(t *testing.T) {
	s := Register(flag.NewFlagSet("test", flag.ContinueOnError), "failures", "cooldown", "calls-per-hour")
	what, unset, ok := s.Describe("failures")
	assert.True(t, ok)
	assert.Equal(t, "consecutive failures that open the circuit", what)
	assert.Equal(t, "3", unset)
	_, unset, _ = s.Describe("cooldown")
	assert.Equal(t, "30s", unset)
	_, unset, _ = s.Describe("calls-per-hour")
	assert.Equal(t, "none", unset)
	_, _, ok = s.Describe("no-progress")
	assert.False(t, ok)
}
