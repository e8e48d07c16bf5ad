package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/windows"
)

// ClaudeCode is Claude Code (verified against 2.1.328).
//
// Under looprun (claude -p --output-format json, or stream-json) its
// result event tells the run: is_error its outcome, total_cost_usd and
// usage its spend (total_cost_usd is the session's running total on
// --resume), num_turns, permission_denials, session_id (which --resume
// takes), and the result text, its last words. For a subscriber (signed
// in, not on an API key), stream-json has a rate_limit_event after each
// response, with the usage windows' shares (unifiedWindows). The init event names the
// session early: a stream that began and ended before its result event
// was cut short. A run a hook ended exits 0, its result's
// terminal_reason "hook_stopped"; the hook's reason is in the stream only
// with --include-hook-events, in the hook_response event of the hook
// that ended it.
//
// A hook gets one JSON object on stdin with session_id, transcript_path,
// cwd and hook_event_name, and per event tool_name, tool_input and
// tool_response (PostToolUse) or error and is_interrupt
// (PostToolUseFailure), or last_assistant_message and stop_hook_active
// (Stop). StopFailure comes in place of Stop when an API error ended the
// turn, its error the error's class (rate_limit, billing_error,
// authentication_failed, ...; see APIErrorLimit), and its answer is
// ignored; PermissionDenied follows a call auto mode's classifier refused
// (tool_name, tool_input, tool_use_id, reason), with no other hook after
// the call; PostCompact follows a compaction (trigger manual or auto,
// compact_summary), which PreCompact announces before each attempt; a
// subagent's (the Agent tool's) hooks carry its agent_id and agent_type,
// with the session's transcript_path, and its SubagentStop its
// agent_transcript_path (<the session's transcript, without .jsonl>/
// subagents/agent-<agent_id>.jsonl), where alone its spend is. It answers
// with exit code 0 and a JSON object on stdout:
//
//   - PreToolUse refuses a call with hookSpecificOutput.permissionDecision
//     "deny" and its permissionDecisionReason, which the model reads as the
//     tool's error ("PreToolUse:Bash hook error: ...");
//   - after a call, decision "block" with a reason reaches the model as the
//     hook's blocking error, and hookSpecificOutput.additionalContext as
//     context ("PostToolUse:Bash hook additional context: ..."), both beside
//     the tool's result;
//   - at Stop, decision "block" sends the model back to work, its reason the
//     next message ("Stop hook feedback: ...");
//   - "continue": false ends the run after the hook (Claude Code -p exits
//     with 0, its result's terminal_reason "hook_stopped"), and stopReason
//     is what the person is shown; systemMessage is shown to the person only.
//
// A hook that exits 1 is a non-blocking error: its stderr is shown and
// kept in the transcript, and the call goes on.
var ClaudeCode = &Agent{
	Name:               "Claude Code",
	Flag:               "claude",
	Commands:           []string{"claude", "claude.exe"},
	OutputName:         "Claude Code's JSON output",
	ExitsZeroOnFailure: true,
	NewOutput:          func() Output { return &claudeOutput{} },
	Silent:             claudeSilent,
	Hooks: &Hooks{
		Events: []EventName{
			{Own: PreToolUse, Event: PreToolUse, Installed: true},
			{Own: PostToolUse, Event: PostToolUse, Installed: true},
			{Own: PostToolUseFailure, Event: PostToolUseFailure, Installed: true},
			{Own: UserPromptSubmit, Event: UserPromptSubmit, Installed: true},
			{Own: SessionStart, Event: SessionStart, Installed: true},
			{Own: SessionEnd, Event: SessionEnd, Installed: true},
			{Own: StopFailure, Event: StopFailure, Installed: true},
			{Own: PermissionDenied, Event: PermissionDenied, Installed: true},
			{Own: PostCompact, Event: PostCompact, Installed: true},
			{Own: SubagentStop, Event: SubagentStop, Installed: true},
			{Own: Stop, Event: Stop, Installed: true, Ralph: true},
		},
		ToolMatcher: "*",
		Decode:      decodeClaude,
		Encode:      encodeClaude,
		Settings:    claudeSettings,
		ReadOnly:    []string{".claude/settings.json", ".claude/settings.local.json"},
		Tools: map[string]Tool{
			"Bash":         {Kind: Shell, Field: "command", Ignore: []string{"description"}},
			"Write":        {Kind: Write, Field: "file_path", Content: "content"},
			"Edit":         {Kind: Edit, Field: "file_path"},
			"MultiEdit":    {Kind: Edit, Field: "file_path"},
			"NotebookEdit": {Kind: Edit, Field: "notebook_path"},
		},
		Message: claudeMessage,
	},
}

