package hook

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/internal/geminitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run the real Gemini CLI (internal/geminitest), offline in a
// network namespace of its own where the machine allows, against a fake
// Gemini API the test scripts, with looprun's hooks installed by `looprun
// hooks install -agent gemini` in the project's .gemini/settings.json
// (the project is trusted: GEMINI_CLI_TRUST_WORKSPACE).

// geminiProject is a project with Gemini CLI ready to run in it against a
// fake model.
type geminiProject struct {
	*agentProject
	env *geminitest.Env
}

// newGeminiProject makes a project of files, with Gemini CLI against a
// model that answers with answer, its own loop detection off; looprun's
// hooks are not installed yet.
func newGeminiProject(t *testing.T, answer fakemodel.Answerer, files map[string]string) *geminiProject {
	t.Helper()
	geminitest.Require(t)
	bin := looprunBinary(t) // before Start: building may need the network, which the test then leaves
	// Gemini CLI's own loop detection off: these tests are of the hooks'
	// (see TestGeminiLoopDetectionHeadToHead for both).
	env := geminitest.Start(t, answer, map[string]any{"model": map[string]any{"disableLoopDetection": true}})
	return &geminiProject{agentProject: newAgentProject(t, bin, files), env: env}
}

// geminiRun is how a gemini -p run ended: its exit code, and its standard
// output (stream-json events) and error.
type geminiRun struct {
	code           int
	stdout, stderr string
}

// gemini runs gemini -p in the project, its tools approved (yolo), its
// output stream-json.
func (p *geminiProject) gemini() geminiRun {
	p.t.Helper()
	cmd := exec.Command(p.env.Bin, "-p", "fix the tests", "-m", geminitest.Model, "--approval-mode", "yolo", "--output-format", "stream-json")
	cmd.Dir = p.dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(p.t, err)
	}
	return geminiRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// result returns what the model read of the i-th tool call's result (from
// 0) in its last turn.
func (p *geminiProject) result(i int) string {
	p.t.Helper()
	turns := p.env.Model.Turns()
	require.NotEmpty(p.t, turns)
	results := turns[len(turns)-1].ToolResults()
	require.Greater(p.t, len(results), i)
	return results[i].Text
}

// runs counts the runs of the failing test.
func (p *geminiProject) runs() int {
	data, _ := os.ReadFile(filepath.Join(p.dir, "runs.txt"))
	return strings.Count(string(data), "run")
}

// The looping model in Gemini CLI: it asks for the same failing test
// without end. Under the hooks the test runs 3 times: after the second
// failure the model is warned beside the output, the third trips the
// tool-steps preset and the model reads why in place of the output; its
// next call is refused, the model told the one after ends its run; and the
// one after does (continue: false): Gemini CLI exits 0, its stream saying
// the hook stopped it.
func TestGeminiLoopingModelIsStoppedWithinTheToolStepsThresholds(t *testing.T) {
	p := newGeminiProject(t, fakemodel.Always(fakemodel.Use("run_shell_command", map[string]string{"command": "sh login_test.sh"})),
		map[string]string{"login_test.sh": failingTest})
	out := p.looprun("hooks", "install", "-agent", "gemini")
	assert.Contains(t, out, "added BeforeTool: "+p.bin+" hook -agent gemini BeforeTool")
	assert.Contains(t, out, "added AfterTool: "+p.bin+" hook -agent gemini AfterTool")
	assert.Contains(t, out, "Trust needed")

	run := p.gemini()
	assert.Equal(t, 0, run.code, run.stderr)
	assert.Equal(t, 3, p.runs(), "the test ran 3 times")
	turns := p.env.Model.Turns()
	require.Len(t, turns, 5, "3 calls run, 1 refused, 1 that ended the run")
	results := turns[4].ToolResults()
	assert.Contains(t, results[1].Text, "<hook_context>loopbreaker warning: this call has failed 2 times in a row", "the warning, beside the output")
	assert.True(t, results[2].IsError, "the trip, in place of the output")
	assert.Contains(t, results[2].Text, `loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3`)
	assert.Contains(t, results[2].Text, `run_shell_command {"command":"sh login_test.sh"}`)
	assert.Contains(t, results[2].Text, "login_test.go:12: want 200, got 500", "the error, quoted to the model")
	assert.Contains(t, results[3].Text, "Tool execution blocked: loopbreaker refused this call: Same action failed 3 times in a row")
	assert.Contains(t, results[3].Text, "If you call a tool again now, your run ends.")
	assert.Contains(t, run.stdout, `"type":"stop_execution","message":"Agent execution stopped by hook: looprun ended the run: Same action failed 3 times in a row`)
	assert.Contains(t, p.hooksLog(), "PreToolUse: ended after 1 refused calls: Same action failed 3 times in a row")
}

