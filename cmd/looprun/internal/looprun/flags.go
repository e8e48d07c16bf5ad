package looprun

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/thresholdflags"
	"github.com/loopbreaker/loopbreaker/protect"
)

// options are the parsed command line.
type options struct {
	cfg           loopbreaker.Config
	argv          []string
	dir           string
	name          string
	prompt        string
	plan          string
	doneMarker    string
	timeout       time.Duration
	maxIterations int
	reset         bool
	wait          bool
	interactive   string   // auto, yes, no
	protect       []string // the protected paths, .loopbreaker/ among them
	maxCost       float64
	maxTokens     int
	costPerMinute float64 // -max-cost-per-minute: the burn rate's cap
	windowShare   int     // -max-window-share: percent of the provider's usage window
	windowStop    bool    // -window-share-stop: stop at it, instead of waiting for the reset
	limitWait     time.Duration
	check         string   // run after each iteration the command passed; "" for none
	commit        bool     // commit the changes of each successful iteration
	quiet         bool     // do not show the command's output
	json          bool     // the result as JSON on stdout, the rest on stderr
	maxOpens      int      // the breaker gives up once the circuit has opened this often in a row (0: never)
	autoReset     bool     // close, at start, a circuit a cooldown would end
	markerGiven   bool     // -done-marker was set, by a flag or a setting
	serve         string   // -serve: the live page's and /metrics' address; "" for none
	notify        []string // -notify: webhooks the events are posted to
	onEvent       string   // -on-event: a command run for each event

	thresholds *thresholdflags.Set
	notes      []string // about the settings read, for stderr
}

