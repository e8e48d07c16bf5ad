package looprun

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/report"
)

// reportUsage is `looprun report -h`.
const reportUsage = `usage: looprun report [-dir DIR] [-name NAME] [-o FILE] [-redis URL -fleet NAME]

Writes the page of a loop: one HTML file that opens in a browser, with
nothing fetched, drawn from the loop's state, journal and logs in
DIR/.loopbreaker/: the timeline of its iterations and of its circuit, the
errors by fingerprint, the spend against its caps, the provider limits
waited, the tasks, what it was stuck on, each iteration's log. Without
-name, every loop of DIR; with -redis, the fleet's shared breaker too.

`

// Report is `looprun report`: it writes the page of the loops of a
// working directory, and returns the exit code (0, 1 when nothing could
// be read or written, 2 for a mistake on the command line).
func Report(opts Options, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("looprun report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", ".", "the loop's working `dir`ectory")
	name := fs.String("name", "", "the loop's `name` (every loop of -dir when not given)")
	out := fs.String("o", "", "the page's `file` (- for stdout) [.loopbreaker/<name>.report.html]")
	if opts.Flags != nil {
		opts.Flags(fs) // a fleet's -redis and -fleet
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, reportUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitDone
		}
		fmt.Fprintf(stderr, "looprun report: %v (looprun report -h lists the flags)\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "looprun report: no arguments, only flags: %q\n", fs.Args())
		return exitUsage
	}
	stateDir := filepath.Join(*dir, stateDirName)
	names := []string{*name}
	if *name == "" {
		names = report.Loops(stateDir)
		if len(names) == 0 {
			fmt.Fprintf(stderr, "looprun report: no loop in %s: neither a state file nor a journal\n", stateDir)
			return exitError
		}
	}
	var loops []*report.Loop
	for _, n := range names {
		l, err := report.Read(stateDir, n)
		if err != nil {
			fmt.Fprintln(stderr, "looprun report:", err)
			return exitError
		}
		loops = append(loops, l)
	}
	fleet, err := readFleet(opts)
	if err != nil {
		fmt.Fprintln(stderr, "looprun report:", err)
		var usage *UsageError
		if errors.As(err, &usage) {
			return exitUsage
		}
		return exitError
	}
	path := *out
	if path == "" {
		base := names[0]
		if len(names) > 1 {
			base = "loops"
		}
		path = filepath.Join(stateDir, base+".report.html")
	}
	o := report.Options{Now: time.Now(), LinkBase: filepath.Dir(path)}
	if path == "-" {
		o.LinkBase = ""
		if err := report.Write(stdout, loops, fleet, o); err != nil {
			fmt.Fprintln(stderr, "looprun report:", err)
			return exitError
		}
		return exitDone
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600) // it quotes the agent's errors
	if err == nil {
		err = report.Write(f, loops, fleet, o)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		fmt.Fprintln(stderr, "looprun report:", err)
		return exitError
	}
	abs, _ := filepath.Abs(path)
	fmt.Fprintf(stdout, "looprun report: wrote %s; open file://%s\n", path, filepath.ToSlash(abs))
	return exitDone
}

// readFleet reads the breaker a fleet shares, when the flags of opts
// (-redis) name one; nil when they do not.
func readFleet(opts Options) (*report.Fleet, error) {
	if opts.NewBreaker == nil {
		return nil, nil
	}
	b, about, err := opts.NewBreaker(Setup{Config: loopbreaker.DefaultConfig(), IterationTimeout: 15 * time.Minute})
	if err != nil || b == nil {
		return nil, err
	}
	if c, ok := b.(io.Closer); ok {
		defer c.Close()
	}
	f := &report.Fleet{Name: about, Redis: about}
	if m, ok := b.(FleetMember); ok {
		f.Name, f.Redis = m.Fleet(), m.Redis()
	}
	f.Stats = b.Stats()
	if p, ok := b.(interface{ Ping() error }); ok {
		if err := p.Ping(); err != nil {
			f.Err = err // out of reach: its Stats are the worker's own
		}
	}
	return f, nil
}
