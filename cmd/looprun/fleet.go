package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/looprun"
	"github.com/loopbreaker/loopbreaker/redisstore"
	"github.com/redis/go-redis/v9"
)

// A fleet on Redis: with -redis, the loop asks a breaker that many runners
// (and other workers of package redisstore) share, instead of one of its
// own. The package comment says what changes.

// fleetOptions adds the fleet's flags to looprun's, and, when -redis is
// given, makes its breaker a worker of the fleet they name.
func fleetOptions() looprun.Options {
	f := &fleetFlags{}
	return looprun.Options{
		Flags:      f.register,
		Settable:   []string{"redis", "fleet", "redis-timeout", "fail-closed"},
		NewBreaker: f.newWorker,
	}
}

// fleetOnly are the flags that mean something only on a fleet.
var fleetOnly = []string{"redis", "fleet", "worker", "redis-timeout", "fail-closed"}

type fleetFlags struct {
	fs         *flag.FlagSet
	redisURL   string
	fleet      string
	worker     string
	timeout    time.Duration
	failClosed bool
}

func (f *fleetFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.redisURL, "redis", "", "the Redis of a fleet's breaker: redis://[user:password@]host:port/db, rediss:// or unix:///path")
	fs.StringVar(&f.fleet, "fleet", "loop", "the fleet: runners of one name share a breaker")
	fs.StringVar(&f.worker, "worker", "", "this runner's name in the fleet [host, pid and a random suffix]")
	fs.DurationVar(&f.timeout, "redis-timeout", redisstore.DefaultTimeout, "the longest a call to Redis may take")
	fs.BoolVar(&f.failClosed, "fail-closed", false, "refuse every iteration while Redis is out of reach")
}

// newWorker is looprun's NewBreaker: a worker of the fleet, or, without
// -redis, nil for the process's own breaker.
func (f *fleetFlags) newWorker(setup looprun.Setup) (looprun.Breaker, string, error) {
	usage := func(format string, args ...any) (looprun.Breaker, string, error) {
		return nil, "", &looprun.UsageError{Err: fmt.Errorf(format, args...)}
	}
	if f.redisURL == "" {
		var set []string
		f.fs.Visit(func(fl *flag.Flag) {
			if fl.Name != "redis" && slices.Contains(fleetOnly, fl.Name) {
				set = append(set, "-"+fl.Name)
			}
		})
		if len(set) > 0 {
			return usage("%s %s only on a fleet: give -redis, the URL of the Redis that holds the fleet's breaker (redis://host:6379/0, unix:///path/redis.sock)", strings.Join(set, ", "), plural(len(set), "applies", "apply"))
		}
		return nil, "", nil
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
	return &fleetWorker{Worker: w, client: client, timeout: f.timeout, fleet: f.fleet, redis: describe(opts)}, about, nil
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
	fleet   string // its name
	redis   string // its Redis, without user or password
}

// Fleet returns the fleet's name, for the journal and the report.
func (w *fleetWorker) Fleet() string { return w.fleet }

// Redis returns where the fleet lives, without user or password.
func (w *fleetWorker) Redis() string { return w.redis }

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

var (
	_ looprun.SharedBreaker = (*fleetWorker)(nil)
	_ looprun.FleetMember   = (*fleetWorker)(nil)
)

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
