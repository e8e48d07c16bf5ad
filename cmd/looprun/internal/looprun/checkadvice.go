package looprun

import (
	"fmt"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
)

// checkAdvice is the warning the banner gives when the command runs a
// coding agent that exits 0 although its work failed (Codex whatever its
// commands did, Claude Code when a session ends cleanly with the tests
// still failing) and no -check tells: "" otherwise.
func checkAdvice(argv []string, check string) string {
	ag, _ := agent.Find(argv)
	if ag == nil || !ag.ExitsZeroOnFailure || check != "" {
		return ""
	}
	return ag.Name + " can exit 0 with its work failing, and only the errors looprun reads of its output tell: " +
		"give -check a command that fails when the work does (-check 'go test ./...')"
}

// stallAdvice is the warning the banner gives when -stall is set and the
// command runs an agent that prints nothing until its run ends (Claude
// Code's -p with the json format): every run longer than -stall would
// be ended. "" otherwise.
func stallAdvice(argv []string, stall time.Duration) string {
	ag, at := agent.Find(argv)
	if stall <= 0 || ag == nil || ag.Silent == nil || !ag.Silent(argv, at) {
		return ""
	}
	return fmt.Sprintf("%s prints nothing until its run ends with this output format, so -stall %s ends every run that takes longer: "+
		"use --output-format stream-json (Claude Code: with --verbose), whose events are output", ag.Name, stall)
}

// agentOutput names, for the banner, the agent's own output that looprun
// reads of the command: the agent's it runs, or, for another command (a
// script that may run any of them), every agent's.
func agentOutput(argv []string) string {
	if ag, _ := agent.Find(argv); ag != nil {
		return ag.OutputName
	}
	var names []string
	for _, ag := range agent.All {
		names = append(names, ag.Name+"'s")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " JSON output"
}
