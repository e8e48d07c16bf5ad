package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/redistest"
	"github.com/loopbreaker/loopbreaker/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// looprunBin is the fleet's looprun, built once.
var looprunBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fleetrun")
	if err != nil {
		panic(err)
	}
	looprunBin = filepath.Join(dir, "looprun")
	build := exec.Command("go", "build", "-o", looprunBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building looprun: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	failing = `echo "Error: dial tcp db.internal:5432: connection refused"; exit 1`
	working = `echo "made some progress"`
)

// runner runs the fleet's looprun in a directory of its own under root,
// unattended unless stdin is given, and returns its output and exit code.
func runner(t *testing.T, root, name, stdin string, args ...string) (string, int) {
	t.Helper()
	dir := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	interactive := "no"
	if stdin != "" {
		interactive = "yes"
	}
	cmd := exec.Command(looprunBin, append([]string{"-dir", dir, "-worker", name, "-interactive", interactive, "-quiet"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	require.NoError(t, err, out.String())
	return out.String(), 0
}

// worker is a plain worker of the fleet, in the test's own process.
func worker(t *testing.T, sock, fleet string) *redisstore.Worker {
	client := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	w, err := redisstore.New(redisstore.Config{Client: client, Name: fleet, Worker: "test", Timeout: 5 * time.Second})
	require.NoError(t, err)
	return w
}

func TestRunnersOfOneFleetStopTogether(t *testing.T) {
	sock := redistest.Start(t)
	root := t.TempDir()
	fleet := []string{"-redis", "unix://" + sock, "-fleet", "agents", "-max-iterations", "10"}

	// The first runner's agent fails three times in a row: the fleet's
	// circuit opens.
	out, code := runner(t, root, "first", "", append(fleet, "--", "sh", "-c", failing)...)
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, `breaker: fleet "agents" on unix://`+sock+", as worker first")
	assert.Contains(t, out, "stopped: 3 consecutive failures (threshold: 3)")

	// A second runner, whose agent works, is refused at its first check,
	// for the same reason.
	out, code = runner(t, root, "second", "", append(fleet, "--", "sh", "-c", working)...)
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, "iterations: 0 in this run")
	assert.Contains(t, out, "stopped: 3 consecutive failures (threshold: 3)")

	// So is any other worker of the fleet.
	d := worker(t, sock, "agents").Check()
	assert.False(t, d.Allow)
	assert.Equal(t, loopbreaker.ReasonConsecutiveFailures, d.Reason.Kind)

	// Another fleet on the same Redis is not concerned.
	out, code = runner(t, root, "elsewhere", "", "-redis", "unix://"+sock, "-fleet", "other", "-max-iterations", "2", "--", "sh", "-c", working)
	assert.Equal(t, 6, code, "the iterations ran out: %s", out)
}

func TestAnAbortAtOneRunnerStopsEveryRunner(t *testing.T) {
	sock := redistest.Start(t)
	root := t.TempDir()
	fleet := []string{"-redis", "unix://" + sock, "-fleet", "agents", "-max-iterations", "10"}

	out, code := runner(t, root, "first", "abort\n", append(fleet, "--", "sh", "-c", failing)...)
	require.Equal(t, 4, code, out)

	out, code = runner(t, root, "second", "", append(fleet, "--", "sh", "-c", working)...)
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, "iterations: 0 in this run")
	assert.Contains(t, out, "stopped: Aborted: 3 consecutive failures")
	d := worker(t, sock, "agents").Check()
	assert.Equal(t, loopbreaker.ReasonAborted, d.Reason.Kind, "held until a person resumes")

	// A person resumes at a runner's prompt: the fleet goes on.
	out, code = runner(t, root, "second", "resume\n", append(fleet, "-max-iterations", "2", "--", "sh", "-c", working)...)
	assert.Equal(t, 6, code, out)
	assert.Contains(t, out, "resumed")
	assert.True(t, worker(t, sock, "agents").Check().Allow)
}

// The window share and the burn rate are the fleet's: what one worker's
// provider said of its usage window, and what one worker spent, stop a
// runner of the fleet at its first check.
func TestAWindowShareAndABurnRateOfTheFleetStopARunner(t *testing.T) {
	sock := redistest.Start(t)
	root := t.TempDir()
	client := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	spend := loopbreaker.SpendRules{MaxWindowShare: 80, StopAtWindowShare: true, MaxCostUSDPerMinute: 0.5}
	w, err := redisstore.New(redisstore.Config{Client: client, Name: "agents", Worker: "sdk-agent", Timeout: 5 * time.Second,
		Breaker: loopbreaker.Config{Spend: spend}})
	require.NoError(t, err)
	fleet := []string{"-redis", "unix://" + sock, "-fleet", "agents", "-max-iterations", "3", "--", "sh", "-c", working}

	w.ObserveWindow(loopbreaker.Window{Length: 5 * time.Hour, Used: 90, Reset: time.Now().Add(time.Hour), Source: "api.anthropic.com"})
	out, code := runner(t, root, "runner", "", append([]string{"-max-window-share", "80", "-window-share-stop"}, fleet...)...)
	assert.Equal(t, 5, code, out)
	assert.Contains(t, out, "iterations: 0 in this run")
	assert.Contains(t, out, "stopped: Window share cap reached: 90% of the 5-hour window used (cap: 80%); no waiting ends this: resume the loop, or raise the cap")

	w.Resume()
	w.AddUsage(loopbreaker.Usage{CostUSD: 3})
	out, code = runner(t, root, "runner", "", append([]string{"-max-cost-per-minute", "0.5"}, fleet...)...)
	assert.Equal(t, 5, code, out)
	assert.Contains(t, out, "iterations: 0 in this run")
	assert.Contains(t, out, "stopped: Burn rate cap reached: $0.60 a minute over the last 5 minutes (cap: $0.50 a minute); next call in")
}

