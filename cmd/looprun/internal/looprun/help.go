package looprun

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
)

// helpIntro opens -help.
const helpIntro = `usage: looprun [flags] [-- command [args...]]

looprun runs the command again and again, as the Ralph loop
'while :; do cat PROMPT.md | agent; done' does, shows and logs its output,
and stops when the loop is stuck, spent or done. Without a command it runs
a built-in simulated agent.
`

// helpSettings says where settings come from.
const helpSettings = `
Settings: a flag given on the command line wins; else the environment
(LOOPRUN_<FLAG>: LOOPRUN_CALLS_PER_HOUR=50; ralph-claude-code's CB_* too);
else ` + configFileName + ` in -dir (name = value lines: failures = 4); else
ralph-claude-code's .ralphrc in -dir (CB_*, MAX_CALLS_PER_HOUR,
CLAUDE_TIMEOUT_MINUTES: read, never run); else the preset.
`

// helpTable is the legend of the table looprun prints, a line per
// iteration.
const helpTable = `
The table, a line per iteration:
  iter    the iteration's number over the loop's life
  time    when it started
  state   the circuit after it: CLOSED runs on; OPEN stops (until the
          cooldown's probe, or a person); HALF_OPEN lets one probe decide;
          WATCH: a signal is one iteration short of opening it, and the
          next iteration is its one more chance
  result  ok, or FAIL (the command failed, timed out or was killed, or
          -check failed); LIMIT: a provider limit, no iteration; STOP: a
          provider limit no waiting ends; * marks the half-open probe
  files   files the iteration changed in git (outside git: the status
          block's FILES_MODIFIED, or 1 for output unlike the last)
  consec  failures in a row
  total   failures over the loop's life
  noprog  iterations in a row without progress
  error   the fingerprint of the iteration's error; the summary lists each
  calls   calls used of -calls-per-hour in the last hour
`

// helpExitCodes lists the exit codes.
const helpExitCodes = `
Exit codes:
  0   done: the agent completed the work (done signals, a finished plan)
  1   error: the command could not run, or the state could not be read or
      saved
  2   usage: bad flags or settings, a -dir that is no directory, or a
      command line that would delete a protected path
  3   tripped: the circuit is open and nobody was asked (no terminal), or
      the breaker gave up after -max-opens openings in a row
  4   aborted: a person chose abort
  5   budget: the call budget is spent (without -wait), or the spend cap
      (-max-cost, -max-tokens)
  6   limit: -max-iterations ran out
  7   protected: the last iteration lost protected files (restored)
  8   provider: stopped at a provider limit
  130 interrupted: Ctrl+C or SIGTERM
`

// helpExamples ends -help.
const helpExamples = `
Examples:
  # Claude Code in its last session, the tests as the check, and a commit
  # after each iteration that passes them
  looprun -check 'go test ./...' -commit -- claude -p --output-format json --resume {session}

  # unattended (cron, CI): wait out cooldowns and the call budget, give up
  # after 3 opens, the result as JSON on stdout
  looprun -wait -max-opens 3 -quiet -json -- ./agent.sh > result.json

  # the flags of ralph-claude-code and ralph-starter
  looprun --calls 50 --circuit-breaker-failures 2 --validate 'npm test' -plan fix_plan.md -- ./agent.sh

  # the breaker inside Claude Code's own session, per tool call, through its
  # hooks in .claude/settings.json (looprun hook -help)
  looprun hooks install -max-cost 20
`

// usage writes -help: what looprun does, its flags (the aliases apart),
// where settings come from, the table's legend, the exit codes and
// examples.
func usage(w io.Writer, fs *flag.FlagSet, ts *thresholdflags.Set) {
	fmt.Fprint(w, helpIntro)
	fmt.Fprintln(w, "\nFlags:")
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	own.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if !ts.IsAlias(f.Name) {
			own.Var(f.Value, f.Name, f.Usage)
			own.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	own.PrintDefaults()
	fmt.Fprintln(w, "\nAliases, as ralph-claude-code and ralph-starter name them:")
	for _, a := range ts.Aliases() {
		fmt.Fprintf(w, "  --%-26s %s\n", a[0], strings.TrimPrefix(fs.Lookup(a[0]).Usage, "alias of "))
	}
	fmt.Fprint(w, helpSettings, helpTable, helpExitCodes, helpExamples)
}
