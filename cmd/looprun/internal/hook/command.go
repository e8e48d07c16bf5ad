package hook

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
)

// OffEnv names the environment variable that turns the hooks off: with
// LOOPRUN_HOOKS=off, `looprun hook` answers nothing, at once.
const OffEnv = "LOOPRUN_HOOKS"

// maxInput bounds the event a hook reads from stdin.
const maxInput = 64 << 20

// System is what a hook reads of the world: its environment, the
// person's home directory and the clock. Tests give their own.
type System struct {
	Getenv func(string) string
	Home   string
	Now    func() time.Time
	// Binary is how the hooks `looprun hooks install` writes name
	// looprun; empty: this looprun, by its path or as "looprun" when it
	// is the one on the PATH.
	Binary string
}

// OS is the process's own world.
func OS() System {
	home, _ := os.UserHomeDir()
	return System{Getenv: os.Getenv, Home: home, Now: time.Now}
}

// Run runs the subcommands of looprun this package holds: args is the
// command line after the program's name. `hook EVENT` answers one hook
// event read from stdin; `hooks install` and `hooks uninstall` change
// the agent's settings. ok is false when args name neither, and the
// command line is looprun's own.
func Run(sys System, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "hook":
		return runHook(sys, args[1:], stdin, stdout, stderr), true
	case "hooks":
		return runHooks(sys, args[1:], stdout, stderr), true
	}
	return 0, false
}

// runHook is `looprun hook [flags] [EVENT]`. Whatever goes wrong in the
// hook itself is said on stderr, and the call goes on with exit code 1,
// which the agent shows as the hook's non-blocking error (fail open),
// unless -fail-closed: then the call is refused and the run ended.
func runHook(sys System, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if sys.Getenv(OffEnv) == "off" {
		return 0
	}
	fs := newFlagSet("looprun hook", io.Discard) // its errors are said once, below
	fs.Usage = func() {}
	f := defineFlags(fs)
	failOpen := func(err error) int {
		fmt.Fprintf(stderr, "looprun hook: %v (the call goes on: the hook fails open)\n", err)
		return 1
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			hookUsage(fs, stdout)
			return 0
		}
		return failOpen(err)
	}
	set, err := f.settings()
	if err != nil {
		return failOpen(err)
	}
	if fs.NArg() > 1 {
		return failOpen(fmt.Errorf("one event, not %q", fs.Args()))
	}
	ag := set.agent
	data, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	switch {
	case err != nil:
		return failOpen(fmt.Errorf("reading the event: %w", err))
	case len(data) > maxInput:
		return failOpen(fmt.Errorf("the event is larger than %d MiB", maxInput>>20))
	}
	ev, err := ag.Hooks.Decode(data)
	if err == nil && fs.NArg() == 1 && ag.Hooks.Word(fs.Arg(0)) != ev.Name && fs.Arg(0) != ev.Name &&
		!(ev.Name == PostToolUseFailure && ag.Hooks.Word(fs.Arg(0)) == PostToolUse) {
		err = fmt.Errorf("the command line says %s, and the event is %s", fs.Arg(0), ev.Name)
	}
	if err != nil {
		if set.failClosed {
			ev.Name = ag.Hooks.Word(fs.Arg(0))
		}
		return fail(set, &ev, err, stdout, stderr)
	}
	h := newHandler(ag, set, projectDir(sys, &ev), sys.Now)
	h.getenv = sys.Getenv
	a, err := handleSafely(h, &ev)
	if err != nil {
		return fail(set, &ev, err, stdout, stderr)
	}
	return reply(ag, &ev, a, stdout, stderr)
}

// reply writes a, the answer to ev, as the agent reads it, and returns
// the hook's exit code. An End the agent's answer cannot carry ends its
// run once the answer is written (agent.End).
func reply(ag *agent.Agent, ev *Event, a Answer, stdout, stderr io.Writer) int {
	out, code := ag.Hooks.Encode(ev, a)
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "looprun hook: %v (the call goes on: the hook fails open)\n", err)
		return 1
	}
	if a.End != "" && ag.Hooks.End != nil {
		if err := ag.Hooks.End(); err != nil {
			fmt.Fprintf(stderr, "looprun hook: %s: %s; the run was not ended: %v\n", ag.Name, a.End, err)
		}
	}
	return code
}

// handleSafely is h.handle, with a panic of the hook's own turned into an
// error: a hook never breaks a session by its own fault.
func handleSafely(h *handler, ev *Event) (a Answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = Answer{}, fmt.Errorf("internal error: %v", p)
		}
	}()
	return h.handle(ev)
}

// fail reports the hook's own failure: on stderr, the call going on (exit
// code 1), or, with -fail-closed, the call refused and the run ended.
func fail(set *settings, ev *Event, err error, stdout, stderr io.Writer) int {
	if !set.failClosed {
		fmt.Fprintf(stderr, "looprun hook: %v (the call goes on: the hook fails open)\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "looprun hook: %v (the run ends: -fail-closed)\n", err)
	why := "looprun hook failed, and fails closed: " + err.Error()
	a := Answer{End: why}
	if ev.Name == PreToolUse || ev.Name == "" {
		ev.Name = PreToolUse
		a.Deny = why
	}
	return reply(set.agent, ev, a, stdout, stderr)
}

// projectDir returns the project the hooks keep their state in: the one
// Claude Code names in CLAUDE_PROJECT_DIR, else the event's working
// directory, else the hook's.
func projectDir(sys System, ev *Event) string {
	if d := sys.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	if ev.Cwd != "" {
		return ev.Cwd
	}
	d, _ := os.Getwd()
	return d
}

// hookUsage prints `looprun hook -help` to w.
func hookUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `usage: looprun hook [flags] [EVENT]

Answers one of Claude Code's hook events (Codex's with -agent codex,
Gemini CLI's with -agent gemini, by its own names: BeforeTool, AfterTool,
BeforeAgent, AfterAgent, SessionStart, SessionEnd),
read as JSON on stdin: the breaker inside the session, per tool call.
"looprun hooks install" adds these commands to .claude/settings.json
(-agent codex: .codex/hooks.json; -agent gemini: .gemini/settings.json).
See docs/agent-hooks.md.

  PreToolUse          refuse a call that would destroy a protected path, or
                      any call while the session's circuit is open
  PostToolUse,        record the tool call as a step (tool-steps preset) with
  PostToolUseFailure  the session's spend; warn the model, or tell it why its
                      calls stop; end the run at a spend cap
  Stop                with -ralph, send the model back to work (a Ralph loop)
  UserPromptSubmit    a new prompt closes an open circuit
  SessionStart        prune the state of sessions gone for a day
  SessionEnd          remove the session's state

Set LOOPRUN_HOOKS=off to turn the hooks off for a session.

flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
}
