package hook

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker/internal/codextest"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run the real Codex CLI (internal/codextest), offline in a
// network namespace of its own where the machine allows, against a fake
// Responses API the test scripts, with looprun's hooks installed by
// `looprun hooks install -agent codex`.

// codexProject is a project with Codex ready to run in it against a fake
// model.
type codexProject struct {
	*agentProject
	env *codextest.Env
}

// newCodexProject makes a project of files, with Codex against a model
// that answers with answer; looprun's hooks are not installed yet.
func newCodexProject(t *testing.T, answer fakemodel.Answerer, files map[string]string) *codexProject {
	t.Helper()
	codextest.Require(t)
	bin := looprunBinary(t) // before Start: building may need the network, which the test then leaves
	env := codextest.Start(t, answer)
	return &codexProject{agentProject: newAgentProject(t, bin, files), env: env}
}

// codexRun is how a codex exec run ended: its exit code, and its
// standard output (JSON events) and error.
type codexRun struct {
	code           int
	stdout, stderr string
}

// codex runs codex exec --json in the project, which it trusts (--trust:
// Codex reads its .codex/), with args before the prompt.
func (p *codexProject) codex(args ...string) codexRun {
	p.t.Helper()
	argv := append(append([]string{"exec", "--json", "--skip-git-repo-check", "--trust"}, args...), "fix the tests")
	cmd := exec.Command(p.env.Bin, argv...)
	cmd.Dir = p.dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(p.t, err)
	}
	return codexRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// trusted runs codex exec with every hook run unreviewed, as an
// unattended run that trusts its hooks does.
func (p *codexProject) trusted() codexRun {
	return p.codex("--dangerously-bypass-hook-trust")
}

// result returns what the model read of the i-th tool call's result in
// its last turn (from 0).
func (p *codexProject) result(i int) string {
	p.t.Helper()
	turns := p.env.Model.Turns()
	require.NotEmpty(p.t, turns)
	results := turns[len(turns)-1].ToolResults()
	require.Greater(p.t, len(results), i)
	return results[i].Text
}

// turn returns the text of the i-th request the model got (from 0), its
// messages of every role.
func (p *codexProject) turn(i int) string {
	p.t.Helper()
	turns := p.env.Model.Turns()
	require.Greater(p.t, len(turns), i)
	var b strings.Builder
	for _, m := range turns[i].Messages {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Text())
	}
	return b.String()
}

// runs counts the runs of the failing test.
func (p *codexProject) runs() int {
	data, _ := os.ReadFile(filepath.Join(p.dir, "runs.txt"))
	return strings.Count(string(data), "run")
}

// The looping model again, now in Codex: it asks for the same failing
// test without end. Under the hooks the test runs 3 times: after the
// second failure the model is warned, the third trips the tool-steps
// preset, and the model reads why in place of the output; its next call
// is refused, the model told the one after ends its run; and the one
// after does: the hook interrupts codex exec as Ctrl-C would.
func TestCodexLoopingModelIsStoppedWithinTheToolStepsThresholds(t *testing.T) {
	p := newCodexProject(t, fakemodel.Always(fakemodel.Exec("sh login_test.sh")), map[string]string{"login_test.sh": failingTest})
	out := p.looprun("hooks", "install", "-agent", "codex")
	assert.Contains(t, out, "added PreToolUse: "+p.bin+" hook -agent codex PreToolUse")
	assert.NotContains(t, out, "PostToolUseFailure", "Codex has none")
	assert.Contains(t, out, "Trust needed")

	run := p.trusted()
	assert.Equal(t, 1, run.code, "interrupted: %s\n%s", run.stdout, run.stderr)
	assert.Equal(t, 3, p.runs(), "the test ran 3 times")
	require.Len(t, p.env.Model.Turns(), 5, "3 calls run, 1 refused, 1 that ended the run")

	assert.Contains(t, p.turn(2), "developer: loopbreaker warning: this call has failed 2 times in a row", "the warning, before the trip")
	trip := p.env.Model.Turns()[3].ToolResults()[2].Text
	assert.Contains(t, trip, `loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3`, "in place of the output")
	assert.Contains(t, trip, `Bash {"command":"sh login_test.sh"}`)
	assert.Contains(t, trip, "login_test.go:12: want 200, got 500", "the error, quoted to the model")
	refused := p.env.Model.Turns()[4].ToolResults()[3].Text
	assert.Contains(t, refused, "Command blocked by PreToolUse hook: loopbreaker refused this call: Same action failed 3 times in a row")
	assert.Contains(t, refused, "If you call a tool again now, your run ends.")
	assert.Contains(t, p.hooksLog(), "PreToolUse: ended after 1 refused calls: Same action failed 3 times in a row")
}

