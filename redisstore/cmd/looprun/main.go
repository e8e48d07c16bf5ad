// Command looprun is looprun on a fleet: the same command, whose loop asks
// a breaker that many runners share on Redis instead of one of its own.
//
//	go install ./redisstore/cmd/looprun      # in a clone of the repository
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
// -name. -reset starts afresh the runner's state and the fleet's breaker
// (its circuit and counts; the calls and the spend stay, as they were
// made), and fails, changing nothing, when Redis is out of reach; every
// runner sees it at its next check. -auto-reset is not applied on a
// fleet: it would release every runner. A runner that finds another's
// probe running stops (exit code 3), or with -wait waits for its outcome.
// The probe's lease lasts twice -timeout and a minute (10 minutes at
// least), so that a slow probe is not taken for a dead one.
//
// When Redis is out of reach, each runner warns once on stderr and goes on
// under its own breaker, as the plain looprun would, and rejoins the fleet
// when Redis answers again; -fail-closed makes it stop instead (it waits,
// with -wait). Every other flag, the settings, the output and the exit
// codes are looprun's: looprun -help lists them, with the fleet's. The
// fleet's flags but -worker may be set in the environment (LOOPRUN_REDIS,
// which keeps a password off the command line, LOOPRUN_FLEET, ...) and in
// .looprunrc, as looprun's own.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

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
		Settable:   []string{"redis", "fleet", "redis-timeout", "fail-closed"},
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
	fs.StringVar(&f.redisURL, "redis", "", "the Redis that holds the fleet's breaker: redis://[user:password@]host:port/db, rediss:// or unix:///path/redis.sock (required; LOOPRUN_REDIS keeps a password off the command line)")
	fs.StringVar(&f.fleet, "fleet", "loop", "the fleet's name: runners and workers with the same name on the same Redis share one breaker")
	fs.StringVar(&f.worker, "worker", "", "this runner's name in the fleet (default: the host name, the process id and a random suffix)")
	fs.DurationVar(&f.timeout, "redis-timeout", redisstore.DefaultTimeout, "the longest a call to Redis may take before the runner goes on under its own breaker")
	fs.BoolVar(&f.failClosed, "fail-closed", false, "refuse every iteration while Redis is out of reach, instead of going on under the runner's own breaker")
}

// newWorker is looprun's NewBreaker: a worker of the fleet.
func (f *fleetFlags) newWorker(setup looprun.Setup) (looprun.Breaker, string, error) {
	usage := func(format string, args ...any) (looprun.Breaker, string, error) {
		return nil, "", &looprun.UsageError{Err: fmt.Errorf(format, args...)}
	}
	if f.redisURL == "" {
		return usage("-redis is required: the URL of the Redis that holds the fleet's breaker (redis://host:6379/0, unix:///path/redis.sock)")
	}
	if _, err := url.Parse(f.redisURL); err != nil {
		// url.Parse's message quotes the URL, and may quote part of a
		// password: none of it is shown.
		return usage("-redis: not a URL; a Redis URL is redis://[user:password@]host:port/db, rediss://... or unix:///path/redis.sock")
	}
	if f.fleet == "" || strings.ContainsAny(f.fleet, "{}") {
		return usage("-fleet must not be empty or hold '{' or '}', not %q", f.fleet)
	}
	if f.timeout <= 0 {
		return usage("-redis-timeout must be positive, not %s", f.timeout)
	}
	opts, err := redis.ParseURL(f.redisURL)
	if err != nil {
		return usage("-redis: %v", err) // go-redis names the part it refused, never the password
	}
	opts.ContextTimeoutEnabled = true // so that -redis-timeout bounds each call
	client := redis.NewClient(opts)
	w, err := redisstore.New(redisstore.Config{
		Client:  client,
		Name:    f.fleet,
		Worker:  f.worker,
		Breaker: setup.Config,
		Timeout: f.timeout,
		// A probe's command and its -check may each run for -timeout: the
		// lease outlasts both, so a slow probe is not taken for a dead one.
		ProbeLease: max(redisstore.DefaultProbeLease, 2*setup.IterationTimeout+time.Minute),
		FailClosed: f.failClosed,
	})
	if err != nil {
		client.Close()
		return nil, "", err // the breaker's config, which looprun checked already
	}
	about := fmt.Sprintf("fleet %q on %s, as worker %s", f.fleet, describe(opts), w.ID())
	return &fleetWorker{Worker: w, client: client, timeout: f.timeout}, about, nil
}

// describe names the Redis of opts without its user or password.
func describe(opts *redis.Options) string {
	if opts.Network == "unix" {
		return "unix://" + opts.Addr
	}
	scheme := "redis"
	if opts.TLSConfig != nil {
		scheme = "rediss"
	}
	return fmt.Sprintf("%s://%s/%d", scheme, opts.Addr, opts.DB)
}

// fleetWorker is a worker of the fleet, as looprun's shared breaker.
type fleetWorker struct {
	*redisstore.Worker
	client  *redis.Client
	timeout time.Duration
}

// ResetShared resets the fleet's breaker, when Redis answers.
func (w *fleetWorker) ResetShared() error {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	if err := w.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("the fleet's Redis is out of reach: %w", err)
	}
	w.Reset()
	return nil
}

// Close closes the connections to Redis.
func (w *fleetWorker) Close() error { return w.client.Close() }

var _ looprun.SharedBreaker = (*fleetWorker)(nil)
