package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runAgentloop(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(args, &out))
	return out.String()
}

// The default run: the same error comes back five times, the breaker
// trips, the probe after the cooldown fails the same way, and it stops.
func TestAgentloopTripsOnTheRecurringError(t *testing.T) {
	out := runAgentloop(t)
	assert.Contains(t, out, "circuit open: Same error repeated 5 times (threshold: 5); waiting 10s for the probe")
	assert.Contains(t, out, "probe: TypeError")
	assert.Contains(t, out, "stopped: Gave up: the circuit opened 2 times in a row without recovering (threshold: 2): Same error repeated 6 times (threshold: 5) (reason kind gave_up)")
	assert.Contains(t, out, "stats: iterations=14 total_failures=8 unique_errors=2 opens=2 ")
	assert.Equal(t, 14, strings.Count(out, "  CLOSED  ")+strings.Count(out, "  OPEN  "), "one status line per iteration")
}

// A flag given on the command line wins over the preset.
func TestAgentloopFlagsBeatThePreset(t *testing.T) {
	out := runAgentloop(t, "-preset", "migration-safety")
	assert.Contains(t, out, "trip after 1 consecutive failures, the same error 2 times")
	assert.Contains(t, out, "circuit open: 1 consecutive failures (threshold: 1)")

	out = runAgentloop(t, "-preset", "migration-safety", "-failures", "3", "-same-errors", "-1")
	assert.Contains(t, out, "trip after 3 consecutive failures, the same error off times")
	assert.Contains(t, out, "script finished with the circuit CLOSED")
}

// The stall scenario: the agent keeps succeeding but changes nothing. One
// iteration before the threshold the circuit is half-open; the wasted
// chance opens it, and the probe after the cooldown stalls too.
func TestAgentloopStopsAnAgentThatChangesNothing(t *testing.T) {
	out := runAgentloop(t, "-scenario", "stall")
	assert.Regexp(t, `(?m)^   6  \S+  HALF_OPEN .* 2  -`, out)
	assert.Contains(t, out, "circuit open: No progress in 3 consecutive iterations (threshold: 3)")
	assert.Contains(t, out, "stopped: Gave up: the circuit opened 2 times in a row without recovering (threshold: 2): No progress in 4 consecutive iterations (threshold: 3) (reason kind gave_up)")
	assert.Contains(t, out, "total_failures=0")

	out = runAgentloop(t, "-scenario", "stall", "-no-progress", "-1")
	assert.Contains(t, out, "script finished with the circuit CLOSED")
}

func TestAgentloopRejectsBadInput(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-preset", "nope"}, &out)
	assert.ErrorContains(t, err, "-preset nope: unknown preset")
	err = run([]string{"-scenario", "nope"}, &out)
	assert.ErrorContains(t, err, `unknown scenario "nope"`)
	err = run([]string{"-cooldown", "-1s"}, &out)
	assert.ErrorContains(t, err, "-cooldown -1s: must not be negative", "the flag, not the Config field")
}
