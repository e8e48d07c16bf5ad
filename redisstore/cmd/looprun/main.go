// Command looprun is looprun on a fleet: the same command, whose loop asks
// a breaker that many runners share on Redis instead of one of its own.
//
//	go install github.com/loopbreaker/loopbreaker/redisstore/cmd/looprun@latest
//	looprun -redis redis://10.0.0.5:6379/0 -fleet agents -- claude -p
//	looprun -redis unix:///run/redis/redis.sock -fleet agents -name w2 -- ./agent.sh
//
// Every looprun (and every other worker, see package redisstore) started
// with the same -fleet on the same Redis shares one circuit: the failures
// and the same errors of the whole fleet count together, one provider
// limit makes every runner wait, the call budget and the spend caps are
// the fleet's, and a person's abort at one runner's prompt stops them all
// (resume or skip at any runner releases them). Each runner keeps its own
// progress, stagnation, task and completion signals, saved in its state
// file between runs: give runners that share a working directory each a
// -name. -reset starts afresh the runner's state and the fleet's (its
// circuit and counts; the calls and spend of the rolling hour stay, as
// they were made): every runner of the fleet sees it at its next check.
//
// When Redis is out of reach, each runner warns once on stderr and goes on
// under its own breaker, as the plain looprun would, and rejoins the fleet
// when Redis answers again; -fail-closed makes it stop instead (it waits,
// with -wait). Every other flag, the settings, the output and the exit
// codes are looprun's: looprun -help lists them, with the fleet's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/looprun"
	"github.com/loopbreaker/loopbreaker/redisstore"
	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(looprun.Main(fleetOptions()))
}

// fleetOptions adds the fleet's flags to looprun's, and makes its breaker
// a worker of the fleet they name.
func fleetOptions() looprun.Options {
	var f fleetFlags
	return looprun.Options{
		Flags:      f.register,
		NewBreaker: f.newWorker,
	}
}

type fleetFlags struct {
	redisURL   string
	fleet      string
	worker     string
	timeout    time.Duration
	failClosed bool
}

func (f *fleetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.redisURL, "redis", "", "the Redis that holds the fleet's breaker: redis://[user:password@]host:port/db, rediss:// or unix:///path/redis.sock (required)")
	fs.StringVar(&f.fleet, "fleet", "loop", "the fleet's name: runners and workers with the same name on the same Redis share one breaker")
	fs.StringVar(&f.worker, "worker", "", "this runner's name in the fleet (default: the host name, the process id and a random suffix)")
	fs.DurationVar(&f.timeout, "redis-timeout", redisstore.DefaultTimeout, "the longest a call to Redis may take before the runner goes on under its own breaker")
	fs.BoolVar(&f.failClosed, "fail-closed", false, "refuse every iteration while Redis is out of reach, instead of going on under the runner's own breaker")
}

// newWorker is looprun's NewBreaker: a worker of the fleet, on cfg.
func (f *fleetFlags) newWorker(cfg loopbreaker.Config) (looprun.Breaker, string, error) {
	if f.redisURL == "" {
		return nil, "", &looprun.UsageError{Err: errors.New("-redis is required: the URL of the Redis that holds the fleet's breaker (redis://host:6379/0, unix:///path/redis.sock)")}
	}
	if _, err := url.Parse(f.redisURL); err != nil {
		var bad *url.Error // its message quotes the URL, password and all
		if errors.As(err, &bad) {
			err = bad.Err
		}
		return nil, "", &looprun.UsageError{Err: fmt.Errorf("-redis: not a URL: %v", err)}
	}
	if f.fleet == "" || strings.ContainsAny(f.fleet, "{}") {
		return nil, "", &looprun.UsageError{Err: fmt.Errorf("-fleet must not be empty or hold '{' or '}', not %q", f.fleet)}
	}
	opts, err := redis.ParseURL(f.redisURL)
	if err != nil {
		// go-redis's error may quote the URL, password and all.
		why := strings.ReplaceAll(err.Error(), f.redisURL, redacted(f.redisURL))
		return nil, "", &looprun.UsageError{Err: fmt.Errorf("-redis %s: %s", redacted(f.redisURL), why)}
	}
	opts.ContextTimeoutEnabled = true // so that -redis-timeout bounds each call
	client := redis.NewClient(opts)
	w, err := redisstore.New(redisstore.Config{
		Client:     client,
		Name:       f.fleet,
		Worker:     f.worker,
		Breaker:    cfg,
		Timeout:    f.timeout,
		FailClosed: f.failClosed,
	})
	if err != nil {
		client.Close()
		if errors.Is(err, redisstore.ErrInvalidConfig) {
			err = &looprun.UsageError{Err: err}
		}
		return nil, "", err
	}
	// The client lives as long as the process: looprun's last act is to
	// save the state and exit.
	return w, fmt.Sprintf("fleet %q on %s, as worker %s", f.fleet, redacted(f.redisURL), w.ID()), nil
}

// redacted returns the URL, which parses, with its password hidden.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Redacted()
}
