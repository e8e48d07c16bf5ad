package hook

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ralphPrompt = "Study fix_plan.md and do its first open item.\n"

func stopped(message string) map[string]any {
	return event(Stop, "last_assistant_message", message, "stop_hook_active", true)
}

// edited is the PostToolUse of an edit of a file.
func edited(p *project, name string) map[string]any {
	return tool(PostToolUse, "Edit", map[string]any{"file_path": filepath.Join(p.dir, name), "old_string": "a", "new_string": "b"})
}

// Without -ralph, the Stop hook lets the model stop.
func TestWithoutARalphLoopTheModelStops(t *testing.T) {
	p := newProject(t, nil)
	assert.Equal(t, answer{code: 0}, p.call(stopped("Done.")))
	assert.NoDirExists(t, p.hooksDir(), "nothing read, nothing kept")
}

// The model stops; it is sent back to work with the prompt, turn after
// turn, until it keeps its promise.
func TestTheRalphLoopGoesOnUntilThePromise(t *testing.T) {
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt}, "-ralph", "PROMPT.md", "-promise", "ALL DONE")
	for turn := 1; turn <= 3; turn++ {
		p.call(edited(p, fmt.Sprintf("app%d.go", turn)))
		a := p.call(stopped(fmt.Sprintf("I did item %d.", turn)))
		require.Equal(t, "block", a.Decision, "turn %d", turn)
		assert.Equal(t, "Study fix_plan.md and do its first open item.", a.Reason, "the prompt, as it is")
		assert.Contains(t, a.Notice, "looprun: Ralph loop, turn", turn)
	}
	p.call(edited(p, "app4.go"))
	a := p.call(stopped("Every item is done.\n<promise> ALL\nDONE </promise>"))
	assert.Empty(t, a.Decision, "the model may stop")
	assert.Contains(t, a.Notice, "the Ralph loop ends: the model kept its promise <promise>ALL DONE</promise> after 4 turns")
}

// Turns that change no file: a warning with the prompt at the second,
// and the loop ends at the third (-no-progress, 3 by default).
func TestTheRalphLoopEndsWhenTurnsChangeNothing(t *testing.T) {
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt}, "-ralph", "PROMPT.md")
	p.call(bashDone("cat fix_plan.md", "- [ ] login"))
	a := p.call(stopped("Looked at the plan."))
	require.Equal(t, "block", a.Decision)
	assert.NotContains(t, a.Reason, "warning")

	p.call(bashDone("cat fix_plan.md", "- [ ] login"))
	a = p.call(stopped("Looked at the plan again."))
	require.Equal(t, "block", a.Decision)
	assert.Contains(t, a.Reason, "loopbreaker warning: No progress in 2 consecutive iterations (threshold: 3)")
	assert.Contains(t, a.Reason, "Another turn like it ends the loop.")

	a = p.call(stopped("Still looking."))
	assert.Empty(t, a.Decision)
	assert.Contains(t, a.Notice, "looprun: the Ralph loop ends: No progress in 3 consecutive iterations (threshold: 3)")
}

// In git, a file changed by any tool (a shell command too) is progress.
func TestInGitAFileChangedByAnyToolIsProgress(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt, "app.go": "package app\n"}, "-ralph", "PROMPT.md", "-no-progress", "2")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = p.dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.Equal(t, "block", p.call(stopped("Turn one.")).Decision)
	for i, body := range []string{"package app // 1\n", "package app // 2\n", "package app // three\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(p.dir, "app.go"), []byte(body), 0o644)) // as a shell command would
		assert.Equal(t, "block", p.call(stopped(fmt.Sprintf("Changed app.go, %d.", i))).Decision, "turn %d", i+2)
	}
	assert.Equal(t, "block", p.call(stopped("Changed nothing.")).Decision, "one more chance")
	assert.Empty(t, p.call(stopped("Changed nothing again.")).Decision, "-no-progress 2")
}

