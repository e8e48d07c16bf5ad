package looprun

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// installHooks runs `looprun hooks install` with args in the project, and
// commits what it wrote: the settings are the project's, no work of the
// agent's.
func installHooks(t *testing.T, p *repo, args ...string) {
	t.Helper()
	cmd := exec.Command(looprunBin, append([]string{"hooks", "install"}, args...)...)
	cmd.Dir = p.dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "looprun hooks install: %s", out)
	p.git(t, "add", ".")
	p.git(t, "commit", "-qm", "hooks")
}

// The looping model inside sessions that looprun runs one after another,
// with looprun's hooks installed: each session edits a file, then runs the
// same failing test until the hook trips on its third failure and ends the
// run, and Claude Code exits 0, "is_error" false. Taken for runs that
// passed (a file changed each time), only their refused calls, as
// permission denials, would stop the loop, without a word of why. looprun
// counts each as a failure whose error is the hook's reason (printed with
// --include-hook-events), one error seen three times, and three failures
// in a row stop the loop.
func TestClaudeCodeSessionsTheHookEndedStopTheLoop(t *testing.T) {
	answer := func(r *fakemodel.Request) fakemodel.Reply {
		if len(r.ToolResults()) == 0 { // a session's first turn
			return fakemodel.Bash("echo attempt >> attempts.txt")
		}
		return fakemodel.Bash("sh login_test.sh")
	}
	p := newClaudeProject(t, answer, map[string]string{"login_test.sh": loginTest})
	installHooks(t, p.repo)
	out, code := p.looprun(t, []string{"-max-iterations", "6"},
		append([]string{"-p", "fix the tests", "--include-hook-events"}, claudeFlags...)...)

	require.Equal(t, exitTripped, code, out)
	reason := `looprun ended the run: Same action failed 3 times in a row (threshold: 3, error `
	assert.Equal(t, 3, strings.Count(out, "      ended by a hook: "+reason), "each iteration's line says why:\n%s", out)
	assert.Contains(t, out, "stopped: 3 consecutive failures (threshold: 3) (exit 3)")
	assert.Contains(t, out, "iterations: 3 in this run, 3 in all (0 neutral); failures: 3")
	assert.Contains(t, out, "last error (iteration 3, from the command):\n        "+reason)
	assert.Regexp(t, `\n[0-9a-f]{8} +3  `+regexp.QuoteMeta(reason), out, "one error, seen 3 times")
	assert.Len(t, p.sessions(), 3, "one session an iteration, no more")
	assert.Len(t, p.env.Model.Turns(), 18, "each session ended at its sixth turn")
}

// The same in Codex, whose hooks cannot end a run: looprun's hook
// interrupts codex exec as Ctrl-C does, and Codex exits 1 with its turn
// never ended, and no reason in its output. looprun reads why in its
// hook's log, in the lines of that thread the run appended: one error,
// three failures in a row.
func TestCodexSessionsTheHookEndedStopTheLoop(t *testing.T) {
	p := newCodexProject(t, fakemodel.Always(failingTest), map[string]string{"login_test.sh": loginTest})
	installHooks(t, p.repo, "-agent", "codex")
	out, code := p.looprun(t, []string{"-max-iterations", "6"}, "--trust", "--dangerously-bypass-hook-trust", "fix the tests")

	require.Equal(t, exitTripped, code, out)
	reason := "looprun hook ended the run: Same action failed 3 times in a row (threshold: 3, error "
	assert.Equal(t, 3, strings.Count(out, "      ended by a hook: "+reason), "each iteration's line says why:\n%s", out)
	assert.Contains(t, out, "stopped: 3 consecutive failures (threshold: 3) (exit 3)")
	assert.Regexp(t, `\n[0-9a-f]{8} +3  `+regexp.QuoteMeta(reason), out, "one error, seen 3 times")
	assert.Len(t, p.threads(), 3, "one session an iteration, no more")
	assert.Len(t, p.env.Model.Turns(), 15, "each session ended at its fifth turn")
}

// The same in Gemini CLI (its own loop detection off, so that the hooks
// are what stops each session): the hook ends the run with continue:
// false, Gemini CLI exits 0, and its stream's last tool result says the
// hook's reason: one error, three failures in a row.
func TestGeminiSessionsTheHookEndedStopTheLoop(t *testing.T) {
	answer := func(r *fakemodel.Request) fakemodel.Reply {
		if len(r.ToolResults()) == 0 { // a session's first turn
			return fakemodel.Use("run_shell_command", map[string]string{"command": "echo attempt >> attempts.txt"})
		}
		return runLoginTest
	}
	p := newGeminiProject(t, answer, map[string]string{"login_test.sh": loginTest},
		map[string]any{"model": map[string]any{"disableLoopDetection": true}})
	installHooks(t, p.repo, "-agent", "gemini")
	out, code := p.looprun(t, []string{"-max-iterations", "6"}, "-p", "fix the tests", "--output-format", "stream-json")

	require.Equal(t, exitTripped, code, out)
	reason := "looprun ended the run: Same action failed 3 times in a row (threshold: 3, error "
	assert.Equal(t, 3, strings.Count(out, "      ended by a hook: "+reason), "each iteration's line says why:\n%s", out)
	assert.Contains(t, out, "stopped: 3 consecutive failures (threshold: 3) (exit 3)")
	assert.Regexp(t, `\n[0-9a-f]{8} +3  `+regexp.QuoteMeta(reason), out, "one error, seen 3 times")
	assert.Equal(t, 3, p.sessions(), "one session an iteration, no more")
	assert.Len(t, p.env.Model.Turns(), 18, "each session ended at its sixth turn")
}