// rmSpecs is a model that deletes the specs twice: with rm -rf, which
// Codex refuses on its own where it cannot ask the person for approval
// ("rm -f style commands are not permitted"), and with rm -r, which it
// lets through.
func rmSpecs() fakemodel.Answerer {
	return fakemodel.Script(fakemodel.Exec("rm -rf specs"), fakemodel.Exec("rm -r specs && echo gone"), fakemodel.Say("Left the specs alone."))
}

// A shell command that would delete a protected directory is refused
// before it runs: the files are never touched, and the model reads why.
func TestCodexRmRfOfAProtectedPathIsRefusedByTheHook(t *testing.T) {
	spec := "# Login\n\nThe login form takes a name and a password.\n"
	p := newCodexProject(t, rmSpecs(), map[string]string{"specs/login.md": spec})
	p.looprun("hooks", "install", "-agent", "codex")

	run := p.trusted()
	assert.Equal(t, 0, run.code, run.stderr)
	assert.Contains(t, run.stdout, `"text":"Left the specs alone."`)
	data, err := os.ReadFile(filepath.Join(p.dir, "specs", "login.md"))
	require.NoError(t, err)
	assert.Equal(t, spec, string(data))
	for i, rm := range []string{"rm -rf", "rm -r"} {
		assert.Contains(t, p.result(i), "Command blocked by PreToolUse hook: loopbreaker refused this call: "+rm+" removes protected "+p.dir+"/specs (specs, a protected path")
	}
}

// Where no one trusted the hooks, Codex skips them, and the rules that
// `hooks install -rules` wrote beside them refuse the commands instead,
// with their justification: the directory is never touched.
func TestCodexRmRfOfAProtectedPathIsRefusedByTheRulesWithoutHookTrust(t *testing.T) {
	p := newCodexProject(t, rmSpecs(), map[string]string{"specs/login.md": "# Login\n"})
	out := p.looprun("hooks", "install", "-agent", "codex", "-rules")
	assert.Contains(t, out, filepath.Join(".codex", "rules", "looprun.rules")+": wrote rules that forbid rm, mv, truncate, ... of ")

	run := p.codex() // no --dangerously-bypass-hook-trust: the hooks are not trusted
	assert.Equal(t, 0, run.code, run.stderr)
	assert.FileExists(t, filepath.Join(p.dir, "specs", "login.md"))
	assert.NoFileExists(t, filepath.Join(p.dir, stateDirName, "hooks", eventLogName), "no hook ran")
	for i, rm := range []string{"rm -rf specs", "rm -r specs && echo gone"} {
		assert.Contains(t, p.result(i), "`/bin/bash -lc '"+rm+"'` rejected: looprun: specs is a protected path: the project's plan")
	}
}

