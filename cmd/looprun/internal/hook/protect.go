package hook

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/loopbreaker/loopbreaker/protect"
)

// editTools are the agents' tools that write a file, and the input field
// naming it: Claude Code's, and Codex's apply_patch, whose input is a
// patch that names its files (see patchLine).
var editTools = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
	"apply_patch":  "command",
}

// protectedLine returns the shell line that does to the files what the
// tool call would, for protect's command check, and whether there is
// one: a Bash call's command; for a file edit, an append to the file (an
// edit, which only a read-only file refuses), and for a Write of nothing,
// a truncation (which empties the file); for a patch, what it does to
// each file (patchLine).
func protectedLine(tool string, input json.RawMessage) (string, bool) {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return "", false
	}
	if tool == "Bash" {
		cmd, ok := in["command"].(string)
		return cmd, ok
	}
	field, ok := editTools[tool]
	if !ok {
		return "", false
	}
	if tool == "apply_patch" {
		patch, _ := in[field].(string)
		return patchLine(patch)
	}
	file, ok := in[field].(string)
	if !ok || file == "" {
		return "", false
	}
	if content, ok := in["content"].(string); tool == "Write" && ok && content == "" {
		return ": > " + shellQuote(file), true
	}
	return ": >> " + shellQuote(file), true
}

// checkProtected refuses a tool call that would delete, empty, move or
// overwrite a protected path of the project, or change a read-only one,
// with a *protect.RefusalError; nil lets it run. A call that touches no
// file is not looked at, and the protected files are looked at only for
// the calls that do.
func (s *settings) checkProtected(project, cwd, tool string, input json.RawMessage) error {
	line, ok := protectedLine(tool, input)
	if !ok {
		return nil
	}
	g, err := protect.New(project, protect.Config{
		Protected: s.protect,
		ReadOnly:  s.readOnly,
		// The state directory is protected from the agent's commands, but
		// not read: it holds looprun's logs, and the hooks' own state.
		Exclude: []string{stateDirName},
	})
	if err != nil {
		return err
	}
	return g.CheckCommand(line, cwd)
}

// refusal returns the RefusalError in err, if it is one.
func refusal(err error) (*protect.RefusalError, bool) {
	var r *protect.RefusalError
	ok := errors.As(err, &r)
	return r, ok
}

// shellQuote quotes s for a POSIX shell, as one word.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