// claudeSilent reports whether a Claude Code command line prints nothing
// until its run ends: print mode (-p) with the text or json format, which
// say it all at the end; stream-json prints each event as it comes.
func claudeSilent(argv []string, at int) bool {
	args := argv[at+1:]
	return (slices.Contains(args, "-p") || slices.Contains(args, "--print")) && outputFormat(argv, at, "") != "stream-json"
}

// The output.

const (
	// claudeHookStopped is the terminal_reason of a Claude Code run a
	// hook ended.
	claudeHookStopped = "hook_stopped"
	// ClaudeHookEnded is the error of a Claude Code run a hook ended,
	// when the output does not say why.
	ClaudeHookEnded = "claude: the session was ended by a hook (terminal_reason hook_stopped)"
)

// claudeOutput reads Claude Code's JSON output: its result event, which
// ends the run; its init event, which names the session early, for a run
// cut short; the hook_response events of --include-hook-events, for the
// reason of a hook that ended the run; and its rate_limit_events, for the
// usage windows. Every other line is passed over, cheaply.
type claudeOutput struct {
	run  Run
	seen bool // a result event was read
	// session is the session the output named: the result's, else the
	// init event's.
	session string
	// stopReason is the reason of the last hook that ended the run, as
	// its hook_response event says it.
	stopReason string
	// apiError is the class of the last API error the stream said
	// (stream-json's message of it: "error" beside is_api_error_message).
	apiError string
	// windows are the usage windows of the last rate_limit_event.
	windows []loopbreaker.Window
}

// claudeEvent is what claudeOutput reads of a line. Each field is decoded
// on its own, so that one of an unexpected type spoils only itself.
type claudeEvent struct {
	Type              string          `json:"type"`
	Subtype           json.RawMessage `json:"subtype"`
	IsError           json.RawMessage `json:"is_error"`
	Result            json.RawMessage `json:"result"`
	TotalCostUSD      json.RawMessage `json:"total_cost_usd"`
	NumTurns          json.RawMessage `json:"num_turns"`
	Usage             json.RawMessage `json:"usage"`
	PermissionDenials json.RawMessage `json:"permission_denials"`
	SessionID         json.RawMessage `json:"session_id"`
	TerminalReason    json.RawMessage `json:"terminal_reason"`
	Stdout            json.RawMessage `json:"stdout"` // a hook's, in a hook_response event
	// Error and IsAPIError are an assistant event's that says an API
	// error: its class, and that it is one.
	Error      json.RawMessage `json:"error"`
	IsAPIError bool            `json:"is_api_error_message"`
}

