package looprun

import "path/filepath"

// knownAgent returns the coding agent a command line runs, as its name
// reads ("Codex", "Claude Code"), and where in argv its word is: the
// first argument whose path's base name is the agent's command (codex,
// claude), which finds it behind a wrapper too (npx @openai/codex,
// timeout 30m claude). "" and -1 for another command.
func knownAgent(argv []string) (string, int) {
	for i, a := range argv {
		switch filepath.Base(a) {
		case "codex", "codex.js", "codex.exe":
			return "Codex", i
		case "claude", "claude.exe":
			return "Claude Code", i
		}
	}
	return "", -1
}

// checkAdvice is the warning the banner gives when the command runs a
// coding agent that exits 0 although its work failed (Codex whatever its
// commands did, Claude Code when a session ends cleanly with the tests
// still failing) and no -check tells: "" otherwise.
func checkAdvice(argv []string, check string) string {
	agent, _ := knownAgent(argv)
	if agent == "" || check != "" {
		return ""
	}
	return agent + " can exit 0 with its work failing, and only the errors looprun reads of its output tell: " +
		"give -check a command that fails when the work does (-check 'go test ./...')"
}

// agentOutput names, for the banner, the agent's own output that looprun
// reads of the command: Claude Code's JSON output, Codex's JSON events,
// or, for another command (a script that may run either), both.
func agentOutput(argv []string) string {
	switch agent, _ := knownAgent(argv); agent {
	case "Codex":
		return "Codex's JSON events (codex exec --json)"
	case "Claude Code":
		return "Claude Code's JSON output"
	}
	return "Claude Code's and Codex's JSON output"
}
