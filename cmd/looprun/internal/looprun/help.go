package looprun

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
)

// helpIntro opens -help.
const helpIntro = `usage: looprun [flags] [-- command [args...]]

looprun runs the command again and again, as the Ralph loop
'while :; do cat PROMPT.md | agent; done' does, shows and logs its output,
and stops when the loop is stuck, spent or done. Without a command it runs
a built-in simulated agent. The guide is docs/looprun.md.
`

// helpSections are the flags -help lists, by section; a flag that no
// section names (a fleet's, which Options adds) is listed under the last.
var helpSections = []struct {
	title string
	flags []string
}{
	{"Thresholds (not given: the preset's; 0: the default in brackets; negative: off)", []string{
		"preset", "failures", "same-errors", "same-errors-in-a-row", "no-progress", "output-decline",
		"permission-denials", "done-signals", "false-claims", "cooldown", "calls-per-hour",
	}},
	{"Each iteration", []string{"check", "commit", "plan", "prompt", "done-marker", "timeout"}},
	{"When to stop", []string{"max-iterations", "max-opens", "wait", "interactive", "max-cost", "max-tokens", "max-cost-per-minute",
		"max-window-share", "window-share-stop", "limit-wait"}},
	{"Where and how", []string{"dir", "name", "reset", "auto-reset", "protect", "quiet", "json"}},
	{"Watching it (looprun report writes the page; docs/looprun.md)", []string{"serve", "notify", "on-event"}},
	{"A fleet on Redis (docs/fleet.md)", nil},
}

// helpSettings says where settings come from.
const helpSettings = `
Settings: a flag given on the command line wins; else the environment
(LOOPRUN_<FLAG>: LOOPRUN_CALLS_PER_HOUR=50; ralph-claude-code's CB_* too);
else ` + configFileName + ` in -dir (name = value lines: failures = 4); else
ralph-claude-code's .ralphrc in -dir (read, never run); else the preset.
`

// helpTable is the legend of the table looprun prints, a line per
// iteration.
const helpTable = `
The table, a line per iteration: iter, time; state (CLOSED, OPEN, HALF_OPEN:
one probe, WATCH: a signal one iteration short of opening it); result (ok,
FAIL, LIMIT or STOP: a provider limit, *: the probe); files changed; tests
passing/failing (-check's or the status block's); score (superkit's progress
points); risk (LOW, MEDIUM, HIGH); consec and total failures; noprog
(iterations in a row without progress); error (its fingerprint); calls (of
-calls-per-hour in the last hour).
`

// helpExamples ends -help.
const helpExamples = `
Examples:
  looprun -check 'go test ./...' -commit -- claude -p --output-format json --resume {session}
  looprun -wait -max-opens 3 -quiet -json -- ./agent.sh > result.json
  looprun --calls 50 --circuit-breaker-failures 2 --validate 'npm test' -- ./agent.sh
  looprun hooks install -max-cost 20   # the breaker inside Claude Code (looprun hook -h)
  looprun report                       # the page of the loop: .loopbreaker/loop.report.html
`

// helpWidth is the width -help wraps its lines to; helpColumn is where a
// flag's description starts.
const (
	helpWidth  = 79
	helpColumn = 24
)

// usage writes -help: what looprun does, its flags by section (the
// aliases on a line), the presets, where settings come from, the table's
// legend, the exit codes and examples.
func usage(w io.Writer, fs *flag.FlagSet, ts *thresholdflags.Set) {
	fmt.Fprint(w, helpIntro)
	listed := map[string]bool{}
	for i, sec := range helpSections {
		names := sec.flags
		if i == len(helpSections)-1 {
			fs.VisitAll(func(f *flag.Flag) {
				if !listed[f.Name] && !ts.IsAlias(f.Name) && !slices.Contains(names, f.Name) {
					names = append(names, f.Name)
				}
			})
		}
		if len(names) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", sec.title)
		for _, name := range names {
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			listed[name] = true
			writeFlag(w, f, ts)
		}
	}
	var aliases []string
	for _, a := range ts.Aliases() {
		aliases = append(aliases, "--"+a[0]+" (-"+a[1]+")")
	}
	fmt.Fprintln(w, "\nAliases, as ralph-claude-code and ralph-starter name them:")
	fmt.Fprint(w, wrap("  ", strings.Join(aliases, ", "), 2))
	writePresets(w)
	fmt.Fprint(w, helpSettings, helpTable, helpExitCodes, helpExamples)
}

