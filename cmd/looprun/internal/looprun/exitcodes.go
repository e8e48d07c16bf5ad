package looprun

import (
	"fmt"
	"strings"
)

// looprun's exit codes; exitCodes says what each means.
const (
	exitDone        = 0
	exitError       = 1
	exitUsage       = 2
	exitTripped     = 3
	exitAborted     = 4
	exitBudget      = 5
	exitLimit       = 6
	exitProtected   = 7
	exitProvider    = 8
	exitInterrupted = 130
)

// exitMeaning is one of looprun's exit codes: its name (-json's exit), a few
// words for -help, and what it means, as docs/looprun.md and the
// command's package comment say it (a test holds them to this table).
type exitMeaning struct {
	code        int
	name, short string
	meaning     string
}

// exitCodes are looprun's exit codes, in order.
var exitCodes = []exitMeaning{
	{exitDone, "done", "done",
		"the agent completed the work (done signals, a finished plan, test-only iterations)"},
	{exitError, "error", "error",
		"the command could not run, or the state could not be read or saved (a failed save wins over every other code)"},
	{exitUsage, "usage", "usage",
		"bad flags or settings, a `-dir` that is not a directory, or a command line that would delete a protected path (nothing is created)"},
	{exitTripped, "tripped", "tripped (the circuit is open and nobody was asked, or the breaker gave up)",
		"the circuit is open and nobody was asked, or the breaker gave up after `-max-opens` openings in a row"},
	{exitAborted, "aborted", "aborted",
		"a person chose abort; the circuit stays held open across runs until a person resumes or skips, or `-reset`"},
	{exitBudget, "budget", "budget or spend cap",
		"the call budget is spent (without `-wait`), or the spend cap (`-max-cost`, `-max-tokens`), the burn rate (`-max-cost-per-minute`, without `-wait`), or the window share (`-window-share-stop`)"},
	{exitLimit, "limit", "-max-iterations ran out",
		"`-max-iterations` ran out, and the last iteration neither completed the loop nor opened the circuit"},
	{exitProtected, "protected", "protected files lost (restored)",
		"the last iteration lost protected files; what could be was restored, and the circuit is held open until a person resumes or skips (a run that starts held so, with nobody to ask, stops with 7 too)"},
	{exitProvider, "provider", "a provider limit",
		"stopped at a provider limit: one no waiting ends, one that lifts later than `-limit-wait` allows, or a person chose terminate (or did not answer within 30 seconds)"},
	{exitInterrupted, "interrupted", "interrupted",
		"Ctrl+C or SIGTERM; the state is saved"},
}

// exitNames name the exit codes in -json's result.
var exitNames = func() map[int]string {
	names := map[int]string{}
	for _, e := range exitCodes {
		names[e.code] = e.name
	}
	return names
}()

// helpExitCodes lists the exit codes for -help: "Exit codes: 0 done, 1
// error, ...", wrapped.
var helpExitCodes = func() string {
	var each []string
	for _, e := range exitCodes {
		each = append(each, fmt.Sprintf("%d %s", e.code, e.short))
	}
	return "\n" + wrap("Exit codes:", strings.Join(each, ", ")+".", 0)
}()
