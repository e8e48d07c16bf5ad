package hook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/claudetest"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run the real Claude Code (internal/claudetest) with
// looprun's hooks installed by `looprun hooks install`, against a fake
// model the test scripts: what the hooks read is what Claude Code sends,
// and what the model is told is what reaches it.

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// looprunBinary builds looprun once, for the tests that run it as Claude
// Code does.
func looprunBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "looprun-hook-test")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "looprun")
		out, err := exec.Command("go", "build", "-o", builtBin, "../..").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building looprun: %v: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return builtBin
}

// agentProject is a project of files that a real agent works in, with
// the built looprun to install its hooks.
type agentProject struct {
	t   *testing.T
	dir string
	bin string
}

// newAgentProject makes a project of files, whose hooks the looprun at
// bin installs.
func newAgentProject(t *testing.T, bin string, files map[string]string) *agentProject {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o755))
	}
	return &agentProject{t: t, dir: dir, bin: bin}
}

// looprun runs the built looprun in the project.
func (p *agentProject) looprun(args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.bin, args...)
	cmd.Dir = p.dir
	out, err := cmd.CombinedOutput()
	require.NoError(p.t, err, "looprun %v: %s", args, out)
	return string(out)
}

// hooksLog returns the hooks' log.
func (p *agentProject) hooksLog() string {
	data, _ := os.ReadFile(filepath.Join(p.dir, stateDirName, "hooks", eventLogName))
	return string(data)
}

// claudeProject is a project with Claude Code ready to run in it against
// a fake model.
type claudeProject struct {
	*agentProject
	env *claudetest.Env
}

// newClaudeProject makes a project of files, with Claude Code against a
// model that answers with answer; its hooks are not installed yet.
func newClaudeProject(t *testing.T, answer fakemodel.Answerer, files map[string]string) *claudeProject {
	t.Helper()
	claudetest.Require(t)
	bin := looprunBinary(t) // before Start: building may need the network, which the test then leaves
	env := claudetest.Start(t, answer)
	return &claudeProject{agentProject: newAgentProject(t, bin, files), env: env}
}

// claudeResult is Claude Code's -p JSON result.
type claudeResult struct {
	Result         string  `json:"result"`
	IsError        bool    `json:"is_error"`
	TerminalReason string  `json:"terminal_reason"`
	NumTurns       int     `json:"num_turns"`
	CostUSD        float64 `json:"total_cost_usd"`
	SessionID      string  `json:"session_id"`
}

// claude runs Claude Code -p in the project, allowed to run Bash and to
// edit, and returns its result; Claude Code must exit with 0.
func (p *claudeProject) claude(args ...string) claudeResult {
	p.t.Helper()
	argv := append([]string{"-p", "fix the tests", "--output-format", "json", "--allowedTools", "Bash,Edit,Write,Read", "--permission-mode", "acceptEdits"}, args...)
	cmd := exec.Command(p.env.Bin, argv...)
	cmd.Dir = p.dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(p.t, err, "claude: %s\n%s", out, stderr.String())
	var r claudeResult
	require.NoError(p.t, json.Unmarshal(out, &r), "%s", out)
	return r
}

// turn returns the text of the i-th request the model got (from 0), its
// messages of every role: what the model read.
func (p *claudeProject) turn(i int) string {
	p.t.Helper()
	turns := p.env.Model.Turns()
	require.Greater(p.t, len(turns), i)
	return turns[i].Text()
}

// failingTest fails the same way each time it runs, and counts its runs.
const failingTest = `echo run >> runs.txt
echo '--- FAIL: TestLogin (0.00s)'
echo '    login_test.go:12: want 200, got 500'
exit 1
`

