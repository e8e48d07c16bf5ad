package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
)

// runHooks is `looprun hooks install|uninstall [flags]`.
func runHooks(sys System, args []string, stdout, stderr io.Writer) int {
	usage := func(w io.Writer) {
		fmt.Fprint(w, `usage: looprun hooks install [-agent claude|codex|gemini] [-user | -local] [-dir DIR] [-rules] [hook flags]
       looprun hooks uninstall [-agent claude|codex|gemini] [-user | -local] [-dir DIR]

install adds looprun's hooks to the agent's settings, merged with what is
there. Claude Code: the project's .claude/settings.json (-local:
.claude/settings.local.json, kept out of git; -user: ~/.claude/settings.json,
every project). Codex: the project's .codex/hooks.json (-user:
$CODEX_HOME/hooks.json, every project), which Codex runs only once you trust
them; -rules also writes Codex rules that forbid the usual commands that
delete a protected path, which need no trust (rules/looprun.rules beside it).
Gemini CLI: the project's .gemini/settings.json (-user: ~/.gemini/settings.json),
which it runs in a folder it trusts.
The hook flags (looprun hook -help) go into each command. Run again, it
changes only what differs. uninstall removes looprun's entries (and rules)
and nothing else.
`)
	}
	if len(args) == 0 || (args[0] != "install" && args[0] != "uninstall") {
		if len(args) > 0 && (args[0] == "-help" || args[0] == "--help" || args[0] == "-h") {
			usage(stdout)
			return 0
		}
		usage(stderr)
		return 2
	}
	install := args[0] == "install"
	fs := newFlagSet("looprun hooks "+args[0], io.Discard) // its errors are said once, below
	fs.Usage = func() {}
	user := fs.Bool("user", false, "change the person's settings, for every project")
	local := fs.Bool("local", false, "change the project's settings.local.json (Claude Code)")
	dir := fs.String("dir", ".", "the project's directory")
	var f *flags
	var rules *bool
	ag := &agentFlag{agent.ClaudeCode}
	if install {
		rules = fs.Bool("rules", false, "Codex: also write rules that forbid the usual commands that delete, empty or move a protected path (rm, mv, truncate, ...), which Codex applies with no trust step")
		f = defineFlags(fs)
		ag = &f.agent
	} else {
		fs.Var(ag, "agent", agentUsage)
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			fmt.Fprintln(stdout, "\nflags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "looprun hooks %s: %v (looprun hooks %s -h lists the flags)\n", args[0], err, args[0])
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "looprun hooks %s: %s\n", args[0], fmt.Sprintf(format, a...))
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected %q", fs.Args())
	case *user && *local:
		return fail("-user or -local, not both")
	case install && *rules && ag.Agent != agent.Codex:
		return fail("-rules writes Codex's rules: give -agent codex")
	}
	scope := ProjectSettings
	switch {
	case *user:
		scope = UserSettings
	case *local:
		scope = LocalSettings
	}
	hooks := ag.Hooks
	path := hooks.Settings(scope, *dir, sys.Home, sys.Getenv)
	if path == "" {
		return fail("%s has no local settings: the project's (the default) or -user", ag.Name)
	}
	want := map[string]string{}
	var set *settings
	if install {
		var err error
		if set, err = f.settings(); err != nil {
			return fail("%v", err)
		}
		bin, note := sys.Binary, ""
		if bin == "" {
			bin, note = hookBinary()
		}
		if note != "" {
			fmt.Fprintln(stderr, "looprun hooks install: note:", note)
		}
		for _, ev := range hooks.Installed(set.prompt != "") {
			want[ev] = hookCommand(bin, f.args(), ev)
		}
	}
	changes, err := mergeSettings(path, want, hooks)
	if err != nil {
		fmt.Fprintf(stderr, "looprun hooks %s: %s: %v\n", args[0], path, err)
		return 1
	}
	if len(changes) == 0 {
		if install {
			fmt.Fprintf(stdout, "%s: looprun's hooks are installed as asked; nothing to change\n", path)
		} else {
			fmt.Fprintf(stdout, "%s: no hooks of looprun's; nothing to change\n", path)
		}
	} else {
		fmt.Fprintf(stdout, "%s:\n", path)
		for _, c := range changes {
			fmt.Fprintln(stdout, "  "+c)
		}
	}
	if ag.Agent != agent.Codex {
		if install && hooks.InstallNote != nil {
			fmt.Fprint(stdout, hooks.InstallNote(scope == UserSettings))
		}
		return 0
	}
	rulesFile := codexRulesFile(path)
	var rulesChange string
	switch {
	case install && *rules:
		rulesChange, err = writeCodexRules(rulesFile, set, *dir, scope == UserSettings)
	default:
		rulesChange, err = removeCodexRules(rulesFile)
	}
	if err != nil {
		fmt.Fprintf(stderr, "looprun hooks %s: %s: %v\n", args[0], rulesFile, err)
		return 1
	}
	if rulesChange != "" {
		fmt.Fprintf(stdout, "%s: %s\n", rulesFile, rulesChange)
	}
	if install {
		fmt.Fprint(stdout, hooks.InstallNote(scope == UserSettings))
	}
	return 0
}