func TestResetStartsTheFleetAfresh(t *testing.T) {
	sock := redistest.Start(t)
	root := t.TempDir()
	fleet := []string{"-redis", "unix://" + sock, "-fleet", "agents"}

	out, code := runner(t, root, "first", "", append(fleet, "-max-iterations", "10", "--", "sh", "-c", failing)...)
	require.Equal(t, 3, code, out)
	out, code = runner(t, root, "second", "", append(fleet, "-reset", "-max-iterations", "2", "--", "sh", "-c", working)...)
	assert.Equal(t, 6, code, out)
	assert.Contains(t, out, "the shared breaker reset")
	assert.Contains(t, out, "iterations: 2 in this run")
}

func TestARunnersOwnSignalsLastAcrossItsRuns(t *testing.T) {
	sock := redistest.Start(t)
	root := t.TempDir()
	// An agent that changes no file in its git repository makes no
	// progress; three such iterations, across two runs, stop it.
	repo := filepath.Join(root, "first")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	git := exec.Command("git", "init", "-q", repo)
	made, err := git.CombinedOutput()
	require.NoError(t, err, string(made))
	fleet := []string{"-redis", "unix://" + sock, "-fleet", "agents", "--", "sh", "-c", working}

	out, code := runner(t, root, "first", "", append([]string{"-max-iterations", "2"}, fleet...)...)
	require.Equal(t, 6, code, out)
	require.Contains(t, out, "the files changed in git")
	out, code = runner(t, root, "first", "", append([]string{"-max-iterations", "5"}, fleet...)...)
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, "resuming")
	assert.Contains(t, out, "iterations: 1 in this run, 3 in all")
	assert.Contains(t, out, "No progress in 3 consecutive iterations")
}

func TestAnUnreachableRedisLeavesEachRunnerToItself(t *testing.T) {
	root := t.TempDir()
	gone := "unix://" + filepath.Join(root, "no-redis.sock")

	out, code := runner(t, root, "alone", "", "-redis", gone, "-max-iterations", "2", "--", "sh", "-c", working)
	assert.Equal(t, 6, code, "the runner went on under its own breaker: %s", out)
	assert.Contains(t, out, "iterations: 2 in this run")
	assert.Equal(t, 1, strings.Count(out, "WARN"), "it warned once: %s", out)

	out, code = runner(t, root, "closed", "", "-redis", gone, "-fail-closed", "-max-iterations", "2", "--", "sh", "-c", working)
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, "iterations: 0 in this run")

	// -reset cannot reset a fleet it cannot reach: it changes nothing.
	state := filepath.Join(root, "alone", ".loopbreaker", "loop.json")
	require.FileExists(t, state)
	out, code = runner(t, root, "alone", "", "-redis", gone, "-reset", "--", "sh", "-c", working)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "-reset: the shared breaker was not reset, nor anything else: the fleet's Redis is out of reach")
	assert.FileExists(t, state)
}

func TestTheRedisPasswordIsNeverShown(t *testing.T) {
	root := t.TempDir()
	// A Redis that does not answer: the runner goes on alone, and its
	// banner and warning name the server.
	out, code := runner(t, root, "w", "", "-redis", "redis://agent:hunter2@127.0.0.1:1/3", "-max-iterations", "1", "--", "sh", "-c", working)
	assert.Equal(t, 6, code, out)
	assert.Contains(t, out, `breaker: fleet "loop" on redis://127.0.0.1:1/3, as worker w`)
	assert.NotContains(t, out, "hunter2")

	// The URL may come from the environment, off the command line.
	cmd := exec.Command(looprunBin, "-dir", filepath.Join(root, "w"), "-worker", "w", "-interactive", "no", "-quiet", "-max-iterations", "1", "--", "sh", "-c", working)
	cmd.Env = append(os.Environ(), "LOOPRUN_REDIS=rediss://agent:hunter2@127.0.0.1:1/0", "LOOPRUN_FLEET=nightly")
	got, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, string(got))
	assert.Equal(t, 6, exit.ExitCode(), string(got))
	assert.Contains(t, string(got), `breaker: fleet "nightly" on rediss://127.0.0.1:1/0, as worker w`)
	assert.NotContains(t, string(got), "hunter2")
}

func TestBadFleetFlagsAreUsageErrors(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{nil, "-worker applies only on a fleet: give -redis"},
		{[]string{"-fleet", "nightly", "-fail-closed"}, "-fail-closed, -fleet, -worker apply only on a fleet"},
		{[]string{"-redis", "redis://user:hunter2@[::1"}, "-redis: not a URL"},
		{[]string{"-redis", "redis://user:hun/ter2@localhost:6379/0"}, "-redis: not a URL"},
		{[]string{"-redis", "redis://user:hunter2@localhost:6379/x"}, "invalid database number"},
		{[]string{"-redis", "unix:///tmp/r.sock", "-fleet", "a{b}"}, "-fleet must not be empty or hold '{' or '}'"},
		{[]string{"-redis", "unix:///tmp/r.sock", "-redis-timeout", "0s"}, "-redis-timeout must be positive"},
	} {
		out, code := runner(t, root, "bad", "", append(tc.args, "--", "true")...)
		assert.Equal(t, 2, code, out)
		assert.Contains(t, out, tc.says)
		assert.NotContains(t, out, "hunter2", "the password is never shown")
		assert.NotContains(t, out, "ter2", "nor any part of it")
	}
}