func (c *claudeOutput) Line(line []byte) bool {
	line = bytes.TrimSpace(line)
	if ws, ok := windows.FromClaudeCode(line); ok {
		c.windows = ws
		return true
	}
	if len(line) == 0 || line[0] != '{' ||
		!bytes.Contains(line, []byte(`"result"`)) && !bytes.Contains(line, []byte(`"system"`)) &&
			!bytes.Contains(line, []byte(`"is_api_error_message":true`)) {
		return false // not an event looprun reads: cheap to tell
	}
	var ev claudeEvent
	if json.Unmarshal(line, &ev) != nil {
		return false
	}
	var session string
	_ = json.Unmarshal(ev.SessionID, &session)
	switch ev.Type {
	case "system":
		if c.session == "" {
			c.session = session
		}
		c.readHookResponse(ev)
		return true
	case "assistant":
		var class string
		if !ev.IsAPIError || json.Unmarshal(ev.Error, &class) != nil {
			return false
		}
		c.apiError = class
		return true
	case "result":
	default:
		return false
	}
	if session != "" {
		c.session = session
	}
	c.seen = true
	r := Run{Seen: true, HasWords: true}
	_ = json.Unmarshal(ev.IsError, &r.Failed)
	var subtype, text string
	_ = json.Unmarshal(ev.Subtype, &subtype)
	_ = json.Unmarshal(ev.NumTurns, &r.Turns)
	_ = json.Unmarshal(ev.Result, &text)
	r.Words = text
	if r.Failed {
		what := firstLine(text)
		if what == "" {
			what = subtype
		}
		r.Fallback = "claude: " + what
	}
	var reason string
	if json.Unmarshal(ev.TerminalReason, &reason) == nil && reason == claudeHookStopped {
		r.Failed, r.HookEnded, r.HookReason = true, true, c.stopReason
		r.Err = ClaudeHookEnded
		if c.stopReason != "" {
			r.Err = c.stopReason
		}
	}
	var cost float64
	if json.Unmarshal(ev.TotalCostUSD, &cost) == nil {
		r.CostUSD, r.HasUsage, r.HasCost = max(cost, 0), true, true
	}
	var usage struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	}
	if json.Unmarshal(ev.Usage, &usage) == nil && len(ev.Usage) > 0 && string(ev.Usage) != "null" {
		r.HasUsage = true
		// Every token the model read counts: cache writes and reads too,
		// as the provider processed (and billed) them.
		r.Usage.InputTokens = sumTokens(usage.InputTokens, usage.CacheCreationInputTokens, usage.CacheReadInputTokens)
		r.Usage.OutputTokens = max(usage.OutputTokens, 0)
	}
	r.Usage.CostUSD = r.CostUSD
	var denials []json.RawMessage
	if json.Unmarshal(ev.PermissionDenials, &denials) == nil {
		r.Denials = len(denials)
	}
	c.run = r
	return true
}

// readHookResponse keeps the reason of a hook that ended the run, from a
// hook_response event (--include-hook-events): the hook's answer on its
// stdout, "continue": false with its stopReason. Other events, and
// answers that let the run go on, are passed over.
func (c *claudeOutput) readHookResponse(ev claudeEvent) {
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

// Finish reads the json format spread over lines, when no line was a
// result event; a stream that began (its init event named the session)
// and ended before its result event was cut short: the process was
// killed, or the stream cut, and whatever it did, it did not say it
// finished.
func (c *claudeOutput) Finish(whole []byte, exitCode int) Run {
	if !c.seen {
		if t := bytes.TrimSpace(whole); bytes.HasPrefix(t, []byte("{")) && bytes.HasSuffix(t, []byte("}")) {
			c.Line(t)
		}
	}
	r := c.run
	switch {
	case c.seen:
	case c.session != "":
		r = Run{Seen: true, Failed: true, Err: "claude: the output ended before its result event: the run was cut short"}
		if exitCode != 0 {
			r.Err = fmt.Sprintf("claude: the output ended before its result event (exit status %d)", exitCode)
		}
	default:
		return Run{}
	}
	r.Session = c.session
	if r.Failed {
		r.APIError = c.apiError
	}
	r.Windows = c.windows
	return r
}

// The hooks.

// claudeInput is the part of Claude Code's hook input looprun reads.
type claudeInput struct {
	SessionID       string          `json:"session_id"`
	TranscriptPath  string          `json:"transcript_path"`
	Cwd             string          `json:"cwd"`
	Event           string          `json:"hook_event_name"`
	ToolName        string          `json:"tool_name"`
	ToolInput       json.RawMessage `json:"tool_input"`
	ToolResponse    json.RawMessage `json:"tool_response"`
	ToolUseID       string          `json:"tool_use_id"`
	Error           string          `json:"error"`
	IsInterrupt     bool            `json:"is_interrupt"`
	LastMessage     string          `json:"last_assistant_message"`
	StopHookActive  bool            `json:"stop_hook_active"`
	Reason          string          `json:"reason"` // PermissionDenied's
	AgentID         string          `json:"agent_id"`
	AgentTranscript string          `json:"agent_transcript_path"`
}

// errNoEvent is input without the event's name.
var errNoEvent = errors.New("no hook_event_name in the input")

// decodeClaude reads Claude Code's hook input.
func decodeClaude(data []byte) (Event, error) {
	var in claudeInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{}, fmt.Errorf("the input is not Claude Code's hook JSON: %w", err)
	}
	ev, err := in.event()
	if ev.AgentID != "" && ev.AgentTranscript == "" && strings.HasSuffix(ev.TranscriptPath, ".jsonl") {
		// A subagent's tool call names the session's transcript: the
		// subagent's own is beside it, where its SubagentStop says.
		ev.AgentTranscript = filepath.Join(strings.TrimSuffix(ev.TranscriptPath, ".jsonl"), "subagents", "agent-"+ev.AgentID+".jsonl")
	}
	return ev, err
}

