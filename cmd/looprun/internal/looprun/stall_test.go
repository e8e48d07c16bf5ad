package looprun

import (
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that prints nothing for -stall is ended, whatever it started
// with it, and is a failure named by the stall: the same silence three
// runs in a row opens the circuit, well before -timeout. A stalled run is
// no provider limit, whatever it printed before it went quiet.
func TestARunThatPrintsNothingForTheStallIsEndedAsAFailure(t *testing.T) {
	r := newRepo(t, `echo "thinking... (429 Too Many Requests)"
sleep 300
`)
	start := time.Now()
	out, code := r.looprun(t, "", "-interactive", "no", "-stall", "1s", "-timeout", "5m", "-max-iterations", "5")
	assert.Less(t, time.Since(start), time.Minute, "ended by the stall, not the timeout")
	assert.Equal(t, exitTripped, code, out)
	assert.Equal(t, 3, strings.Count(out, "error: no output for 1s"), out)
	assert.Contains(t, out, "3 consecutive failures (threshold: 3)")
	assert.Contains(t, out, "timeout 5m0s, stall 1s", "the banner")
	assert.NotContains(t, out, "LIMIT")
}

// Output is what the command prints, on stdout or stderr, however little:
// a run that keeps printing is no stall however long it runs.
func TestARunThatKeepsPrintingIsNoStall(t *testing.T) {
	r := newRepo(t, `for i in 1 2 3 4 5 6 7 8; do printf . >&2; sleep 0.25; done
echo done
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-stall", "1s", "-max-iterations", "1")
	assert.Equal(t, exitLimit, code, out)
	assert.NotContains(t, out, "no output for")
}

// -stall takes a duration, or a bare number of minutes, from the command
// line or a setting; a negative one is a usage error.
func TestTheStallFlag(t *testing.T) {
	o, err := parseFlags([]string{"-stall", "10", "--", "claude"}, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, o.stall)
	o, err = parseFlags([]string{"--", "claude"}, []string{"LOOPRUN_STALL=90s"}, Options{})
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second, o.stall)
	o, err = parseFlags([]string{"--", "claude"}, nil, Options{})
	require.NoError(t, err)
	assert.Zero(t, o.stall, "off unless given")
	_, err = parseFlags([]string{"-stall", "-1s", "--", "claude"}, nil, Options{})
	assert.ErrorContains(t, err, "-stall must not be negative")
}

// An agent that prints nothing until its run ends is told of at start:
// under -stall every long run of it would be ended.
func TestTheBannerWarnsOfAnAgentThatPrintsAtTheEnd(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		warn bool
	}{
		{[]string{"claude", "-p", "--output-format", "json"}, true},
		{[]string{"claude", "-p", "fix it"}, true},
		{[]string{"claude", "-p", "--output-format", "stream-json", "--verbose"}, false},
		{[]string{"claude", "-p", "--output-format=stream-json", "--verbose"}, false},
		{[]string{"gemini", "-p", "x", "-o", "json"}, true},
		{[]string{"gemini", "-p", "x", "--output-format", "stream-json"}, false},
		{[]string{"codex", "exec", "--json", "-"}, false},
		{[]string{"./agent.sh"}, false},
	} {
		advice := stallAdvice(tc.argv, time.Minute)
		assert.Equal(t, tc.warn, advice != "", "%v: %s", tc.argv, advice)
		assert.Empty(t, stallAdvice(tc.argv, 0), "no -stall, no warning")
	}
}

// A stalled run is a failure, never a provider limit, even when its
// output said one before it went quiet.
func TestAStalledRunIsNoLimit(t *testing.T) {
	o := &observed{res: result{stalled: time.Minute, exitCode: -1}, out: outputSeen{limitText: "429 Too Many Requests", sample: "429 Too Many Requests"}, timeout: time.Hour, command: true}
	err, limited := commandError(o)
	assert.False(t, limited)
	assert.EqualError(t, err, "no output for 1m0s")
	assert.Equal(t, loopbreaker.Failure, classify(err))
}
