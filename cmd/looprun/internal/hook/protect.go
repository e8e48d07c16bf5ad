package hook

import (
	"encoding/json"
	"errors"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/loopbreaker/loopbreaker/protect"
)

// protectedLine returns the shell line that does to the files what the
// tool call would, for protect's command check, and whether there is
// one, as the agent's tools say what they do: a shell tool's command; for
// a file edit, an append to the file (an edit, which only a read-only
// file refuses), and for a write of nothing, a truncation (which empties
// the file); for a patch, what it does to each file (patchLine).
func protectedLine(tools map[string]agent.Tool, tool string, input json.RawMessage) (string, bool) {
	t, ok := tools[tool]
	if !ok {
		return "", false
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return "", false
	}
	text, ok := in[t.Field].(string)
	switch {
	case !ok:
		return "", false
	case t.Kind == agent.Shell:
		return text, true
	case t.Kind == agent.Patch:
		return patchLine(text)
	case text == "":
		return "", false
	}
	if content, ok := in[t.Content].(string); t.Kind == agent.Write && ok && content == "" {
		return ": > " + shellQuote(text), true
	}
	return ": >> " + shellQuote(text), true
}

// writesFiles reports whether tool is one of the agent's that write a
// file (a write, an edit, a patch).
func writesFiles(tools map[string]agent.Tool, tool string) bool {
	k := tools[tool].Kind
	return k == agent.Write || k == agent.Edit || k == agent.Patch
}

// checkProtected refuses a tool call that would delete, empty, move or
// overwrite a protected path of the project, or change a read-only one,
// with a *protect.RefusalError; nil lets it run. A call that touches no
// file is not looked at, and the protected files are looked at only for
// the calls that do.
func (s *settings) checkProtected(project, cwd, tool string, input json.RawMessage) error {
	line, ok := protectedLine(s.agent.Hooks.Tools, tool, input)
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
func shellQuote(s string) string { return agent.ShellQuote(s) }