// event returns the input as an Event; an error when it names none.
func (in *claudeInput) event() (Event, error) {
	if in.Event == "" {
		return Event{}, errNoEvent
	}
	ev := Event{
		Name: in.Event, SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
		Tool: in.ToolName, Input: in.ToolInput, Response: in.ToolResponse, ToolUseID: in.ToolUseID,
		Error: in.Error, Interrupted: in.IsInterrupt,
		LastMessage: in.LastMessage, StopHookActive: in.StopHookActive,
		AgentID: in.AgentID, AgentTranscript: in.AgentTranscript,
	}
	switch in.Event {
	case StopFailure:
		ev.APIError, ev.Error = in.Error, ""
	case PermissionDenied:
		ev.Error = in.Reason
	}
	return ev, nil
}

// APIErrorLimit says what an API error of Claude Code's class (its
// StopFailure's error, its stream's "error" beside the message that
// says it) asks of the loop: a throttle to wait out (rate_limit,
// overloaded, server_error), or a stop for a person, whom no waiting
// helps (billing_error, authentication_failed, oauth_org_not_allowed,
// account_on_hold, verification_required, cloud_credential_error). False
// for the classes that are no limit (invalid_request, model_not_found,
// max_output_tokens, unknown: a failure) and for any other.
func APIErrorLimit(class string) (loopbreaker.LimitKind, bool) {
	switch class {
	case "rate_limit", "overloaded", "server_error":
		return loopbreaker.LimitThrottle, true
	case "billing_error", "authentication_failed", "oauth_org_not_allowed", "account_on_hold",
		"verification_required", "cloud_credential_error":
		return loopbreaker.LimitStop, true
	}
	return 0, false
}

// Observation returns a tool's result as the step signals compare it:
// its text when it is a string; Bash's output and error output; any other
// tool's result as it came.
func Observation(tool string, response json.RawMessage) string {
	var text string
	if json.Unmarshal(response, &text) == nil {
		return text
	}
	if tool == "Bash" {
		var out struct{ Stdout, Stderr string }
		if json.Unmarshal(response, &out) == nil {
			return out.Stdout + "\n" + out.Stderr
		}
	}
	return string(response)
}