// writeFlag writes a flag's line: its name and the name of its value, its
// description and, in brackets, its default.
func writeFlag(w io.Writer, f *flag.Flag, ts *thresholdflags.Set) {
	arg, text := flag.UnquoteUsage(f)
	def := f.DefValue
	if what, unset, ok := ts.Describe(f.Name); ok {
		text, def = what, unset
	}
	if f.Name == "preset" {
		text = "the preset the thresholds start from"
	}
	if arg == "int" {
		arg = "N"
	}
	arg = strings.ToUpper(arg)
	switch def {
	case "", "0", "0s", "false", "[]":
	default:
		text += " [" + shortDuration(def) + "]"
	}
	head := "  -" + f.Name
	if arg != "" {
		head += " " + arg
	}
	if len(head) >= helpColumn-1 {
		fmt.Fprintln(w, head)
		head = ""
	}
	fmt.Fprint(w, wrap(fmt.Sprintf("%-*s", helpColumn, head), text, helpColumn))
}

// shortDuration drops the zero units a time.Duration's String ends with:
// 15m0s is 15m, 24h0m0s is 24h; any other text is as it is.
func shortDuration(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// writePresets lists the presets: those that set thresholds each on a
// line with them, the others on one.
func writePresets(w io.Writer) {
	fmt.Fprintln(w, "\nPresets (-preset), as ralph-starter names them:")
	def := loopbreaker.DefaultConfig()
	var plain []string
	for _, name := range loopbreaker.PresetNames() {
		cfg, err := loopbreaker.Preset(name)
		if err != nil {
			continue
		}
		f, s := cfg.Failures.MaxConsecutive, cfg.Failures.MaxSameError
		if name != "feature" && f == def.Failures.MaxConsecutive && s == def.Failures.MaxSameError && cfg.Spend.MaxCallsPerHour == 0 {
			plain = append(plain, name)
			continue
		}
		same := fmt.Sprint(s)
		if s < 0 {
			same = "off"
		}
		fmt.Fprint(w, wrap(fmt.Sprintf("  %-*s", helpColumn-2, name), fmt.Sprintf("failures %d, same-errors %s%s", f, same, presetNote[name]), helpColumn))
	}
	fmt.Fprint(w, wrap("  ", fmt.Sprintf("and %d more with the defaults (%s, ...)", len(plain), strings.Join(plain[:min(len(plain), 4)], ", ")), 2))
}

// presetNote says what else a preset sets.
var presetNote = map[string]string{
	"feature":    " (the defaults)",
	"tool-steps": "; no-progress and output-decline off",
	"autonomous": ", 5 in a row; a progress score, 100 calls an hour, a 30m cooldown that doubles",
}

// wrap writes head and then the words of text, broken into lines of at
// most helpWidth columns at spaces, the lines after the first indented by
// indent spaces. It ends with a newline.
func wrap(head, text string, indent int) string {
	var b strings.Builder
	line := head
	for _, word := range strings.Fields(text) {
		switch {
		case line == head && (head == "" || strings.HasSuffix(head, " ")):
			line += word
		case len(line)+1+len(word) > helpWidth && strings.TrimSpace(line) != "":
			b.WriteString(line + "\n")
			line = strings.Repeat(" ", indent) + word
		default:
			line += " " + word
		}
	}
	b.WriteString(line + "\n")
	return b.String()
}
