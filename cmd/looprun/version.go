package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/looprun"
)

// versionRequested reports whether the command line asks for looprun's
// version: -version (or --version) alone.
func versionRequested(args []string) bool {
	return len(args) == 1 && (args[0] == "-version" || args[0] == "--version")
}

// writeVersion writes looprun's version, from the build information the
// go command stamps into the binary: the module's version for one
// installed with `go install .../cmd/looprun@v0.1.0`, "(devel)" for one
// built in a clone of the repository.
func writeVersion(w io.Writer, info *debug.BuildInfo, ok bool) {
	version := "(unknown)"
	if ok && info.Main.Version != "" {
		version = info.Main.Version
	}
	fmt.Fprintln(w, "looprun", version)
}

// withVersionFlag lists -version in looprun's flags (-h shows it), and
// refuses it beside other arguments: alone, main answers it before the
// loop starts.
func withVersionFlag(opts looprun.Options) looprun.Options {
	var version bool
	flags, newBreaker := opts.Flags, opts.NewBreaker
	opts.Flags = func(fs *flag.FlagSet) {
		if flags != nil {
			flags(fs)
		}
		fs.BoolVar(&version, "version", false, "print looprun's version and exit (alone)")
	}
	opts.NewBreaker = func(setup looprun.Setup) (looprun.Breaker, string, error) {
		if version {
			return nil, "", &looprun.UsageError{Err: fmt.Errorf("-version takes no other flags or arguments: looprun -version")}
		}
		if newBreaker == nil {
			return nil, "", nil
		}
		return newBreaker(setup)
	}
	return opts
}
