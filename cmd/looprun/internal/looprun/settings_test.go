package looprun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const failingScript = `echo "Error: Cannot find module 'left-pad' (attempt $n)" >&2
exit 1
`

// The flags of ralph-claude-code and ralph-starter work as they do there.
func TestFlagsOfOtherRalphLoopsWork(t *testing.T) {
	r := newRepo(t, failingScript)
	out, code := r.looprun(t, "", "-interactive", "no", "--circuit-breaker-failures", "1")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "1 consecutive failures (threshold: 1)")

	r = newRepo(t, "echo \"step $n\" > \"work_$n.txt\"\n")
	out, code = r.looprun(t, "", "-interactive", "no", "--calls", "2")
	assert.Equal(t, exitBudget, code, out)
	assert.Contains(t, out, "calls: 2 of 2 in the last hour")

	r = newRepo(t, "echo \"step $n\" > \"work_$n.txt\"\n")
	out, code = r.looprun(t, "", "-interactive", "no", "--rate-limit", "1")
	assert.Equal(t, exitBudget, code, out)
	assert.Contains(t, out, "calls: 1 of 1 in the last hour")

	r = newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	out, code = r.looprun(t, "", "-interactive", "no", "--circuit-breaker-errors", "2", "--circuit-breaker-failures", "-1")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "Same error repeated 2 times (threshold: 2)")
}

// -timeout takes a duration, or whole minutes as ralph-claude-code's
// --timeout and CLAUDE_TIMEOUT_MINUTES do.
func TestTimeoutTakesMinutesToo(t *testing.T) {
	dir := t.TempDir()
	for args, want := range map[string]time.Duration{"1": time.Minute, "90s": 90 * time.Second, "": 15 * time.Minute} {
		flags := []string{"-dir", dir}
		if args != "" {
			flags = append(flags, "--timeout", args)
		}
		o, err := parseFlags(flags, nil, Options{})
		require.NoError(t, err)
		assert.Equal(t, want, o.timeout, args)
	}
	o, err := parseFlags([]string{"-dir", dir}, []string{"CLAUDE_TIMEOUT_MINUTES=5"}, Options{})
	require.NoError(t, err)
	assert.Equal(t, 5*time.Minute, o.timeout)
	_, err = parseFlags([]string{"-dir", dir, "-timeout", "soon"}, nil, Options{})
	assert.Error(t, err)
	_, err = parseFlags([]string{"-dir", dir, "-timeout", "-5"}, nil, Options{})
	assert.ErrorContains(t, err, "-timeout must be positive, not -5m0s")
	for _, tooLong := range []string{"400000000", "2147483647", "99999999999999999999"} {
		_, err = parseFlags([]string{"-dir", dir, "-timeout", tooLong}, nil, Options{})
		assert.ErrorContains(t, err, "longer than a duration holds", "%s minutes would overflow a time.Duration", tooLong)
	}
}

// Thresholds come from .looprunrc in the directory, the environment wins
// over it, and a flag wins over both; the banner says where each came
// from.
func TestSettingsFileEnvironmentAndFlagsStack(t *testing.T) {
	r := newRepo(t, failingScript)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, configFileName), []byte("# looprun\nfailures = 1\nquiet = true\n"), 0o644))
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "failures 1 (.looprunrc line 2)")
	assert.Contains(t, out, "1 consecutive failures (threshold: 1)")
	assert.NotContains(t, out, "----- iteration", "quiet = true")

	r = newRepo(t, failingScript)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, configFileName), []byte("failures = 1\n"), 0o644))
	out, code = runCmd(t, r.command([]string{"LOOPRUN_FAILURES=2"}, "-interactive", "no"), "")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "failures 2 (LOOPRUN_FAILURES)")
	assert.Equal(t, 2, r.runs(t))

	r = newRepo(t, failingScript)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, configFileName), []byte("failures = 1\n"), 0o644))
	out, code = runCmd(t, r.command([]string{"LOOPRUN_FAILURES=2"}, "-interactive", "no", "-failures", "4", "-same-errors", "-1", "-no-progress", "-1"), "")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "failures 4 (flag)")
	assert.Equal(t, 4, r.runs(t))
}

// ralph-claude-code's .ralphrc is honoured, read and never run; its CB_*
// names in the environment win over it, as in ralph-claude-code, and
// looprun's own settings win over both.
func TestRalphrcIsHonoured(t *testing.T) {
	ralphrc := `# .ralphrc - Ralph project configuration
PROJECT_NAME="${PROJECT_NAME:-my-project}"
MAX_CALLS_PER_HOUR=100
CLAUDE_TIMEOUT_MINUTES=15
CB_NO_PROGRESS_THRESHOLD=3
CB_SAME_ERROR_THRESHOLD=2
CB_OUTPUT_DECLINE_THRESHOLD=70
CB_COOLDOWN_MINUTES=30
CB_AUTO_RESET=false
`
	r := newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, ".ralphrc"), []byte(ralphrc), 0o644))
	out, code := r.looprun(t, "", "-interactive", "no")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "same-errors-in-a-row 2 (.ralphrc CB_SAME_ERROR_THRESHOLD)")
	assert.Contains(t, out, "cooldown 30m0s (.ralphrc CB_COOLDOWN_MINUTES)")
	assert.Contains(t, out, "calls-per-hour 100 (.ralphrc MAX_CALLS_PER_HOUR)")
	assert.Contains(t, out, "Same error repeated 2 times in a row (threshold: 2)")
	assert.Equal(t, 2, r.runs(t))

	r = newRepo(t, `echo "Error: Cannot find module 'left-pad'" >&2
exit 1
`)
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, ".ralphrc"), []byte(ralphrc), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, configFileName), []byte("same-errors-in-a-row = 4\n"), 0o644))
	out, code = runCmd(t, r.command([]string{"CB_SAME_ERROR_THRESHOLD=3"}, "-interactive", "no", "-failures", "-1"), "")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "same-errors-in-a-row 3 (CB_SAME_ERROR_THRESHOLD)")
	assert.Equal(t, 3, r.runs(t))
}

