package looprun

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subscriber makes Claude Code run as a subscriber's does, signed in with
// an OAuth token (one that is no token: only the fake model sees it),
// which is when it says how much of the usage windows is used.
func subscriber(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-fake-token-for-tests")
}

// unified returns reply with Anthropic's unified rate-limit headers: the
// 5-hour window used5h (a fraction) until reset5h, the weekly one 40%.
func unified(reply fakemodel.Reply, used5h string, reset5h time.Time) fakemodel.Reply {
	reply.Header = http.Header{
		"Anthropic-Ratelimit-Unified-Status":         {"allowed"},
		"Anthropic-Ratelimit-Unified-5h-Utilization": {used5h},
		"Anthropic-Ratelimit-Unified-5h-Reset":       {strconv.FormatInt(reset5h.Unix(), 10)},
		"Anthropic-Ratelimit-Unified-7d-Utilization": {"0.4"},
		"Anthropic-Ratelimit-Unified-7d-Reset":       {strconv.FormatInt(reset5h.Add(96*time.Hour).Unix(), 10)},
	}
	return reply
}

// A subscriber's loop may use 80% of the 5-hour window. Claude Code's
// first run reports it 85% used, in its stream-json rate_limit_event:
// looprun waits, on its clock, until the window resets an hour later, and
// then runs the next iteration, whose report is of the new window.
func TestClaudeCodeWindowShareIsWaitedOut(t *testing.T) {
	reset := start.Add(time.Hour)
	p := newClaudeProject(t, fakemodel.Script(
		unified(fakemodel.Say("Working on it."), "0.85", reset),
		unified(fakemodel.Say("Still working."), "0.02", reset.Add(5*time.Hour)),
	), map[string]string{})
	subscriber(t)
	out, code := p.looprun(t, []string{"-max-window-share", "80", "-max-iterations", "2", "-no-progress", "-1"},
		append([]string{"-p", "go on"}, claudeFlags...)...)
	require.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "max-window-share 80% (then wait for its reset)")
	assert.Contains(t, out, "Window share cap reached: 85% of the 5-hour window used (cap: 80%); resets ")
	assert.Len(t, p.env.Model.Turns(), 2)
	var waited time.Duration
	for _, d := range p.clock.Slept() {
		waited += d
	}
	assert.Equal(t, time.Hour, waited, "until the window's reset, on looprun's clock")
}

// With -window-share-stop the loop stops at the share instead (exit 5).
func TestClaudeCodeWindowShareStops(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Always(unified(fakemodel.Say("Working on it."), "0.93", start.Add(2*time.Hour))), map[string]string{})
	subscriber(t)
	out, code := p.looprun(t, []string{"-max-window-share", "90", "-window-share-stop", "-no-progress", "-1"},
		append([]string{"-p", "go on"}, claudeFlags...)...)
	require.Equal(t, exitBudget, code, out)
	assert.Contains(t, out, "stopped: Window share cap reached: 93% of the 5-hour window used (cap: 90%); no waiting ends this: resume the loop, or raise the cap (exit 5)")
	assert.Len(t, p.env.Model.Turns(), 1)
}

// Codex says its windows in its rollout, not in its events: looprun reads
// the rollout of the run's thread, and stops at the weekly window's share.
func TestCodexWindowShareStops(t *testing.T) {
	reply := fakemodel.Say("Working on it.")
	reply.Header = http.Header{
		"X-Codex-Primary-Used-Percent":     {"12"},
		"X-Codex-Primary-Window-Minutes":   {"300"},
		"X-Codex-Primary-Reset-At":         {strconv.FormatInt(start.Add(time.Hour).Unix(), 10)},
		"X-Codex-Secondary-Used-Percent":   {"91"},
		"X-Codex-Secondary-Window-Minutes": {"10080"},
		"X-Codex-Secondary-Reset-At":       {strconv.FormatInt(start.Add(72*time.Hour).Unix(), 10)},
	}
	p := newCodexProject(t, fakemodel.Always(reply), map[string]string{})
	out, code := p.looprun(t, []string{"-max-window-share", "90", "-window-share-stop", "-no-progress", "-1"}, "go on")
	require.Equal(t, exitBudget, code, out)
	assert.Contains(t, out, "stopped: Window share cap reached: 91% of the weekly window used (cap: 90%); no waiting ends this")
	assert.Len(t, p.threads(), 1)
}

// The flags' values are checked before anything runs.
func TestWindowShareAndBurnRateFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-max-window-share", "101"}, "-max-window-share must be a percent from 1 to 100 (0: none), not 101"},
		{[]string{"-max-window-share", "-5"}, "-max-window-share must be a percent from 1 to 100 (0: none), not -5"},
		{[]string{"-max-cost-per-minute", "NaN"}, "-max-cost-per-minute must be a number of dollars, 0 or more, not NaN"},
	} {
		_, err := parseFlags(append([]string{"-dir", dir}, tc.flags...), nil, Options{})
		require.Error(t, err, "%v", tc.flags)
		assert.Contains(t, err.Error(), tc.want)
	}
	o, err := parseFlags([]string{"-dir", dir, "-max-window-share", "80", "-window-share-stop", "-max-cost-per-minute", "2"}, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, loopbreaker.SpendRules{MaxWindowShare: 80, StopAtWindowShare: true, MaxCostUSDPerMinute: 2}, spendOf(o.cfg.Spend))
}

// spendOf is what the flags set of s.
func spendOf(s loopbreaker.SpendRules) loopbreaker.SpendRules {
	return loopbreaker.SpendRules{MaxWindowShare: s.MaxWindowShare, StopAtWindowShare: s.StopAtWindowShare, MaxCostUSDPerMinute: s.MaxCostUSDPerMinute}
}

// Spend too fast: at $0.40 a run, a cap of $0.20 a minute ($1 in 5
// minutes) is reached at the third run, and looprun stops with exit code
// 5, saying the rate, the window, and when the next run may go.
func TestBurnRateStops(t *testing.T) {
	r := newRepo(t, costScript)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-cost-per-minute", "0.2")
	assert.Equal(t, exitBudget, code, out)
	assert.Equal(t, 3, r.runs(t), "$0.40, $0.80, $1.20")
	assert.Contains(t, out, "max-cost-per-minute $0.20")
	assert.Contains(t, out, "warning: Burn rate near the cap: $0.16 a minute over the last 5 minutes (cap: $0.20 a minute)")
	assert.Regexp(t, `stopped: Burn rate cap reached: \$0\.24 a minute over the last 5 minutes \(cap: \$0\.20 a minute\); next call in (4m5\ds|5m0s) \(exit 5\)`, out, "when the first run leaves the window")
}