// -max-iterations bounds the turns.
func TestTheRalphLoopEndsAfterMaxIterations(t *testing.T) {
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt}, "-ralph", "PROMPT.md", "-max-iterations", "2")
	p.call(edited(p, "a.go"))
	assert.Equal(t, "block", p.call(stopped("one")).Decision)
	p.call(edited(p, "a.go"))
	a := p.call(stopped("two"))
	assert.Empty(t, a.Decision)
	assert.Contains(t, a.Notice, "-max-iterations 2 turns have run")
}

// The same last message three turns in a row is a monologue: the loop
// ends, however many files the turns changed.
func TestTheSameLastMessageThreeTimesEndsTheRalphLoop(t *testing.T) {
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt}, "-ralph", "PROMPT.md")
	for i := 1; i <= 3; i++ {
		p.call(edited(p, "a.go"))
		a := p.call(stopped("I cannot do this: the build is broken."))
		if i < 3 {
			assert.Equal(t, "block", a.Decision)
			continue
		}
		assert.Empty(t, a.Decision)
		assert.Contains(t, a.Notice, "Monologue: the same message 3 times in a row")
	}
}

// When the tool steps' circuit is open, the model is let stop: it did as
// it was told.
func TestTheRalphLoopEndsWhenTheToolCallsAreStopped(t *testing.T) {
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt}, "-ralph", "PROMPT.md")
	for range 3 {
		p.call(bashFailed("make", "Exit code 2"))
	}
	a := p.call(stopped("make keeps failing; I need help with the toolchain."))
	assert.Empty(t, a.Decision)
	assert.Contains(t, a.Notice, "the Ralph loop ends: the tool calls are stopped (Same action failed 3 times in a row")
}

// A prompt file that is not there is the hook's failure: said, and the
// model stops (fail open).
func TestAMissingRalphPromptFailsOpen(t *testing.T) {
	p := newProject(t, nil, "-ralph", "PROMPT.md")
	a := p.call(stopped("done"))
	assert.Equal(t, 1, a.code)
	assert.Contains(t, a.stderr, "the Ralph loop's prompt: open ")
}

func TestPromisesAreFoundInTheMessage(t *testing.T) {
	for msg, kept := range map[string]bool{
		"<promise>DONE</promise>":                             true,
		"All good.\n\n<promise>\n  DONE\n</promise>":          true,
		"<promise>NOT DONE</promise> <promise>DONE</promise>": true,
		"I will say <promise>DONE</promise":                   false,
		"DONE":                                                false,
		"<promise>done</promise>":                             false,
		"<promise></promise>":                                 false,
	} {
		assert.Equal(t, kept, keptPromise(msg, "DONE"), msg)
	}
}

func FuzzKeptPromise(f *testing.F) {
	f.Add("<promise>DONE</promise>", "DONE")
	f.Add("<promise><promise>x</promise>", "x")
	f.Fuzz(func(t *testing.T, message, promise string) {
		if keptPromise(message, promise) {
			require.Contains(t, message, "<promise>")
			require.Contains(t, message, "</promise>")
		}
	})
}

// Turns that end on a failed tool call, 3 in a row, end the loop: the
// model stops where it fails.
func TestTurnsEndingOnAFailedCallEndTheRalphLoop(t *testing.T) {
	p := newProject(t, map[string]string{"PROMPT.md": ralphPrompt}, "-ralph", "PROMPT.md")
	for turn := 1; turn <= 3; turn++ {
		p.call(edited(p, fmt.Sprintf("f%d.go", turn)))
		p.call(bashFailed(fmt.Sprintf("go test ./pkg%d", turn), fmt.Sprintf("Exit code 1\nFAIL pkg%d", turn)))
		a := p.call(stopped(fmt.Sprintf("Turn %d: the tests still fail.", turn)))
		if turn < 3 {
			assert.Equal(t, "block", a.Decision)
			continue
		}
		assert.Empty(t, a.Decision)
		assert.Contains(t, a.Notice, "the Ralph loop ends: 3 consecutive failures (threshold: 3)")
	}
}