// A setting looprun cannot take is a usage error that names where it was
// read; a LOOPRUN_ variable that is no setting is a note on stderr.
func TestBadSettingsAreUsageErrors(t *testing.T) {
	r := newRepo(t, "echo ok\n")
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, configFileName), []byte("failures = many\n"), 0o644))
	stdout, stderr, code := runSplit(t, r.dir, "-dir", r.dir, "--", "./agent.sh")
	assert.Equal(t, exitUsage, code, stdout+stderr)
	assert.Contains(t, stderr, `looprun: .looprunrc line 1: failures "many"`)

	require.NoError(t, os.WriteFile(filepath.Join(r.dir, configFileName), []byte("dir = /tmp\n"), 0o644))
	_, stderr, code = runSplit(t, r.dir, "-dir", r.dir, "--", "./agent.sh")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, ".looprunrc line 1: dir is not a setting")

	require.NoError(t, os.Remove(filepath.Join(r.dir, configFileName)))
	out, code := runCmd(t, r.command([]string{"LOOPRUN_FAILRES=2"}, "-interactive", "no", "-max-iterations", "1"), "")
	assert.Equal(t, exitLimit, code, out)
	assert.Contains(t, out, "looprun: note: LOOPRUN_FAILRES is no setting of looprun, and is left out")
	assert.Equal(t, 1, r.runs(t))
}

// CB_AUTO_RESET (or -auto-reset) closes, at start, a circuit a cooldown
// would end; one a person aborted stays held.
func TestAutoResetClosesACooldownAtStart(t *testing.T) {
	r := newRepo(t, `if [ $n -le 3 ]; then echo "Error: Cannot find module 'left-pad'" >&2; exit 1; fi
echo "step $n" > "work_$n.txt"
echo "EXIT_SIGNAL: true"
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-cooldown", "1h")
	require.Equal(t, exitTripped, code, out)

	out, code = runCmd(t, r.command([]string{"CB_AUTO_RESET=true"}, "-interactive", "no", "-cooldown", "1h"), "")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "auto-reset: the circuit was open (3 consecutive failures (threshold: 3))")

	r = newRepo(t, failingScript)
	out, code = r.looprun(t, "a\n", "-interactive", "yes")
	require.Equal(t, exitAborted, code, out)
	out, code = r.looprun(t, "", "-interactive", "no", "-auto-reset")
	assert.Equal(t, exitTripped, code, out)
	assert.NotContains(t, out, "auto-reset:")
	assert.Equal(t, 3, r.runs(t))
}

// Unattended with -wait, an agent broken for good is not probed for ever:
// once the circuit has opened -max-opens times in a row, the breaker gives
// up and looprun stops with the tripped exit code, saying why.
func TestWaitGivesUpAfterMaxOpens(t *testing.T) {
	r := newRepo(t, failingScript)
	clk := loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code := r.runOnClock(t, clk, "-interactive", "no", "-wait", "-max-opens", "3", "-cooldown", "1m", "-max-iterations", "30")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "stopped: Gave up: the circuit opened 3 times in a row without recovering (threshold: 3): 5 consecutive failures (threshold: 3): \"Error: Cannot find module 'left-pad' (attempt 5)\"")
	assert.Equal(t, []time.Duration{time.Minute, time.Minute}, clk.Slept(), "two cooldowns waited out, the third not")
	assert.Equal(t, 5, r.runs(t), "three failures, then two failed probes")

	r = newRepo(t, failingScript)
	clk = loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code = r.runOnClock(t, clk, "-interactive", "no", "-wait", "-cooldown", "1m", "-max-iterations", "20")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "(threshold: 10)", "ten by default")
	assert.Equal(t, 12, r.runs(t))

	r = newRepo(t, failingScript)
	clk = loopbreakertest.NewClock(time.Unix(1_800_000_000, 0))
	out, code = r.runOnClock(t, clk, "-interactive", "no", "-wait", "-max-opens", "0", "-cooldown", "1m", "-max-iterations", "20")
	assert.Equal(t, exitTripped, code, out, "the last iteration opened the circuit")
	assert.Equal(t, 20, r.runs(t), "-max-opens 0: probed until -max-iterations")
	assert.NotContains(t, out, "Gave up")
	assert.Equal(t, 1, strings.Count(out, "stopped:"))
}
