package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// Codex is the Codex CLI (verified against 0.169.0), whose hooks take
// Claude Code's format: the same hooks.json, the same events, the same
// input (with the session's model beside it) and the same JSON answers,
// which Codex honours with these differences:
//
//   - a hook after a tool call comes only when the call ran: PostToolUse,
//     with the tool's output alone as tool_response (a command's exit code
//     is in the session's rollout, which the hook reads, not in its input);
//     there is no PostToolUseFailure, and a patch apply_patch could not
//     apply, or a command Codex's policy refused, has no hook after it at
//     all (the session's next hook finds its result in the rollout);
//   - a shell command comes as the tool Bash, its input {"command": ...};
//     a patch as apply_patch, its input {"command": the patch};
//   - PreToolUse's deny reaches the model as "Command blocked by PreToolUse
//     hook: <reason>. Command: ..."; an answer with continue: false is
//     refused whole as unsupported, the deny with it, so none is sent;
//   - after a call, decision "block" replaces the tool's output with the
//     reason, which the model reads instead, and additionalContext reaches
//     it as a developer message; continue: false does the same as a block
//     and does not end the run;
//   - at Stop, decision "block" sends the model back to work, its reason
//     the next message;
//   - a hook's answer cannot end the run: looprun ends a `codex exec` run
//     as Ctrl-C does (see Codex.End), and in Codex's interactive interface
//     leaves the person to, every tool call refused meanwhile.
//
// Codex runs a hook only once the person trusted it (or with
// --dangerously-bypass-hook-trust), and a project's .codex/ only in a
// trusted project.
var Codex = Agent{
	Name:           "Codex",
	Flag:           "codex",
	Events:         []string{PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, SessionEnd, Stop},
	Decode:         decodeCodex,
	Encode:         encodeCodex,
	End:            endCodexExec,
	Settings:       codexSettings,
	SilentFailures: true,
	ReadOnly:       []string{".codex/hooks.json", ".codex/config.toml", ".codex/rules/"},
	Message:        codexMessage,
}

// codexInput is the part of Codex's hook input looprun reads: Claude
// Code's, and the model.
type codexInput struct {
	claudeInput
	Model string `json:"model"`
}

// codexShellTools are the names Codex gives its shell tools inside, which
// its hooks call Bash: a hook input that names one is read as Bash's.
var codexShellTools = map[string]bool{"shell": true, "exec_command": true, "shell_command": true, "local_shell": true}

// decodeCodex reads Codex's hook input.
func decodeCodex(data []byte) (Event, error) {
	var in codexInput
	if err := json.Unmarshal(data, &in); err != nil {
		return Event{}, fmt.Errorf("the input is not Codex's hook JSON: %w", err)
	}
	ev, err := in.event()
	if err != nil {
		return Event{}, err
	}
	ev.Model = in.Model
	if codexShellTools[ev.Tool] {
		ev.Tool, ev.Input = "Bash", shellInput(ev.Input)
	}
	return ev, nil
}

// shellInput returns a shell tool's input as Bash's, {"command": line}:
// from a command line in "command" or "cmd", or from an argument list in
// "command" (["bash", "-lc", line] gives line; any other list, its words
// quoted). An input it cannot read is returned as it is.
func shellInput(input json.RawMessage) json.RawMessage {
	var in struct {
		Command json.RawMessage `json:"command"`
		Cmd     string          `json:"cmd"`
	}
	if json.Unmarshal(input, &in) != nil {
		return input
	}
	line := in.Cmd
	var argv []string
	switch {
	case json.Unmarshal(in.Command, &line) == nil:
	case json.Unmarshal(in.Command, &argv) == nil && len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c"):
		line = argv[2]
	case len(argv) > 0:
		words := make([]string, len(argv))
		for i, w := range argv {
			words[i] = shellQuote(w)
		}
		line = strings.Join(words, " ")
	}
	if line == "" {
		return input
	}
	out, err := json.Marshal(map[string]string{"command": line})
	if err != nil {
		return input
	}
	return out
}

