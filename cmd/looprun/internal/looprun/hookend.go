package looprun

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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

// hookLog is looprun's hooks' log of the project (.loopbreaker/hooks/
// events.log, which `looprun hook` writes), as it was before a run: what
// the run appended tells why the hook ended it, where the agent's output
// does not (Codex's, Claude Code's without --include-hook-events).
type hookLog struct {
	path   string
	file   os.FileInfo // nil when there was none
	offset int64
}

// maxHookLogRead bounds what a run's hooks are read of.
const maxHookLogRead = 1 << 20

// markHookLog notes where the hooks' log of the project at dir ends.
func markHookLog(dir string) hookLog {
	l := hookLog{path: filepath.Join(dir, stateDirName, "hooks", "events.log")}
	if info, err := os.Stat(l.path); err == nil {
		l.file, l.offset = info, info.Size()
	}
	return l
}

// endedReason returns why looprun's hook ended session, from the lines
// of the log written since it was marked; "" when none says so. A log
// started anew since (it is kept to a size: the old one is moved aside)
// is read whole.
func (l hookLog) endedReason(session string) string {
	if session == "" {
		return ""
	}
	f, err := os.Open(l.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	offset := l.offset
	if info, err := f.Stat(); err != nil || l.file == nil || !os.SameFile(info, l.file) || info.Size() < offset {
		offset = 0
	}
	data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, offset, maxHookLogRead), maxHookLogRead))
	if err != nil {
		return ""
	}
	return endedInHookLog(string(data), session)
}

// endedInHookLog returns the reason of the last line of log that says the
// hook ended session's run: "<time> session <id> <event>: ended: <reason>"
// or "...: ended after <n> refused calls: <reason>".
func endedInHookLog(log, session string) string {
	reason := ""
	for line := range strings.Lines(log) {
		_, rest, ok := strings.Cut(strings.TrimSpace(line), " session "+session+" ")
		if !ok {
			continue
		}
		_, what, _ := strings.Cut(rest, ": ") // after the event's name
		if !strings.HasPrefix(what, "ended: ") && !strings.HasPrefix(what, "ended after ") {
			continue
		}
		if _, why, _ := strings.Cut(what, ": "); strings.TrimSpace(why) != "" {
			reason = "looprun hook ended the run: " + why
		}
	}
	return reason
}
