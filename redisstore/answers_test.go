package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lostAnswers is a go-redis hook that lets Redis run a worker's call and
// then loses its answer, as a timeout or a dropped connection does after
// the command went out.
type lostAnswers struct {
	mu   sync.Mutex
	lose map[string]int // by the script's operation: how many answers to lose
}

func (l *lostAnswers) DialHook(next redis.DialHook) redis.DialHook { return next }
func (l *lostAnswers) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (l *lostAnswers) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if err != nil || len(args) < 4 {
			return err
		}
		// EVALSHA sha numkeys key... op: the op follows the keys.
		n, _ := args[2].(int)
		if len(args) <= 3+n {
			return err
		}
		op, _ := args[3+n].(string)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.lose[op] > 0 {
			l.lose[op]--
			lost := errors.New("read tcp 127.0.0.1:41234->127.0.0.1:6379: i/o timeout")
			cmd.SetErr(lost)
			return lost
		}
		return err
	}
}

// A Check that Redis ran, reserving the iteration's call, but whose answer
// was lost: the worker goes on under its local breaker, and when it
// rejoins, the call is not added again. Three one-call iterations, three
// calls.
func TestACallWhoseAnswerWasLostCountsOnce(t *testing.T) {
	f := newFleet(t)
	hook := &lostAnswers{lose: map[string]int{}}
	f.client.AddHook(hook)
	w := f.worker("a", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 100}}})
	other := f.worker("b", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCallsPerHour: 100}}})

	require.True(t, w.Check().Allow)
	w.Record(loopbreaker.Iteration{Calls: 1})

	hook.mu.Lock()
	hook.lose["check"] = 1
	hook.mu.Unlock()
	d := w.Check()
	require.True(t, d.Allow, "the local breaker decides")
	w.Record(loopbreaker.Iteration{Calls: 1})

	f.clock.Advance(DefaultRetryInterval)
	require.True(t, w.Check().Allow, "rejoined")
	w.Record(loopbreaker.Iteration{Calls: 1})
	assert.Equal(t, 3, other.Stats().Budget.Used)
}

// What the fleet's state holds on Redis is checked as it is read: a state
// that is none, a count that is no number, a spend that is garbled make
// the state out of reach (the worker logs why and decides alone, or
// refuses with FailClosed), never a zero or a state of no name.
func TestAGarbledFleetStateIsAnOutageNotAZero(t *testing.T) {
	for _, field := range []struct{ name, value, says string }{
		{"st", "7", "st of {loopbreaker:"},
		{"scost", "twelve dollars", "scost of {loopbreaker:"},
		{"cf", "3x", "cf of {loopbreaker:"},
	} {
		t.Run(field.name, func(t *testing.T) {
			f := newFleet(t)
			w := f.worker("a", Config{Breaker: loopbreaker.Config{Spend: loopbreaker.SpendRules{MaxCostUSD: 20}}})
			closed := f.worker("b", Config{FailClosed: true})
			require.True(t, w.Check().Allow)
			w.Record(loopbreaker.Iteration{Usage: loopbreaker.Usage{CostUSD: 5}})
			require.NoError(t, f.client.HSet(context.Background(), keysOf(f.name)[0], field.name, field.value).Err())

			d := w.Check()
			assert.True(t, d.Allow, "the worker's local breaker decides")
			assert.Contains(t, f.logged(), "out of reach")
			assert.Contains(t, f.logged(), field.says)
			assert.NotEqual(t, loopbreaker.State(7), w.Stats().State)

			d = closed.Check()
			require.ErrorIs(t, d.Err(), loopbreaker.ErrUnavailable)
			assert.Contains(t, d.Reason.Message, field.says)
		})
	}
}

// A worker that cannot reach Redis names the address it tried, never a
// password.
func TestAWorkerOutOfReachNamesTheAddress(t *testing.T) {
	opts, err := redis.ParseURL("redis://agent:s3cret@127.0.0.1:1/0")
	require.NoError(t, err)
	opts.MaxRetries, opts.ContextTimeoutEnabled = -1, true
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	var log strings.Builder
	w, err := New(Config{Client: client, Name: "nowhere", Worker: "a", FailClosed: true,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	d := w.Check()
	require.ErrorIs(t, d.Err(), loopbreaker.ErrUnavailable)
	assert.Contains(t, d.Reason.Message, "redis at 127.0.0.1:1: ")
	assert.Contains(t, log.String(), "redis at 127.0.0.1:1: ")
	assert.NotContains(t, log.String()+d.Reason.Message, "s3cret")
}
