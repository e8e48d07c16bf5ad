package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// story is a night of a loop, run on a real breaker and told by the
// journal's recorder, as looprun tells it: it went well, then met the
// same error until the circuit opened, probed and opened again until the
// breaker gave up; a person skipped the task; a provider limit was waited
// out; the spend went past 80% of its cap.
type story struct {
	dir   string // the state directory
	loop  string
	stats loopbreaker.Stats
	clock *fakeClock
}

const storyError = "--- FAIL: TestLogin (0.01s)\n    login_test.go:12: want 200, got 500"

func newStory(t testing.TB) *story {
	t.Helper()
	return tellStory(t, t.TempDir(), 0)
}

// tellStory tells the story in dir, with extra iterations that pass at
// its end (for a big journal), and returns it.
func tellStory(t testing.TB, root string, extra int) *story {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 19, 22, 0, 0, 0, time.UTC)}
	st := &story{dir: filepath.Join(root, ".loopbreaker"), loop: "loop", clock: clock}
	cfg := loopbreaker.DefaultConfig()
	cfg.Now = clock.now
	cfg.Cooldown = 10 * time.Minute
	cfg.MaxConsecutiveOpens = 3
	cfg.Spend.MaxCostUSD = 10
	cb, err := loopbreaker.New(cfg)
	require.NoError(t, err)
	rec := journal.NewRecorder(journal.RecorderConfig{
		Journal: journal.NewWriter(journal.Path(st.dir, st.loop)),
		Failed:  func(err error) { t.Errorf("journal: %v", err) },
		Base:    journal.Entry{Loop: st.loop, Dir: root, Host: "build-7", Source: journal.FromLooprun},
		Now:     clock.now,
	}, cb.Stats())
	rec.Started(journal.Start{Command: "claude -p --output-format json", MaxCostUSD: 10}, cb.Stats())
	logs := filepath.Join(st.dir, "logs")
	require.NoError(t, os.MkdirAll(logs, 0o700))

	iteration := func(err error, cost float64, task string, took time.Duration) {
		d := cb.Check()
		if !d.Allow {
			t.Fatalf("refused at %s: %v", clock.t, d.Reason)
		}
		started := clock.t
		clock.advance(took)
		it := loopbreaker.Iteration{Err: err, Task: task, Usage: loopbreaker.Usage{CostUSD: cost, InputTokens: int(cost * 10000), OutputTokens: 500},
			Progress: &loopbreaker.Progress{FilesChanged: 1, OutputLength: 2000}}
		cb.Record(it)
		s := cb.Stats()
		n := s.Iterations
		run := journal.Run{Result: journal.ResultOK, Probe: d.Probe, Started: started, Duration: took, Files: 1,
			Score: s.Progress.LastScore, Risk: s.Risk.String(), Consecutive: s.Failures.Consecutive, Failures: s.Failures.Total,
			CostUSD: cost, Tokens: it.Usage.Tokens(), Task: task}
		var le *loopbreaker.LimitError
		switch {
		case errors.As(err, &le):
			run.Result = journal.ResultLimited
			n = s.Iterations + 1
		case err != nil:
			run.Result, run.Fingerprint, run.Error, run.ErrorFrom = journal.ResultFailed, loopbreaker.Fingerprint(err.Error()), err.Error(), "check"
		}
		log := filepath.Join(logs, fmt.Sprintf("%s-%d.log", st.loop, n))
		require.NoError(t, os.WriteFile(log, []byte("the agent's output of iteration "+fmt.Sprint(n)+"\n"), 0o600))
		run.Log = "logs/" + filepath.Base(log)
		rec.Iteration(n, run, s, func() *journal.Stuck {
			return &journal.Stuck{Fingerprint: s.Failures.LastFingerprint, Seen: s.Failures.Counts[s.Failures.LastFingerprint],
				Error: storyError, ErrorFrom: "the check, go test ./...", Task: s.Failures.Task, TaskFailures: s.Failures.TaskFailures,
				Score: s.Progress.LastScore, Risk: s.Risk.String(),
				Try:     []string{"change the approach entirely", "look for a known issue or a workaround for this error"},
				TryFrom: "superkit's recovery strategies for the same error"}
		})
		clock.advance(5 * time.Second)
	}
	failing := errors.New(storyError)

	iteration(nil, 0.40, "signup form", 3*time.Minute)
	iteration(nil, 0.55, "signup form", 4*time.Minute)
	for range 3 { // the same error: the circuit opens on the third failure in a row
		iteration(failing, 0.30, "login form", 2*time.Minute)
	}
	for range 2 { // the probe fails twice more: the breaker gives up
		clock.advance(cfg.Cooldown)
		rec.Observe(cb.Stats(), nil)
		iteration(failing, 0.30, "login form", 2*time.Minute)
	}
	// In the morning a person skips the task.
	clock.advance(7 * time.Hour)
	cb.Skip()
	rec.Observe(cb.Stats(), nil)
	iteration(nil, 0.80, "logout", 5*time.Minute)
	// The provider's limit, waited out for half an hour.
	reset := clock.t.Add(30 * time.Minute)
	iteration(&loopbreaker.LimitError{Limit: loopbreaker.Limit{Kind: loopbreaker.LimitWait, Reset: reset, Why: "You've hit your limit · resets 8:04am"}}, 0, "logout", 20*time.Second)
	clock.t = reset
	rec.LimitWaited(30*time.Minute, "lifted", cb.Stats())
	// The spend goes past 80% of its $10.
	for i := range 4 + extra {
		cost := 1.2
		if i >= 4 {
			cost = 0.0001
		}
		iteration(nil, cost, "logout", time.Duration(3+i%4)*time.Minute)
	}
	rec.Ended(journal.Exit{Code: 6, Name: "limit", Stopped: "20 iterations run (-max-iterations)", Iterations: 20, TotalIterations: cb.Stats().Iterations}, cb.Stats())
	require.NoError(t, loopbreaker.NewFileStore(st.dir).Save(context.Background(), st.loop, cb.Snapshot()))
	st.stats = cb.Stats()
	return st
}