// The looping model of the previous issue: it asks for the same failing
// test again and again (Claude Code alone made 177 such calls in 90
// seconds). Under the hooks the test runs 3 times: the third failure trips
// the tool-steps preset, and the model reads why, in the conversation; its
// next call is refused, the model told the one after ends its run; and the
// one after does, Claude Code exiting cleanly with the reason in its
// transcript.
func TestClaudeCodeLoopingModelIsStoppedWithinTheToolStepsThresholds(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Always(fakemodel.Bash("sh login_test.sh")), map[string]string{"login_test.sh": failingTest})
	out := p.looprun("hooks", "install")
	assert.Contains(t, out, "added PreToolUse: "+p.bin+" hook PreToolUse")

	r := p.claude()
	assert.Equal(t, "hook_stopped", r.TerminalReason, "Claude Code's run ended by the hook")
	assert.False(t, r.IsError)
	runs, err := os.ReadFile(filepath.Join(p.dir, "runs.txt"))
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(runs), "run"), "the test ran 3 times")
	require.Len(t, p.env.Model.Turns(), 5, "3 calls run, 1 refused, 1 that ended the run")

	assert.Contains(t, p.turn(2), "loopbreaker warning: this call has failed 2 times in a row", "the warning, before the trip")
	trip := p.turn(3)
	assert.Contains(t, trip, `PostToolUseFailure:Bash hook blocking error from command: `, "Claude Code's words for a hook's block")
	assert.Contains(t, trip, `loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3`)
	assert.Contains(t, trip, `Bash {"command":"sh login_test.sh"}`)
	assert.Contains(t, trip, "login_test.go:12: want 200, got 500", "the error, quoted to the model")
	refused := p.env.Model.Turns()[4].ToolResults()
	last := refused[len(refused)-1]
	assert.True(t, last.IsError)
	assert.Contains(t, last.Text, "PreToolUse:Bash hook error: loopbreaker refused this call: Same action failed 3 times in a row")
	assert.Contains(t, last.Text, "If you call a tool again now, your run ends.")

	assert.Contains(t, p.hooksLog(), "PreToolUse: ended after 1 refused calls: Same action failed 3 times in a row")
	transcript, err := os.ReadFile(transcriptOf(t, p.env.Home, r.SessionID))
	require.NoError(t, err)
	assert.Contains(t, string(transcript), `hook stopped continuation: looprun ended the run: Same action failed 3 times in a row`,
		"the reason, where the person reads it")
	assert.NoFileExists(t, filepath.Join(p.dir, stateDirName, "hooks", r.SessionID+".json"), "the session's end removed its state")
}

// transcriptOf finds a session's transcript under Claude Code's HOME.
func transcriptOf(t *testing.T, home, session string) string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", session+".jsonl"))
	require.NoError(t, err)
	require.Len(t, found, 1)
	return found[0]
}

// A Bash call that would delete a protected directory is refused before
// it runs: the files are never touched, and the model reads why.
func TestClaudeCodeRmRfOfAProtectedPathIsRefusedBeforeItRuns(t *testing.T) {
	spec := "# Login\n\nThe login form takes a name and a password.\n"
	p := newClaudeProject(t, fakemodel.AfterToolResult(fakemodel.Bash("rm -rf specs && echo gone"), fakemodel.Say("Left the specs alone.")),
		map[string]string{"specs/login.md": spec})
	before, err := os.Stat(filepath.Join(p.dir, "specs", "login.md"))
	require.NoError(t, err)
	p.looprun("hooks", "install")

	r := p.claude()
	assert.Equal(t, "Left the specs alone.", r.Result)
	data, err := os.ReadFile(filepath.Join(p.dir, "specs", "login.md"))
	require.NoError(t, err)
	assert.Equal(t, spec, string(data))
	after, err := os.Stat(filepath.Join(p.dir, "specs", "login.md"))
	require.NoError(t, err)
	assert.Equal(t, before.ModTime(), after.ModTime(), "never touched")
	results := p.env.Model.Turns()[1].ToolResults()
	require.Len(t, results, 1)
	assert.True(t, results[0].IsError)
	assert.Contains(t, results[0].Text, "loopbreaker refused this call: rm -rf removes protected "+p.dir+"/specs (specs, a protected path")
}

// Two tool calls of one answer run at once, and so do their hooks: each
// is recorded under the session's lock. Two parallel failures and a third
// of the same call trip the breaker: none was lost.
func TestClaudeCodeTwoParallelToolCallsAreBothRecorded(t *testing.T) {
	twoAtOnce := fakemodel.Reply{Content: []fakemodel.Block{
		fakemodel.Text("Running the test twice, to see whether it is flaky."),
		fakemodel.ToolUse("Bash", map[string]string{"command": "sh login_test.sh"}),
		fakemodel.ToolUse("Bash", map[string]string{"command": "sh login_test.sh"}),
	}}
	p := newClaudeProject(t, fakemodel.Script(twoAtOnce, fakemodel.Bash("sh login_test.sh"), fakemodel.Say("It fails every time.")),
		map[string]string{"login_test.sh": failingTest})
	p.looprun("hooks", "install")

	r := p.claude()
	assert.Equal(t, "It fails every time.", r.Result)
	runs, err := os.ReadFile(filepath.Join(p.dir, "runs.txt"))
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(runs), "run"))
	require.Len(t, p.env.Model.Turns(), 3)
	assert.Contains(t, p.turn(1), "loopbreaker warning: this call has failed 2 times in a row", "the second of the parallel pair")
	assert.Contains(t, p.turn(2), "loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3", "both parallel steps counted")
}

