package looprun

import (
	"strings"
)

// completionClaims are the phrases in which an agent claims the whole work
// done, as the tools we follow recognise them: clawker's completion
// indicators ("all tasks complete", "project ready", "work is done",
// "implementation complete", "no more work", "nothing left to do", "all
// done") and ralph-claude-code's completion and no-work phrases ("project
// complete", "ready for review", "already implemented"). Their single
// words ("done", "complete", "finished") are left out: "I finished step
// 2" claims nothing of the whole.
var completionClaims = []string{
	"all tasks complete", "all tasks are complete", "all tasks have been completed",
	"project complete", "project is complete", "project ready",
	"work is done", "work is complete", "implementation complete", "implementation is complete",
	"no more work", "nothing left to do", "all done", "ready for review", "already implemented",
}

// claimWindow is how much of the end of the output is read for a claim:
// the agent's last words.
const claimWindow = 4 << 10

// claimsDone reports whether the agent's last words (the end of the
// output, or the result event of Claude Code's JSON output, where the
// session's tool results are left out) claim the work done. A phrase said
// with "not" before it ("not all done") is no claim.
func claimsDone(sample string) bool {
	text := sample[max(0, len(sample)-claimWindow):]
	if i := strings.LastIndex(sample, "\n{\"type\":\"result\""); i >= 0 {
		text = sample[i+1:] // Claude Code's result: the final answer alone
	} else if strings.HasPrefix(sample, "{\"type\":\"result\"") {
		text = sample
	}
	text = strings.ToLower(text)
	for _, phrase := range completionClaims {
		for at := 0; ; {
			i := strings.Index(text[at:], phrase)
			if i < 0 {
				break
			}
			i += at
			before := text[max(0, i-12):i]
			before = before[strings.LastIndexByte(before, '\n')+1:] // "not" on the claim's line
			if !strings.Contains(before, "not ") && !strings.Contains(before, "n't ") {
				return true
			}
			at = i + len(phrase)
		}
	}
	return false
}
