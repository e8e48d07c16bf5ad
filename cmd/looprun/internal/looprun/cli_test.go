package looprun

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
)

// runArgs runs looprun in this process with args and no command behind
// them, and returns what it wrote on stdout and on stderr, and its exit
// code.
func runArgs(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	code = runWith(context.Background(), fleetlessOptions(), clk, append([]string{"-dir", t.TempDir()}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// fleetlessOptions adds a flag, as the fleet does, so that -help lists
// what Options add.
func fleetlessOptions() Options {
	return Options{Flags: func(fs *flag.FlagSet) { fs.String("redis", "", "the Redis of a fleet's breaker") }}
}

// -h goes to stdout, so that `looprun -h | less` works, and is short: the
// rule for thresholds not given, 0 and negative is said once, each preset
// that sets thresholds has a line of its own, and every flag is there.
func TestHelpIsShortAndOnStdout(t *testing.T) {
	stdout, stderr, code := runArgs(t, "-h")
	assert.Equal(t, exitDone, code)
	assert.Empty(t, stderr)
	assert.True(t, strings.HasPrefix(stdout, "usage: looprun [flags] [-- command [args...]]\n"), stdout)
	assert.Less(t, strings.Count(stdout, "\n"), 130, "138 lines before the rules were said once; each flag since adds its line")
	assert.Equal(t, 1, strings.Count(stdout, "not given: the preset's"), stdout)
	assert.NotContains(t, stdout, "the library's default")
	assert.Regexp(t, `(?m)^  -failures N\s+consecutive failures that open the circuit \[3\]$`, stdout)
	assert.Regexp(t, `(?m)^  tdd-red-green\s+failures 5, same-errors 3$`, stdout)
	assert.Regexp(t, `(?m)^  migration-safety\s+failures 1, same-errors 2$`, stdout)
	for _, line := range strings.Split(stdout, "\n") {
		assert.LessOrEqual(t, len(line), 100, "a line wider than a terminal: %q", line)
	}

	for _, name := range []string{"preset", "check", "commit", "plan", "timeout", "max-opens", "protect", "json", "redis"} {
		assert.Contains(t, stdout, "\n  -"+name+" ", "-%s is listed", name)
	}
	assert.Contains(t, stdout, "--validate (-check)")

	stdout2, _, code := runArgs(t, "-help")
	assert.Equal(t, exitDone, code)
	assert.Equal(t, stdout, stdout2)
}

// A mistake on the command line is one line on stderr that says what is
// wrong and where help is, not the whole usage, and nothing on stdout.
func TestAFlagMistakeIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"-bogus"}, "looprun: unknown flag -bogus (looprun -h lists the flags)\n"},
		{[]string{"-failures", "x"}, "looprun: -failures x: want a whole number (looprun -h lists the flags)\n"},
		{[]string{"-cooldown", "soon"}, "looprun: -cooldown soon: want a duration (30s, 15m, 1h30m) (looprun -h lists the flags)\n"},
		{[]string{"-timeout"}, "looprun: flag needs an argument: -timeout (looprun -h lists the flags)\n"},
	} {
		stdout, stderr, code := runArgs(t, tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Empty(t, stdout, tc.args)
		assert.Equal(t, tc.says, stderr, tc.args)
	}
}

// A value the breaker cannot take names the flag and the value as the
// person gave them, and the setting that gave it, not the library's
// Config field.
func TestABadThresholdNamesTheFlag(t *testing.T) {
	_, stderr, code := runArgs(t, "-cooldown", "-5s")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "looprun: -cooldown -5s: must not be negative (zero means the default, 30s)\n", stderr)

	_, stderr, code = runArgs(t, "-output-decline", "150")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "looprun: -output-decline 150: must be below 100")
	assert.NotContains(t, stderr, "OutputDeclinePercent")

	t.Setenv("LOOPRUN_COOLDOWN", "-3s")
	_, stderr, code = runArgs(t)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "looprun: -cooldown -3s (LOOPRUN_COOLDOWN): must not be negative (zero means the default, 30s)\n", stderr)
}