// claudeAnswer is Claude Code's hook output.
type claudeAnswer struct {
	Continue      *bool           `json:"continue,omitempty"`
	StopReason    string          `json:"stopReason,omitempty"`
	SystemMessage string          `json:"systemMessage,omitempty"`
	Decision      string          `json:"decision,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	Specific      *claudeSpecific `json:"hookSpecificOutput,omitempty"`
}

// claudeSpecific is an event's own part of the output.
type claudeSpecific struct {
	Event              string `json:"hookEventName"`
	PermissionDecision string `json:"permissionDecision,omitempty"`
	PermissionReason   string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext  string `json:"additionalContext,omitempty"`
}

// encodeClaude writes a as Claude Code reads a hook's answer to ev.
func encodeClaude(ev *Event, a Answer) ([]byte, int) {
	if a == (Answer{}) {
		return nil, 0
	}
	var out claudeAnswer
	if a.End != "" {
		stop := false
		out.Continue, out.StopReason = &stop, a.End
	}
	out.SystemMessage = a.Notice
	switch ev.Name {
	case PreToolUse:
		if a.Deny != "" {
			out.Specific = &claudeSpecific{Event: ev.Name, PermissionDecision: "deny", PermissionReason: a.Deny}
		}
	case PostToolUse, PostToolUseFailure, Stop:
		if a.Block != "" {
			out.Decision, out.Reason = "block", a.Block
		}
	}
	if a.Context != "" && takesContext(ev.Name) {
		if out.Specific == nil {
			out.Specific = &claudeSpecific{Event: ev.Name}
		}
		out.Specific.AdditionalContext = a.Context
	}
	return marshalAnswer(out)
}

// takesContext reports whether Claude Code reads additionalContext in the
// answer to the event: after a tool call, before one, and at a prompt or
// a session's start.
func takesContext(event string) bool {
	switch event {
	case PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart:
		return true
	}
	return false
}

// marshalAnswer is an answer's JSON on a line, with exit code 0.
func marshalAnswer(v any) ([]byte, int) {
	data, err := json.Marshal(v)
	if err != nil {
		panic("agent: " + err.Error()) // strings and booleans always marshal
	}
	return append(data, '\n'), 0
}

// claudeSettings returns Claude Code's settings file of the scope: the
// project's .claude/settings.json or .claude/settings.local.json, or the
// person's settings.json in $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeSettings(s SettingsScope, dir, home string, env func(string) string) string {
	switch s {
	case LocalSettings:
		return filepath.Join(dir, ".claude", "settings.local.json")
	case UserSettings:
		if d := env("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json")
		}
		return filepath.Join(home, ".claude", "settings.json")
	}
	return filepath.Join(dir, ".claude", "settings.json")
}

// claudeLine is the part of a line of Claude Code's transcript that tells
// what a model's message spent.
type claudeLine struct {
	Type    string `json:"type"`
	Message struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Text string `json:"text"`
		} `json:"content"`
		Usage *struct {
			Input      int `json:"input_tokens"`
			CacheWrite int `json:"cache_creation_input_tokens"`
			CacheRead  int `json:"cache_read_input_tokens"`
			Output     int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// claudeMessage reads a model's message from a line of Claude Code's
// transcript (JSON lines). Claude Code writes a message with several
// content blocks as several lines, one per block, each with the message's
// id and usage. Lines of other kinds (the person's, tool results, hook
// attachments) are passed over without being decoded, unless they hold
// both "assistant" and "usage".
func claudeMessage(line []byte) (Message, bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) || !bytes.Contains(line, []byte(`"usage"`)) {
		return Message{}, false
	}
	var l claudeLine
	if json.Unmarshal(line, &l) != nil || l.Type != "assistant" || l.Message.Usage == nil {
		return Message{}, false
	}
	u := l.Message.Usage
	m := Message{ID: l.Message.ID, Usage: loopbreaker.Usage{
		Model:            l.Message.Model,
		InputTokens:      u.Input + u.CacheWrite + u.CacheRead,
		OutputTokens:     u.Output,
		CacheReadTokens:  u.CacheRead,
		CacheWriteTokens: u.CacheWrite,
	}}
	var words []string
	for _, b := range l.Message.Content {
		switch {
		case b.Type == "tool_use" && b.ID != "":
			m.Calls = append(m.Calls, b.ID)
		case b.Type == "text" && strings.TrimSpace(b.Text) != "":
			words = append(words, b.Text)
		}
	}
	m.Words = strings.Join(words, "\n")
	return m, true
}
