package looprun

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A hook inside the agent's session (looprun hook, or another) may end the
// session: when its tool-steps breaker trips and the model goes on, at a
// spend cap. The agent does not count that as a failure, and the loop
// would start session after session into the same wall; looprun counts it
// as one, whose error is the hook's reason where the output has it, so
// that the same reason twice is the same error.
//
// Claude Code 2.1.328 exits with 0, and its result event says
// "terminal_reason":"hook_stopped" with "is_error":false and an empty
// result; the reason (the hook's stopReason) is in its stream only with
// --include-hook-events, in the hook_response event of the hook that
// ended the run, whose stdout is the hook's answer.
//
// Codex 0.169.0 has no way for a hook to end a run: looprun's hook
// interrupts `codex exec` as Ctrl-C does, and Codex exits with 1, its
// turn started (turn.started) and never ended (no turn.completed or
// turn.failed); neither its events nor its stderr hold the reason.

const (
	// hookStopped is the terminal_reason of a Claude Code run a hook
	// ended.
	hookStopped = "hook_stopped"
	// claudeHookEnded is the error of a Claude Code run a hook ended,
	// when the output does not say why.
	claudeHookEnded = "claude: the session was ended by a hook (terminal_reason hook_stopped)"
	// codexInterrupted is the error of a Codex run interrupted during
	// its turn: looprun's hook ends a run so.
	codexInterrupted = "codex: the session was interrupted during its turn, as a hook ends it (or Ctrl-C)"
)

// readHookResponse keeps the reason of a hook that ended the run, from a
// hook_response event (--include-hook-events): the hook's answer on its
// stdout, "continue": false with its stopReason. Other events, and
// answers that let the run go on, are passed over.
func (c *claudeOutput) readHookResponse(ev event) {
	var subtype, stdout string
	if json.Unmarshal(ev.Subtype, &subtype) != nil || subtype != "hook_response" ||
		json.Unmarshal(ev.Stdout, &stdout) != nil {
		return
	}
	var answer struct {
		Continue   *bool  `json:"continue"`
		StopReason string `json:"stopReason"`
	}
	out := bytes.TrimSpace([]byte(stdout))
	if json.Unmarshal(out, &answer) != nil || answer.Continue == nil || *answer.Continue {
		return
	}
	c.stopReason = strings.TrimSpace(answer.StopReason)
}

// hookEnd makes r, the result of a run a hook ended (its terminal_reason
// hook_stopped), a failure: its error is the hook's reason, else
// claudeHookEnded.
func (c *claudeOutput) hookEnd(r *claudeResult, ev event) {
	var reason string
	if json.Unmarshal(ev.TerminalReason, &reason) != nil || reason != hookStopped {
		return
	}
	r.isError, r.hookEnded, r.hookReason = true, true, c.stopReason
	r.errText = claudeHookEnded
	if c.stopReason != "" {
		r.errText = c.stopReason
	}
}
