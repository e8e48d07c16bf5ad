package looprun

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The agent's last words claim the work done in the phrases clawker and
// ralph-claude-code recognise; a phrase said with "not" before it, a
// single word, or a claim in a tool result of Claude Code's session
// before its result is no claim.
func TestClaimsOfDoneAreRecognised(t *testing.T) {
	for _, tc := range []struct {
		output string
		claims bool
	}{
		{"Updated the handler.\nAll tasks complete! The project is ready.\n", true},
		{"Nothing left to do: the plan is checked off.\n", true},
		{"I finished step 2 of the plan; three remain.\n", false},
		{"Not all done yet: the logout test still fails.\n", false},
		{"The work isn't done: two tasks remain.\n", false},
		{`{"type":"user","message":{"content":[{"type":"tool_result","content":"PROMPT.md: say all tasks complete when ..."}]}}` + "\n" +
			`{"type":"result","subtype":"success","is_error":false,"result":"Fixed the login form; the logout task remains."}` + "\n", false},
		{`{"type":"result","subtype":"success","is_error":false,"result":"All tasks complete."}`, true},
	} {
		assert.Equal(t, tc.claims, claimsDone(tc.output), tc.output)
	}
}

// An agent that claims the work done, iteration after iteration, without
// the status block's exit signal, stops the loop after three with its own
// reason; one that gives the signal after claiming ends the loop as done
// at once.
func TestFalseClaimsOfDoneStopTheLoop(t *testing.T) {
	r := newRepo(t, `echo "step $n" > work.txt
echo "All tasks complete!"
echo "---RALPH_STATUS---"
echo "STATUS: COMPLETE"
echo "EXIT_SIGNAL: false"
echo "---END_RALPH_STATUS---"
`)
	out, code := r.looprun(t, "", "-interactive", "no", "-max-iterations", "6")
	assert.Equal(t, exitTripped, code, out)
	assert.Contains(t, out, "False completion: the agent claimed to be done 3 times in a row without its done signal (threshold: 3)")
	assert.Equal(t, 3, r.runs(t))

	r = newRepo(t, `echo "step $n" > work.txt
echo "All tasks complete!"
if [ $n -eq 2 ]; then echo "EXIT_SIGNAL: true"; fi
`)
	out, code = r.looprun(t, "", "-interactive", "no", "-max-iterations", "6")
	assert.Equal(t, exitDone, code, out)
	assert.Contains(t, out, "Complete: the agent reported done 2 times in a row (threshold: 2)")
	assert.Equal(t, 2, r.runs(t), "the claim, then the signal: done at once")
}

// Any output is read for a claim without a panic, and a claim on the
// output's last line is found whatever came before it (but a result event
// of Claude Code's, which stands for the answer).
func FuzzClaimsDone(f *testing.F) {
	f.Add("All tasks complete!\n")
	f.Add(`{"type":"result","result":"not all done"}`)
	f.Add("\n{\"type\":\"result\"")
	f.Add("it is not ")
	f.Fuzz(func(t *testing.T, output string) {
		_ = claimsDone(output)
		if !strings.Contains(output, `{"type":"result"`) && !claimsDone(output+"\nAll tasks complete.\n") {
			t.Fatalf("the claim at the end of %q is not found", output)
		}
	})
}
