// Command fleet runs several worker processes that share one breaker on
// Redis. Each worker runs a made-up agent loop; after a few iterations the
// tool they all use breaks, every worker fails, and the failures of the
// whole fleet open one circuit: every worker stops at its next Check, with
// the same reason.
//
//	go run ./examples/fleet -redis redis://127.0.0.1:6379/0 -workers 4
//	go run ./examples/fleet -redis unix:///run/redis/redis.sock
//
// The same binary is both parts: without -worker it starts the workers
// (itself, with -worker NAME) and prints the fleet's state when they are
// done. With -looprun, a looprun joins them as one more worker (with
// -redis and -fleet), running a shell agent that meets the same broken
// database:
//
//	go build -o /tmp/looprun ./cmd/looprun
//	go run ./examples/fleet -redis redis://127.0.0.1:6379/0 -looprun /tmp/looprun
//
// The example is a module of its own: it requires the looprun module (as
// a tool, for its test), which requires redisstore, so it cannot live in
// redisstore without a cycle of modules.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/redisstore"
	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	flags := flag.NewFlagSet("fleet", flag.ContinueOnError)
	url := flags.String("redis", "redis://127.0.0.1:6379/0", "the Redis that holds the fleet's breaker (redis://, rediss:// or unix://)")
	name := flags.String("fleet", "example", "the fleet's name: workers with the same name share one breaker")
	workers := flags.Int("workers", 3, "how many worker processes to start")
	worker := flags.String("worker", "", "run as the worker of this name (the workers are started with it)")
	looprun := flags.String("looprun", "", "the path of a looprun binary, to start as one more worker of the fleet")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *worker != "" {
		return runWorker(*url, *name, *worker, out)
	}
	return runFleet(*url, *name, *workers, *looprun, out)
}

// fleetWorker returns a worker of the fleet name on the Redis at url.
func fleetWorker(url, name, worker string) (*redisstore.Worker, *redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	opts.ContextTimeoutEnabled = true // so that each call is bounded
	client := redis.NewClient(opts)
	w, err := redisstore.New(redisstore.Config{
		Client:  client,
		Name:    name,
		Worker:  worker,
		Breaker: loopbreaker.Config{Cooldown: time.Minute},
	})
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return w, client, nil
}

// runFleet starts the workers, waits for them, and prints the fleet's state.
func runFleet(url, name string, workers int, looprun string, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	w, client, err := fleetWorker(url, name, "supervisor")
	if err != nil {
		return err
	}
	defer client.Close()
	w.Reset() // a fresh breaker for the demonstration

	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(self, "-redis", url, "-fleet", name, "-worker", fmt.Sprintf("worker-%d", i+1))
			output, err := cmd.CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			out.Write(output)
			errs[i] = err
		}()
	}
	if looprun != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runLooprun(looprun, url, name, out, &mu)
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}()
	}
	wg.Wait()
	s := w.Stats()
	fmt.Fprintf(out, "fleet %q: %s, %d failures in a row across the fleet: %s\n", name, s.State, s.Failures.Consecutive, s.Reason)
	return errors.Join(errs...)
}

// runWorker runs one worker's loop until the fleet's breaker stops it.
func runWorker(url, name, worker string, out io.Writer) error {
	w, client, err := fleetWorker(url, name, worker)
	if err != nil {
		return err
	}
	defer client.Close()
	for i := 1; i <= 20; i++ {
		d := w.Check()
		if !d.Allow {
			fmt.Fprintf(out, "%s: stopped before iteration %d: %s\n", worker, i, d.Reason)
			return nil
		}
		var err error
		if i > 2 {
			err = errors.New("dial tcp db.internal:5432: connection refused") // the shared database is down
		}
		w.Record(loopbreaker.Iteration{Err: err})
		time.Sleep(20 * time.Millisecond) // the agent's work
	}
	fmt.Fprintf(out, "%s: ran 20 iterations\n", worker)
	return nil
}

// runLooprun runs looprun as a worker of the fleet, on an agent that fails
// as the others do, and prints how it stopped. Its state and logs go to a
// directory of its own, removed after.
func runLooprun(looprun, url, name string, out io.Writer, mu *sync.Mutex) error {
	dir, err := os.MkdirTemp("", "fleet-looprun")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	agent := `sleep 0.05; echo "Error: dial tcp db.internal:5432: connection refused"; exit 1`
	cmd := exec.Command(looprun, "-redis", url, "-fleet", name, "-worker", "looprun",
		"-dir", dir, "-interactive", "no", "-quiet", "-max-iterations", "20", "--", "sh", "-c", agent)
	output, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		err = nil // 3: stopped by the open circuit, as the fleet should be
	}
	mu.Lock()
	defer mu.Unlock()
	for _, line := range strings.Split(string(output), "\n") {
		if strings.HasPrefix(line, "stopped:") {
			fmt.Fprintf(out, "looprun: %s\n", line)
		}
	}
	if err != nil {
		return fmt.Errorf("looprun: %w\n%s", err, output)
	}
	return nil
}
