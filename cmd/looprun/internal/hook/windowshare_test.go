package hook

import (
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reported appends to the transcript the token_count event Codex writes
// in its rollout after each response, its rate_limits the 5-hour and the
// weekly window, the weekly one used percent and resetting at reset.
func (p *project) reported(weekly float64, reset time.Time) {
	p.t.Helper()
	f, err := os.OpenFile(p.transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(p.t, err)
	defer f.Close()
	fmt.Fprintf(f, `{"timestamp":"2026-11-26T10:00:00.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","primary":{"used_percent":12,"window_minutes":300,"resets_at":%d},"secondary":{"used_percent":%g,"window_minutes":10080,"resets_at":%d}}}}`+"\n",
		start.Add(time.Hour).Unix(), weekly, reset.Unix())
}

// Codex says in its rollout how much of the weekly window is used, and
// the hooks read it there. With -max-window-share 90 the model is warned
// at 75%; at 91% its next call is refused until the window resets; once
// it has, the calls go on.
func TestCodexWindowShareRefusesCallsUntilTheReset(t *testing.T) {
	p := newProject(t, nil, "-agent", "codex", "-max-window-share", "90")
	reset := start.Add(72 * time.Hour)
	p.reported(75, reset)
	assert.Equal(t, answer{code: 0}, p.call(preBash("go test ./...")))
	a := p.call(bashDone("go test ./...", "ok"))
	assert.Contains(t, a.Specific.Context, "loopbreaker warning: Window share 75% of the weekly window used (cap: 90%); resets 2026-11-29 10:00 UTC.")

	p.reported(91, reset)
	why, denied := p.call(preBash("go test ./...")).denied()
	require.True(t, denied)
	assert.Contains(t, why, "loopbreaker refused this call: Window share cap reached: 91% of the weekly window used (cap: 90%); resets 2026-11-29 10:00 UTC. Tool calls are refused for the next 72h0m0s.")

	p.clock.now = reset.Add(time.Minute)
	assert.Equal(t, answer{code: 0}, p.call(preBash("go test ./...")), "the window reset")
}

// With -window-share-stop the session ends at the share, at the first
// call after the report: the call is refused, and the run ended (Codex's
// is interrupted, as no answer of a hook ends it).
func TestCodexWindowShareStopEndsTheSession(t *testing.T) {
	p := newProject(t, nil, "-agent", "codex", "-max-window-share", "90", "-window-share-stop")
	p.reported(93, start.Add(72*time.Hour))
	why, denied := p.call(preBash("go test ./...")).denied()
	require.True(t, denied)
	assert.Contains(t, why, "loopbreaker refused this call: Window share cap reached: 93% of the weekly window used (cap: 90%); no waiting ends this: resume the loop, or raise the cap.")
	assert.Contains(t, p.log(), "PreToolUse: ended: Window share cap reached: 93% of the weekly window used")
}

// The share is a percent.
func TestTheHooksWindowShareIsAPercent(t *testing.T) {
	for _, v := range []string{"101", "-1"} {
		fs := newFlagSet("hook", io.Discard)
		f := defineFlags(fs)
		require.NoError(t, fs.Parse([]string{"-max-window-share", v}))
		_, err := f.settings()
		assert.EqualError(t, err, "-max-window-share must be a percent from 1 to 100 (0: none), not "+v)
	}
}