// encodeCodex writes a as Codex reads a hook's answer to ev: Claude Code's
// answer, without what Codex would refuse or take for something else
// (continue: false before and after a tool call). An End is then Codex.End's
// to carry out; after a tool call, the model reads it in place of the
// tool's output.
func encodeCodex(ev *Event, a Answer) ([]byte, int) {
	switch ev.Name {
	case PreToolUse:
		a.End = ""
	case PostToolUse:
		if a.Block == "" {
			a.Block = a.End
		}
		a.End = ""
	}
	return encodeClaude(ev, a)
}

// codexSettings returns Codex's hooks file of the scope: the project's
// .codex/hooks.json, or the person's hooks.json in $CODEX_HOME, else
// ~/.codex. Codex keeps no local settings apart: "" for LocalSettings.
func codexSettings(s SettingsScope, dir, home string, env func(string) string) string {
	switch s {
	case LocalSettings:
		return ""
	case UserSettings:
		return filepath.Join(codexHome(home, env), "hooks.json")
	}
	return filepath.Join(dir, ".codex", "hooks.json")
}

// codexHome is Codex's home: $CODEX_HOME, else ~/.codex.
func codexHome(home string, env func(string) string) string {
	if d := env("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".codex")
}

// codexLine is the part of a line of Codex's rollout (the session's
// transcript) that looprun reads: the usage of each of the model's
// responses (token_usage_record; token_count events hold running totals,
// which are not read), and the end of each tool call (an item_completed
// event whose item's id is the call's, with its status and a command's
// exit code).
type codexLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type       string          `json:"type"`
		ResponseID string          `json:"response_id"`
		CallID     string          `json:"call_id"`
		Output     json.RawMessage `json:"output"`
		Usage      *struct {
			Input      int `json:"input_tokens"`
			CacheRead  int `json:"cached_input_tokens"`
			CacheWrite int `json:"cache_write_input_tokens"`
			Output     int `json:"output_tokens"`
		} `json:"usage"`
		Item *struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			ExitCode *int   `json:"exit_code"`
		} `json:"item"`
	} `json:"payload"`
}

// codexMessage reads a line of Codex's rollout (JSON lines): a response's
// usage; a tool call's end, and whether it failed (its status "failed",
// or a command's exit code other than 0), which Codex writes before the
// hook after the call; or a call's result as the model reads it, which
// Codex writes after that hook, and for a call that failed before it ran
// (a patch it could not apply) with no hook at all. input_tokens counts
// the cached ones too, as the Responses API does. Lines of other kinds
// are passed over without being decoded.
func codexMessage(line []byte) (Message, bool) {
	if !bytes.Contains(line, []byte(`"token_usage_record"`)) && !bytes.Contains(line, []byte(`"item_completed"`)) &&
		!bytes.Contains(line, []byte(`_call_output"`)) {
		return Message{}, false
	}
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return Message{}, false
	}
	p := l.Payload
	switch {
	case l.Type == "token_usage_record" && p.Usage != nil:
		u := p.Usage
		return Message{ID: p.ResponseID, Usage: loopbreaker.Usage{
			InputTokens:      max(u.Input, 0),
			OutputTokens:     max(u.Output, 0),
			CacheReadTokens:  max(u.CacheRead, 0),
			CacheWriteTokens: max(u.CacheWrite, 0),
		}}, true
	case l.Type == "event_msg" && p.Type == "item_completed" && p.Item != nil && p.Item.ID != "" && p.Item.Status != "":
		// An item with a status is a tool call's; the messages have none.
		m := Message{Calls: []string{p.Item.ID}}
		if p.Item.Status == "failed" || p.Item.ExitCode != nil && *p.Item.ExitCode != 0 {
			m.Failed = m.Calls
		}
		return m, true
	case l.Type == "response_item" && (p.Type == "function_call_output" || p.Type == "custom_tool_call_output") && p.CallID != "":
		text := string(p.Output)
		_ = json.Unmarshal(p.Output, &text) // a string, as a rule; else the output as it came
		return Message{Result: &CallResult{ID: p.CallID, Text: text}}, true
	}
	return Message{}, false
}
