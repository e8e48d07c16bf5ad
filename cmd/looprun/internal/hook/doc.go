// Package hook puts the breaker inside a coding agent's session, step by
// step, through the agent's hooks: `looprun hook EVENT` answers one hook
// event, and `looprun hooks install` (and `uninstall`) adds looprun's
// entries to the agent's settings, merged with what is there.
//
// Each tool call the agent makes is one step of a breaker kept per session
// (the tool-steps preset) in .loopbreaker/hooks/ of the project:
//
//   - before the call (PreToolUse), a shell command that would destroy a
//     protected path, or a write to a read-only one, is refused with the
//     reason; so is every call while the session's circuit is open, and
//     a model that goes on calling tools after it was refused has its run
//     ended, the reason shown to the person;
//   - after the call (PostToolUse, PostToolUseFailure), the step is
//     recorded (the tool and its input, its result or error) with what
//     the session has spent since the last hook, read from its
//     transcript; a signal one step short of tripping is a warning the
//     model reads, a trip tells the model why in words it can act on, and
//     a spend cap reached ends the run;
//   - when the model stops (Stop), optionally, the session is sent back to
//     work with the prompt (a Ralph loop inside the agent), until the
//     completion promise, the loop's own breaker (no progress, the same
//     error, the same final message) or the tool steps' breaker says stop;
//   - a run of calls that changes no file and says nothing to the person
//     (the model's words are read from the transcript; a shell command's
//     changes from the git work tree, near the threshold) is warned, then
//     stopped (-stall-calls);
//   - a call the agent's permissions refused (PermissionDenied) is a
//     failed step that had a permission denied, a compaction of the
//     context (PostCompact) a condensation, and a subagent's spend, read
//     from its own transcript (its tool calls, SubagentStop), counts
//     toward the session's caps; an API error that ended the turn
//     (StopFailure) is written to the hooks' log, classified, for looprun;
//   - a new prompt from the person (UserPromptSubmit) closes an open
//     circuit and starts the steps afresh, and the session's end
//     (SessionEnd) removes its state.
//
// The hook never breaks a session by its own fault: bad input, an unknown
// event or a corrupt state is a message on stderr and the call allowed
// (exit code 1, which the agent shows and passes over), unless fail-closed
// was chosen. The agent's wire format lives apart (claude.go): the events
// are read into an [Event] and answered with an [Answer], which an
// [Agent] decodes and encodes.
package hook