// The rules forbid each spelling of a destructive command they list, and
// nothing else, as Codex's own policy check reads them.
func TestCodexRulesForbidTheUsualDestructiveCommands(t *testing.T) {
	bin := codextest.Require(t)
	t.Setenv("CODEX_HOME", t.TempDir())
	root := t.TempDir()
	text, covered := codexRules([]string{".loopbreaker/", "specs/", "AGENTS.md", "docs/*.md"}, root)
	assert.Equal(t, 3, covered)
	assert.Contains(t, text, "# Not covered: docs/*.md")
	file := filepath.Join(t.TempDir(), "looprun.rules")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	check := func(argv ...string) string {
		out, err := exec.Command(bin, append([]string{"execpolicy", "check", "--rules", file}, argv...)...).Output()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	for _, cmd := range []string{
		"rm specs", "rm -rf specs", "rm -r -f ./specs/", "rm -fr -- specs", "rm " + root + "/specs", "rmdir specs", "unlink AGENTS.md",
		"shred -u AGENTS.md", "mv AGENTS.md /tmp/x", "mv -f specs old-specs", "truncate -s 0 AGENTS.md", "truncate --size=0 AGENTS.md",
		"cp /dev/null AGENTS.md", "git rm -r specs", "git rm AGENTS.md", "rm -rf .loopbreaker",
	} {
		assert.Contains(t, check(strings.Fields(cmd)...), `"decision":"forbidden"`, cmd)
	}
	for _, cmd := range []string{"rm notes.txt", "cat AGENTS.md", "mv notes.txt specs-old", "ls specs", "git status", "rm docs/a.md"} {
		assert.NotContains(t, check(strings.Fields(cmd)...), `"forbidden"`, cmd)
	}
}

// The hooks are installed beside a hook of the project's own: both run.
// Uninstalled, looprun's hooks and rules are gone and the project's hook
// stays: the same command that was refused then runs.
func TestCodexHooksInstallAndUninstallBesideAnotherHook(t *testing.T) {
	hooks := `{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat >> audit.log; echo >> audit.log"}]}]
  }
}
`
	p := newCodexProject(t, fakemodel.AfterToolResult(fakemodel.Exec("rm -r specs"), fakemodel.Say("Done.")),
		map[string]string{".codex/hooks.json": hooks, "specs/login.md": "# Login\n"})
	p.looprun("hooks", "install", "-agent", "codex", "-rules")
	p.trusted()
	assert.DirExists(t, filepath.Join(p.dir, "specs"), "looprun's hook refused it")
	audit, err := os.ReadFile(filepath.Join(p.dir, "audit.log"))
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"command":"rm -r specs"`, "the project's hook ran too")

	out := p.looprun("hooks", "uninstall", "-agent", "codex")
	assert.Contains(t, out, "removed PreToolUse: ")
	assert.Contains(t, out, "removed looprun's rules")
	p.trusted()
	assert.NoDirExists(t, filepath.Join(p.dir, "specs"), "without looprun's hooks and rules, nothing refused it")
	audit, err = os.ReadFile(filepath.Join(p.dir, "audit.log"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(audit), `"command":"rm -r specs"`), "the project's hook is still there")
	data, err := os.ReadFile(filepath.Join(p.dir, ".codex", "hooks.json"))
	require.NoError(t, err)
	assert.JSONEq(t, hooks, string(data), "as it was")
}

// The session's spend is read from Codex's rollout as it grows, priced at
// the model's list price, and held to -max-cost: each response costs
// $0.45 (gpt-5.5, 60,000 tokens in and 5,000 out), so the model is warned
// at $0.90 and the run ends at $1.35, mid-session: the hook before the
// third call reads the third response's spend, and refuses the call.
func TestCodexSpendCapEndsTheSessionMidway(t *testing.T) {
	step := func(r *fakemodel.Request) fakemodel.Reply {
		return fakemodel.Exec(fmt.Sprintf("echo step %d", len(r.ToolResults())+1)).
			WithUsage(fakemodel.Usage{InputTokens: 60_000, OutputTokens: 5_000})
	}
	p := newCodexProject(t, step, nil)
	p.looprun("hooks", "install", "-agent", "codex", "-max-cost", "1")

	run := p.trusted()
	assert.Equal(t, 1, run.code, "interrupted")
	require.Len(t, p.env.Model.Turns(), 3, "the third response reached the cap")
	assert.Contains(t, p.turn(2), "loopbreaker warning: Spend 90% of the cap: $0.90 of $1.00", "the warning, at the second")
	assert.Contains(t, p.hooksLog(), "PreToolUse: ended: Spend cap reached: $1.35 over the loop's life (cap: $1.00)")
}

// Codex says the usage windows in its rollout alone (from the backend's
// x-codex headers), in the token_count event it writes once a response's
// tool call has run: the hook before the second call reads there that
// 93% of the weekly window is used, and with -max-window-share 90
// -window-share-stop that call is refused and the run ended.
func TestCodexWindowShareEndsTheSessionAtTheNextCall(t *testing.T) {
	reply := fakemodel.Exec("echo step")
	reply.Header = http.Header{
		"X-Codex-Primary-Used-Percent":     {"12"},
		"X-Codex-Primary-Window-Minutes":   {"300"},
		"X-Codex-Primary-Reset-At":         {strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)},
		"X-Codex-Secondary-Used-Percent":   {"93"},
		"X-Codex-Secondary-Window-Minutes": {"10080"},
		"X-Codex-Secondary-Reset-At":       {strconv.FormatInt(time.Now().Add(72*time.Hour).Unix(), 10)},
	}
	p := newCodexProject(t, fakemodel.Always(reply), nil)
	p.looprun("hooks", "install", "-agent", "codex", "-max-window-share", "90", "-window-share-stop")

	run := p.trusted()
	assert.Equal(t, 1, run.code, "interrupted: %s\n%s", run.stdout, run.stderr)
	require.Len(t, p.env.Model.Turns(), 2, "the second response's call was refused, and the run ended")
	assert.Equal(t, 1, strings.Count(run.stdout, `"aggregated_output":"step\n"`), "the first call ran, the second did not")
	assert.Contains(t, p.hooksLog(), "PreToolUse: ended: Window share cap reached: 93% of the weekly window used (cap: 90%); no waiting ends this")
}

// A model that keeps sending a patch that does not apply: Codex sends no
// hook after such a call, and tells its failure in its rollout alone. The
// hook before each next call reads it there: the third failure trips the
// breaker, and the call that comes next is refused with the reason, the
// patch's error quoted; then one more refused, and the run ended.
func TestCodexModelLoopingOnAPatchThatDoesNotApplyIsStopped(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: login.go\n@@\n-func login() error { return nil }\n+func login() error { return check() }\n*** End Patch\n"
	p := newCodexProject(t, fakemodel.Always(fakemodel.ApplyPatch(patch)), map[string]string{"login.go": "package login\n"})
	p.looprun("hooks", "install", "-agent", "codex")

	run := p.trusted()
	assert.Equal(t, 1, run.code, "interrupted")
	turns := p.env.Model.Turns()
	require.Len(t, turns, 6, "3 patches that failed, the trip, 1 refused, 1 that ended the run")
	results := turns[5].ToolResults()
	for i := range 3 {
		assert.Contains(t, results[i].Text, "apply_patch verification failed: Failed to find expected lines", "patch %d", i+1)
	}
	assert.Contains(t, results[3].Text, "Command blocked by PreToolUse hook: loopbreaker stopped your tool calls: Same action failed 3 times in a row (threshold: 3")
	assert.Contains(t, results[3].Text, "Failed to find expected lines", "the error, quoted")
	assert.Contains(t, results[4].Text, "If you call a tool again now, your run ends.")
	log := p.hooksLog()
	assert.Equal(t, 3, strings.Count(log, "apply_patch failed with no hook after it: apply_patch verification failed"), log)
	assert.Contains(t, log, "ended after 1 refused calls: Same action failed 3 times in a row")
	data, err := os.ReadFile(filepath.Join(p.dir, "login.go"))
	require.NoError(t, err)
	assert.Equal(t, "package login\n", string(data))
}

// The Ralph loop inside a Codex session: each time the model ends its
// turn, the Stop hook sends it back with the prompt, until it keeps its
// promise.
func TestCodexRalphLoopRunsUntilThePromise(t *testing.T) {
	p := newCodexProject(t, fakemodel.Script(
		fakemodel.Say("Did the first item."),
		fakemodel.Say("Did the second item."),
		fakemodel.Say("Every item is done.\n<promise>DONE</promise>"),
	), map[string]string{"PROMPT.md": "Take the first open item of fix_plan.md and do it.\n"})
	p.looprun("hooks", "install", "-agent", "codex", "-ralph", "PROMPT.md", "-promise", "DONE")

	run := p.trusted()
	assert.Equal(t, 0, run.code, run.stderr)
	require.Len(t, p.env.Model.Turns(), 3, run.stdout)
	for _, i := range []int{1, 2} {
		assert.Contains(t, p.turn(i), "Take the first open item of fix_plan.md and do it.", "turn %d", i)
	}
	assert.Contains(t, p.turn(2), "No progress in 2 consecutive iterations", "turns that change nothing are warned of")
	assert.Contains(t, p.hooksLog(), "the Ralph loop ends: the model kept its promise <promise>DONE</promise> after 3 turns")
}
