package loopbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeLoop is the loop README.md shows, line for line from `cb, err :=
// loopbreaker.New(cfg)` on (TestTheREADMEShowsTheTestedLoop holds the two
// together); only cfg is the caller's, with the test's clock.
func readmeLoop(ctx context.Context, cfg loopbreaker.Config, agent *stuckAgent) error {
	// README:begin
	cb, err := loopbreaker.New(cfg)
	if err != nil {
		return err
	}
	for {
		if _, err := cb.Wait(ctx); err != nil { // sleeps out cooldowns and limits
			return err // no waiting helps: stuck for good (ErrGaveUp), done, stopped, ctx ended
		}
		res, err := agent.Step(ctx)
		cb.Record(loopbreaker.Iteration{
			Err:      err,
			Progress: &loopbreaker.Progress{FilesChanged: res.Files, OutputLength: len(res.Output)}, // or nil
		})
	}
	// README:end
}

// stepResult is what one of the agent's steps did.
type stepResult struct {
	Files  int
	Output string
}

// stuckAgent fails every step with the same test failure, at a line that
// moves, and changes nothing.
type stuckAgent struct{ steps int }

func (a *stuckAgent) Step(context.Context) (stepResult, error) {
	a.steps++
	return stepResult{Output: "npm test\n1 failing"},
		fmt.Errorf("AssertionError: expected 404 to equal 200 at Context.<anonymous> (test/api.test.js:%d:19)", 40+a.steps)
}

// A newcomer's loop, exactly as README.md shows it, around an agent stuck
// on one error: it ends by itself, within minutes of the breaker's clock,
// with an error that says the breaker gave up and why.
func TestTheREADMELoopStopsAStuckAgent(t *testing.T) {
	clock := loopbreakertest.NewClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	cfg := loopbreaker.DefaultConfig()
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	agent := &stuckAgent{}
	start := clock.Now()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a real-time backstop only
	defer cancel()
	err := readmeLoop(ctx, cfg, agent)

	require.ErrorIs(t, err, loopbreaker.ErrGaveUp)
	var open *loopbreaker.RefusedError
	require.True(t, errors.As(err, &open))
	assert.Equal(t, loopbreaker.ReasonGaveUp, open.Reason.Kind)
	assert.Contains(t, err.Error(), "Gave up: the circuit opened 10 times in a row without recovering (threshold: 10)")
	assert.Contains(t, open.Reason.Detail(), "AssertionError: expected 404 to equal 200", "the reason quotes the error")
	assert.LessOrEqual(t, agent.steps, 12, "three failures, then a probe after each cooldown")
	assert.LessOrEqual(t, clock.Now().Sub(start), 5*time.Minute, "the breaker's clock, not the wall's")
	assert.NoError(t, ctx.Err(), "it ended by itself")
}

// README.md's loop is the one the test above runs: the Go block of its
// section "The loop", from `cb, err := loopbreaker.New(cfg)` on, is
// readmeLoop's body.
func TestTheREADMEShowsTheTestedLoop(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## The loop\n")
	require.True(t, ok, "README.md has a section \"The loop\"")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	require.NotEmpty(t, lines)
	require.Equal(t, "cfg := loopbreaker.DefaultConfig() // or: cfg, err := loopbreaker.Preset(\"refactor\")", lines[0],
		"the block starts with the config, which the test replaces by its own")

	src, err := os.ReadFile("readme_test.go")
	require.NoError(t, err)
	_, body, _ := strings.Cut(string(src), "\t// README:begin\n")
	body, _, _ = strings.Cut(body, "\t// README:end\n")
	var tested []string
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		tested = append(tested, strings.TrimPrefix(line, "\t"))
	}
	assert.Equal(t, tested, lines[1:])
}