// A shell command that would delete a protected directory is refused
// before it runs: the files are never touched, and the model reads why.
func TestGeminiRmRfOfAProtectedPathIsRefusedBeforeItRuns(t *testing.T) {
	spec := "# Login\n\nThe login form takes a name and a password.\n"
	p := newGeminiProject(t, fakemodel.AfterToolResult(fakemodel.Use("run_shell_command", map[string]string{"command": "rm -rf specs"}),
		fakemodel.Say("Left the specs alone.")), map[string]string{"specs/login.md": spec})
	p.looprun("hooks", "install", "-agent", "gemini")

	run := p.gemini()
	assert.Equal(t, 0, run.code, run.stderr)
	assert.Contains(t, run.stdout, `"content":"Left the specs alone."`)
	data, err := os.ReadFile(filepath.Join(p.dir, "specs", "login.md"))
	require.NoError(t, err)
	assert.Equal(t, spec, string(data))
	assert.Contains(t, p.result(0), "Tool execution blocked: loopbreaker refused this call: rm -rf removes protected "+p.dir+"/specs (specs, a protected path")
}

// The hooks are installed beside a hook of the project's own, in the
// same settings file with settings of its own: both hooks run.
// Uninstalled, looprun's hooks are gone and the rest stays as it was: the
// command that was refused then runs.
func TestGeminiHooksInstallAndUninstallBesideAnotherHook(t *testing.T) {
	settings := `{
  "ui": {"hideBanner": true},
  "hooks": {
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "cat >> audit.log; echo >> audit.log; echo '{}'"}]}]
  }
}
`
	p := newGeminiProject(t, fakemodel.AfterToolResult(fakemodel.Use("run_shell_command", map[string]string{"command": "rm -r specs"}), fakemodel.Say("Done.")),
		map[string]string{".gemini/settings.json": settings, "specs/login.md": "# Login\n"})
	out := p.looprun("hooks", "install", "-agent", "gemini")
	assert.Contains(t, out, "added BeforeTool")
	again := p.looprun("hooks", "install", "-agent", "gemini")
	assert.Contains(t, again, "installed as asked; nothing to change", "idempotent")
	p.gemini()
	assert.DirExists(t, filepath.Join(p.dir, "specs"), "looprun's hook refused it")
	audit, err := os.ReadFile(filepath.Join(p.dir, "audit.log"))
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"command":"rm -r specs"`, "the project's hook ran too")

	out = p.looprun("hooks", "uninstall", "-agent", "gemini")
	assert.Contains(t, out, "removed BeforeTool: ")
	p.gemini()
	assert.NoDirExists(t, filepath.Join(p.dir, "specs"), "without looprun's hooks, nothing refused it")
	audit, err = os.ReadFile(filepath.Join(p.dir, "audit.log"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(audit), `"command":"rm -r specs"`), "the project's hook is still there")
	data, err := os.ReadFile(filepath.Join(p.dir, ".gemini", "settings.json"))
	require.NoError(t, err)
	assert.JSONEq(t, settings, string(data), "as it was")
}

// The session's spend is read from Gemini CLI's transcript as it grows,
// priced at the model's list price (gemini-2.5-flash: $0.30 per million
// input tokens, $2.50 output, thinking included), and held to -max-cost:
// each answer costs $0.45 (1,000,000 tokens in, 50,000 out, 10,000 thinking),
// so the model is warned at $0.90 and the run ends at $1.35, mid-session.
func TestGeminiSpendCapEndsTheSessionMidway(t *testing.T) {
	step := func(r *fakemodel.Request) fakemodel.Reply {
		return fakemodel.Use("run_shell_command", map[string]string{"command": "echo step " + strings.Repeat("x", len(r.ToolResults())+1)}).
			WithUsage(fakemodel.Usage{InputTokens: 1_000_000, OutputTokens: 50_000, ThoughtsTokens: 10_000})
	}
	p := newGeminiProject(t, step, nil)
	p.looprun("hooks", "install", "-agent", "gemini", "-max-cost", "1")

	run := p.gemini()
	assert.Equal(t, 0, run.code, run.stderr)
	turns := p.env.Model.Turns()
	require.Len(t, turns, 3, "the third answer reached the cap")
	assert.Contains(t, turns[2].Last().Text(), "loopbreaker warning: Spend 90% of the cap: $0.90 of $1.00", "the warning, at the second")
	assert.Contains(t, p.hooksLog(), "ended: Spend cap reached: $1.35 over the loop's life (cap: $1.00)")
}