// hookCommand is the command of the hook for event: the binary, `hook`,
// the flags and the event, each quoted for the shell Claude Code runs it
// with.
func hookCommand(bin string, args []string, event string) string {
	words := []string{shellQuote(bin), "hook"}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(append(words, event), " ")
}

// hookBinary returns how a hook names looprun: "looprun" when the one on
// the PATH is this one, else this one's absolute path; and a note when
// this one is a temporary build (go run), which will not be there later.
func hookBinary() (string, string) {
	exe, err := os.Executable()
	if err != nil {
		return "looprun", "cannot tell where this looprun is (" + err.Error() + "): the hooks run the looprun on the PATH"
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	if onPath, err := exec.LookPath("looprun"); err == nil {
		if p, err := filepath.EvalSymlinks(onPath); err == nil && p == real {
			return "looprun", ""
		}
	}
	if strings.Contains(filepath.ToSlash(real), "/go-build") {
		return real, "this looprun is a temporary build (go run): install it (go install ./cmd/looprun) and install the hooks again"
	}
	return real, ""
}

// isLooprunHook reports whether a hook's command is one of looprun's: its
// program is named looprun and its first argument is hook.
func isLooprunHook(command string) bool {
	words := shellWords(command, 2)
	if len(words) < 2 || words[1] != "hook" {
		return false
	}
	name := words[0][strings.LastIndexAny(words[0], `/\`)+1:]
	return name == "looprun" || name == "looprun.exe"
}

// shellWords splits the first n words off a command line, undoing the
// quotes shellQuote adds (and double quotes, and backslashes).
func shellWords(line string, n int) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line) && len(words) < n; i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(line) {
				i++
				w.WriteByte(line[i])
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in && len(words) < n {
		words = append(words, w.String())
	}
	return words
}

// hookGroup is an entry of an event's list in the settings: a matcher and
// its hooks. Its members are kept as they came; looprun reads "hooks".
type hookGroup = object

// mergeSettings makes the settings file at path hold looprun's hooks as
// want says (the agent's own event name → command; empty: none), and
// nothing else changed: an entry of looprun's already there is changed in
// its place, one no longer wanted (of the events the agent's hooks
// install) removed, a new one added at the end of its event's list, with
// the agent's matcher for a tool event; every other hook and setting
// stays as it is, in its order. It returns what it changed, and writes
// nothing when that is nothing. A file that is not a JSON object is an
// error, and left alone.
func mergeSettings(path string, want map[string]string, ag *agent.Hooks) ([]string, error) {
	data, err := os.ReadFile(path)
	var top object
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return nil, err
	case len(bytes.TrimSpace(data)) == 0:
	default:
		if top, err = parseObject(data); err != nil {
			return nil, fmt.Errorf("not JSON settings, left as they are: %w", err)
		}
	}
	var hooks object
	if v, ok := top.get("hooks"); ok {
		if hooks, err = parseObject(v); err != nil {
			return nil, fmt.Errorf("\"hooks\" is not an object, left as it is: %w", err)
		}
	}
	var changes []string
	for _, ev := range ag.Installed(true) {
		var groups []hookGroup
		if v, ok := hooks.get(ev); ok {
			if err := json.Unmarshal(v, &groups); err != nil {
				return nil, fmt.Errorf("\"hooks\".%q is not a list of matchers, left as it is: %w", ev, err)
			}
		}
		cmd, wanted := want[ev]
		found, changed := false, false
		var kept []hookGroup
		for _, g := range groups {
			handlers, ours, err := groupHooks(g)
			if err != nil {
				return nil, fmt.Errorf("\"hooks\".%q: %w", ev, err)
			}
			if !ours {
				kept = append(kept, g)
				continue
			}
			var rest []json.RawMessage
			for _, h := range handlers {
				command, isOurs := handlerCommand(h)
				switch {
				case !isOurs:
					rest = append(rest, h)
				case wanted && !found:
					found = true
					if command == cmd {
						rest = append(rest, h)
						break
					}
					var ho object
					_ = json.Unmarshal(h, &ho) // a handler groupHooks read
					ho.set("command", raw(cmd))
					rest = append(rest, raw(ho))
					changes = append(changes, fmt.Sprintf("changed %s: %s", ev, cmd))
					changed = true
				default:
					changes = append(changes, fmt.Sprintf("removed %s: %s", ev, command))
					changed = true
				}
			}
			if len(rest) == 0 {
				continue // the group held looprun's hooks alone
			}
			g.set("hooks", raw(rest))
			kept = append(kept, g)
		}
		if wanted && !found {
			g := hookGroup{}
			if ag.IsToolEvent(ev) {
				g.set("matcher", raw(ag.ToolMatcher))
			}
			g.set("hooks", raw([]object{{{"type", raw("command")}, {"command", raw(cmd)}}}))
			kept = append(kept, g)
			changes = append(changes, fmt.Sprintf("added %s: %s", ev, cmd))
			changed = true
		}
		switch {
		case !changed:
		case len(kept) == 0:
			hooks.remove(ev)
		default:
			hooks.set(ev, raw(kept))
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	if len(hooks) == 0 {
		top.remove("hooks")
	} else {
		top.set("hooks", raw(hooks))
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw(top), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return changes, writeSettings(path, out.Bytes())
}

// groupHooks returns a matcher group's hooks, and whether one of them is
// looprun's.
func groupHooks(g hookGroup) ([]json.RawMessage, bool, error) {
	v, ok := g.get("hooks")
	if !ok {
		return nil, false, nil
	}
	var handlers []json.RawMessage
	if err := json.Unmarshal(v, &handlers); err != nil {
		return nil, false, fmt.Errorf("a matcher's \"hooks\" is not a list, left as it is: %w", err)
	}
	ours := false
	for _, h := range handlers {
		if _, isOurs := handlerCommand(h); isOurs {
			ours = true
		}
	}
	return handlers, ours, nil
}

// handlerCommand returns a hook's command, and whether it is looprun's.
func handlerCommand(h json.RawMessage) (string, bool) {
	var c struct{ Type, Command string }
	if json.Unmarshal(h, &c) != nil || c.Type != "command" {
		return "", false
	}
	return c.Command, isLooprunHook(c.Command)
}

// writeSettings replaces the settings file whole (see replaceFile),
// keeping its permissions; its directory is made if need be.
func writeSettings(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return replaceFile(path, data, mode, true)
}