// The session's spend is read from its transcript as it grows, priced at
// the model's list price, and held to -max-cost: each answer costs $0.45
// (claude-sonnet-4-5, 100,000 tokens in and 10,000 out), so the model is
// warned at $0.90 and the run ends at $1.35, mid-session. Claude Code
// writes its transcript on its own time, and a hook may come before the
// answer that asked for its call is written: the hook waits for it, so
// that each answer is counted by its own call's hook.
func TestClaudeCodeSpendCapEndsTheSessionMidway(t *testing.T) {
	step := func(r *fakemodel.Request) fakemodel.Reply {
		return fakemodel.Bash(fmt.Sprintf("echo step %d", len(r.ToolResults())+1)).
			WithUsage(fakemodel.Usage{InputTokens: 100_000, OutputTokens: 10_000})
	}
	p := newClaudeProject(t, step, nil)
	p.looprun("hooks", "install", "-max-cost", "1")

	r := p.claude("--model", "claude-sonnet-4-5")
	assert.Equal(t, "hook_stopped", r.TerminalReason)
	require.Len(t, p.env.Model.Turns(), 3, "the third answer reached the cap")
	assert.InDelta(t, 1.35, r.CostUSD, 0.001, "Claude Code's own reckoning agrees")
	assert.Contains(t, p.turn(2), "loopbreaker warning: Spend 90% of the cap: $0.90 of $1.00", "the warning, at the second")
	assert.Contains(t, p.hooksLog(), "PostToolUse: ended: Spend cap reached: $1.35 over the loop's life (cap: $1.00)")
}

// The hooks are installed beside a hook of the project's own: both run.
// Uninstalled, looprun's are gone and the project's stays: the same
// command that was refused then runs.
func TestClaudeCodeHooksInstallAndUninstallBesideAnotherHook(t *testing.T) {
	settings := `{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat >> audit.log; echo >> audit.log"}]}]
  }
}
`
	p := newClaudeProject(t, fakemodel.AfterToolResult(fakemodel.Bash("rm -rf specs"), fakemodel.Say("Done.")),
		map[string]string{".claude/settings.json": settings, "specs/login.md": "# Login\n"})
	p.looprun("hooks", "install")
	p.claude()
	assert.DirExists(t, filepath.Join(p.dir, "specs"), "looprun's hook refused it")
	audit, err := os.ReadFile(filepath.Join(p.dir, "audit.log"))
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"command":"rm -rf specs"`, "the project's hook ran too")

	out := p.looprun("hooks", "uninstall")
	assert.Contains(t, out, "removed PreToolUse: ")
	p.claude()
	assert.NoDirExists(t, filepath.Join(p.dir, "specs"), "without looprun's hooks, nothing refused it")
	audit, err = os.ReadFile(filepath.Join(p.dir, "audit.log"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(audit), `"command":"rm -rf specs"`), "the project's hook is still there")
}

// A Ralph loop inside Claude Code: each time the model stops, the Stop
// hook sends it back to work with PROMPT.md, until it keeps its promise.
func TestClaudeCodeRalphLoopRunsUntilThePromise(t *testing.T) {
	p := newClaudeProject(t, fakemodel.Script(
		fakemodel.Say("Did the first item."),
		fakemodel.Say("Did the second item."),
		fakemodel.Say("Every item is done.\n<promise>DONE</promise>"),
	), map[string]string{"PROMPT.md": "Take the first open item of fix_plan.md and do it.\n"})
	p.looprun("hooks", "install", "-ralph", "PROMPT.md", "-promise", "DONE")

	r := p.claude()
	assert.Equal(t, "Every item is done.\n<promise>DONE</promise>", r.Result)
	require.Len(t, p.env.Model.Turns(), 3)
	for _, i := range []int{1, 2} {
		assert.Contains(t, p.turn(i), "Stop hook feedback:\nTake the first open item of fix_plan.md and do it.", "turn %d", i)
	}
	assert.Contains(t, p.turn(2), "No progress in 2 consecutive iterations", "turns that change nothing are warned of")
	assert.Contains(t, p.hooksLog(), "the Ralph loop ends: the model kept its promise <promise>DONE</promise> after 3 turns")
}