// parseFlags reads the command line, and the settings of the
// environment and of the files in -dir (see config.go). Flags given
// explicitly win over everything, and the preset comes last, as in
// ralph-starter.
func parseFlags(args []string, environ []string, opts Options) (*options, error) {
	fs := flag.NewFlagSet("looprun", flag.ContinueOnError)
	// The flag package neither prints the usage nor its errors: -help goes
	// to stdout (helpRequest), and a mistake is one line (flagError).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	o := &options{timeout: 15 * time.Minute}
	thresholds := thresholdflags.Register(fs)
	fs.IntVar(&o.maxIterations, "max-iterations", 0, "stop after this many iterations (simulated agent: 20)")
	fs.Var(minutesFlag{&o.timeout}, "timeout", "time limit of an iteration and -check (a `duration`; N: minutes)")
	fs.StringVar(&o.dir, "dir", ".", "the command's working `dir`ectory")
	fs.StringVar(&o.name, "name", "", "the loop's `name`, naming its state file and logs [loop]")
	fs.StringVar(&o.prompt, "prompt", "PROMPT.md", "`file` in -dir fed to the command on stdin")
	fs.StringVar(&o.plan, "plan", "", "markdown task `file`: '- [x]' done, '- [ ]' to do")
	fs.StringVar(&o.doneMarker, "done-marker", "EXIT_SIGNAL: true", "`text` that is the agent's done signal without a status block")
	fs.BoolVar(&o.reset, "reset", false, "forget the saved state and start afresh")
	fs.BoolVar(&o.wait, "wait", false, "wait out cooldowns and the call budget")
	fs.StringVar(&o.interactive, "interactive", "auto", "ask when the circuit opens: `yes|no|auto` (at a terminal)")
	var protect []string
	protectGiven := false
	fs.Func("protect", "a `path` (file, directory, glob) the agent must not lose (repeatable; replaces "+
		strings.Join(defaultProtected(), " ")+"; "+stateDirName+"/ stays)", func(p string) error {
		protectGiven = true
		protect = append(protect, p)
		return nil
	})
	fs.Float64Var(&o.maxCost, "max-cost", 0, "stop when the loop has cost this many `dollars`")
	fs.IntVar(&o.maxTokens, "max-tokens", 0, "stop when the loop has spent this many tokens")
	fs.Float64Var(&o.costPerMinute, "max-cost-per-minute", 0, "refuse while the loop spends this many `dollars` a minute, over 5 minutes")
	fs.IntVar(&o.windowShare, "max-window-share", 0, "wait for the window's reset at this `percent` of Claude's or Codex's 5-hour or weekly window")
	fs.BoolVar(&o.windowStop, "window-share-stop", false, "at -max-window-share, stop instead of waiting")
	fs.DurationVar(&o.limitWait, "limit-wait", defaultLimitWait, "the longest provider limit waited out (0: none)")
	fs.StringVar(&o.check, "check", "", "a shell `command` run after each passing iteration (go test ./...): it can fail it; its test counts are read")
	fs.BoolVar(&o.commit, "commit", false, "commit each successful iteration's changes (git add -A)")
	fs.BoolVar(&o.quiet, "quiet", false, "do not show the command's output (the log keeps it)")
	fs.BoolVar(&o.json, "json", false, "the result as JSON on stdout; everything else on stderr")
	fs.IntVar(&o.maxOpens, "max-opens", loopbreaker.DefaultConfig().MaxConsecutiveOpens, "openings in a row before giving up (0: never)")
	fs.BoolVar(&o.autoReset, "auto-reset", false, "at start, close a circuit a cooldown would end")
	fs.StringVar(&o.serve, "serve", "", "serve the live page and /metrics at `addr` (a port: on 127.0.0.1)")
	fs.Func("notify", "POST each event as JSON to `url` (Slack-compatible; repeatable)", func(u string) error {
		o.notify = append(o.notify, u)
		return nil
	})
	fs.StringVar(&o.onEvent, "on-event", "", "run `command` for each event, the event on its stdin")
	thresholds.RegisterAliases()
	thresholds.Alias("validate", "check", "ralph-starter")
	thresholds.Alias("auto-reset-circuit", "auto-reset", "ralph-claude-code")
	if opts.Flags != nil {
		opts.Flags(fs)
	}
	thresholds.Settable(append(settable, opts.Settable...)...)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			usage(&b, fs, thresholds)
			return nil, &helpRequest{text: b.String()}
		}
		return nil, flagError(fs, err)
	}
	if !protectGiven {
		protect = defaultProtected()
	}
	o.protect = withStateDir(protect)
	o.argv = fs.Args()
	// A mistyped -dir is the person's mistake, not the command's: it is
	// caught here, before anything is created in it.
	info, err := os.Stat(o.dir)
	if pathErr := (*os.PathError)(nil); errors.As(err, &pathErr) {
		err = pathErr.Err // the path is said once
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("-dir %s: %w", o.dir, err)
	case !info.IsDir():
		return nil, fmt.Errorf("-dir %s: not a directory", o.dir)
	}
	if o.notes, err = readSettings(thresholds, o.dir, environ); err != nil {
		return nil, err
	}
	o.thresholds = thresholds
	o.markerGiven = thresholds.Origin("done-marker") != ""

	if o.interactive != "auto" && o.interactive != "yes" && o.interactive != "no" {
		return nil, fmt.Errorf("-interactive must be auto, yes or no, not %q", o.interactive)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("-timeout must be positive, not %s", o.timeout)
	}
	if o.maxIterations < 0 {
		return nil, fmt.Errorf("-max-iterations must not be negative")
	}
	if !(o.maxCost >= 0 && o.maxCost <= math.MaxFloat64) {
		return nil, fmt.Errorf("-max-cost must be a number of dollars, 0 or more, not %v", o.maxCost)
	}
	if o.maxTokens < 0 {
		return nil, fmt.Errorf("-max-tokens must not be negative")
	}
	if !(o.costPerMinute >= 0 && o.costPerMinute <= math.MaxFloat64) {
		return nil, fmt.Errorf("-max-cost-per-minute must be a number of dollars, 0 or more, not %v", o.costPerMinute)
	}
	if o.windowShare < 0 || o.windowShare > 100 {
		return nil, fmt.Errorf("-max-window-share must be a percent from 1 to 100 (0: none), not %d", o.windowShare)
	}
	if o.limitWait < 0 {
		return nil, fmt.Errorf("-limit-wait must not be negative, not %s", o.limitWait)
	}
	if o.maxOpens < 0 {
		return nil, fmt.Errorf("-max-opens must not be negative")
	}
	if strings.HasPrefix(o.check, "-") {
		// ralph-starter's --validate finds its commands itself; looprun's
		// takes one, and a flag after it took its place.
		return nil, fmt.Errorf("-check (--validate) takes the command to run after each iteration, as in --validate 'npm test', not %q", o.check)
	}
	if o.name == "" {
		o.name = "loop"
		if len(o.argv) == 0 {
			o.name = "simulated"
		}
	}
	if strings.ContainsAny(o.name, `/\`) || o.name == "." || o.name == ".." {
		return nil, fmt.Errorf("-name must be a plain file name, not %q", o.name)
	}

	cfg, err := thresholds.Config()
	if err != nil {
		return nil, err
	}
	if len(o.argv) == 0 && thresholds.Origin("max-iterations") == "" {
		o.maxIterations = 20 // the simulated agent would go on for ever
	}
	cfg.Spend.MaxCostUSD, cfg.Spend.MaxTokens = o.maxCost, o.maxTokens
	cfg.Spend.MaxCostUSDPerMinute = o.costPerMinute
	cfg.Spend.MaxWindowShare, cfg.Spend.StopAtWindowShare = o.windowShare, o.windowStop
	cfg.MaxConsecutiveOpens = o.maxOpens
	if o.maxOpens == 0 {
		cfg.MaxConsecutiveOpens = -1 // never give up
	}
	o.cfg = cfg
	return o, nil
}

// defaultProtected is what looprun protects when -protect is not given:
// the library's list, and looprun's configuration file.
func defaultProtected() []string {
	return append(protect.DefaultPaths(), configFileName)
}
