// Package notify sends a loop's events to the person watching it: as a
// JSON POST to a webhook (-notify URL; its text field is what a
// Slack-compatible webhook shows), and to a command (-on-event COMMAND,
// the event on its stdin and in its environment).
//
// A Notifier never holds the loop: Notify queues the event and returns,
// each receiver has a queue and a goroutine of its own, delivering in
// order, with a few attempts for a receiver that is down or busy; a
// receiver that cannot keep up loses its oldest events, and one that
// fails is said once. Deliver is the same, synchronously, for a process
// that lives for one event (the hook inside an agent's session).
package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
	"github.com/loopbreaker/loopbreaker/internal/timer"
)

// A Sink is a receiver of events.
type Sink interface {
	// Send delivers one event, within ctx. An error that is Permanent is
	// not tried again.
	Send(ctx context.Context, e journal.Entry) error
	// String names the receiver for a person, and never says a secret
	// (a webhook's path holds its token): https://hooks.example.com/….
	String() string
}

// Defaults of Config.
const (
	DefaultAttempts = 3
	DefaultBackoff  = 2 * time.Second
	DefaultQueue    = 256
)

// Config is a Notifier's configuration. The zero value of each field is
// its default.
type Config struct {
	// Attempts is how often an event is tried on a receiver before it is
	// given up (DefaultAttempts); Backoff the wait before the second
	// attempt, doubling after (DefaultBackoff).
	Attempts int
	Backoff  time.Duration
	// Queue is how many events a receiver may have waiting; when it is
	// full, the oldest waiting is dropped (DefaultQueue).
	Queue int
	// Sleep waits d, or returns ctx's error when ctx ends first: the
	// clock of the waits between attempts (a timer by default).
	Sleep func(ctx context.Context, d time.Duration) error
	// OnFailure is called the first time a receiver fails an event for
	// good (all attempts failed, or a permanent error), once per
	// receiver: the failure is said once. It runs on the receiver's
	// goroutine.
	OnFailure func(sink Sink, err error)
}

func (c Config) withDefaults() Config {
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.Queue <= 0 {
		c.Queue = DefaultQueue
	}
	if c.Sleep == nil {
		c.Sleep = timer.Sleep
	}
	return c
}

// Notifier sends events to receivers in the background. It is safe for
// concurrent use.
type Notifier struct {
	cfg    Config
	queues []*queue
	ctx    context.Context // ends when Close gives up waiting
	cancel context.CancelFunc
}

// New returns a Notifier of sinks, each with its own goroutine, until
// Close.
func New(cfg Config, sinks ...Sink) *Notifier {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{cfg: cfg, ctx: ctx, cancel: cancel}
	for _, s := range sinks {
		q := &queue{sink: s, wake: make(chan struct{}, 1), done: make(chan struct{})}
		n.queues = append(n.queues, q)
		go n.deliver(q)
	}
	return n
}

// Notify queues e for every receiver and returns at once.
func (n *Notifier) Notify(e journal.Entry) {
	for _, q := range n.queues {
		q.push(e, n.cfg.Queue)
	}
}

// Stats are what one receiver was sent.
type Stats struct {
	Sink      string
	Delivered int
	// Failed counts the events given up after every attempt; Dropped
	// those dropped from a full queue, or still waiting when Close gave
	// up.
	Failed, Dropped int
	// FirstError is the first failure's error; nil when none failed.
	FirstError error
}

// Stats returns each receiver's counts, in the order of New's sinks.
func (n *Notifier) Stats() []Stats {
	out := make([]Stats, len(n.queues))
	for i, q := range n.queues {
		q.mu.Lock()
		out[i] = q.stats
		out[i].Sink = q.sink.String()
		q.mu.Unlock()
	}
	return out
}

// Close stops taking events and waits for those queued to be delivered,
// or for ctx to end: then the events still waiting are dropped, and
// deliveries under way are cancelled. It returns once every receiver's
// goroutine has ended.
func (n *Notifier) Close(ctx context.Context) {
	for _, q := range n.queues {
		q.close()
	}
	all := make(chan struct{})
	go func() {
		for _, q := range n.queues {
			<-q.done
		}
		close(all)
	}()
	select {
	case <-all:
	case <-ctx.Done():
		n.cancel()
		<-all
	}
	n.cancel()
}

// queue is one receiver's events waiting.
type queue struct {
	sink   Sink
	wake   chan struct{} // a token when events or the close are waiting
	done   chan struct{} // closed when the goroutine has ended
	mu     sync.Mutex
	events []journal.Entry
	closed bool
	failed bool // OnFailure was called
	stats  Stats
}

func (q *queue) push(e journal.Entry, limit int) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if len(q.events) >= limit {
		q.events = q.events[1:]
		q.stats.Dropped++
	}
	q.events = append(q.events, e)
	q.mu.Unlock()
	q.signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next returns the next event, and false once the queue is closed and
// empty, or ctx ended (the events left are counted as dropped).
func (q *queue) next(ctx context.Context) (journal.Entry, bool) {
	for {
		q.mu.Lock()
		switch {
		case ctx.Err() != nil:
			q.stats.Dropped += len(q.events)
			q.events = nil
			q.mu.Unlock()
			return journal.Entry{}, false
		case len(q.events) > 0:
			e := q.events[0]
			q.events = q.events[1:]
			q.mu.Unlock()
			return e, true
		case q.closed:
			q.mu.Unlock()
			return journal.Entry{}, false
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
		}
	}
}

// deliver is a receiver's goroutine: it sends the queue's events in
// order until the queue is closed and empty.
func (n *Notifier) deliver(q *queue) {
	defer close(q.done)
	for {
		e, ok := q.next(n.ctx)
		if !ok {
			return
		}
		err := send(n.ctx, q.sink, e, n.cfg.Attempts, n.cfg.Backoff, n.cfg.Sleep)
		q.mu.Lock()
		switch {
		case err == nil:
			q.stats.Delivered++
		case n.ctx.Err() != nil:
			q.stats.Dropped++ // Close gave up on it
			err = nil
		default:
			q.stats.Failed++
			if q.stats.FirstError == nil {
				q.stats.FirstError = err
			}
		}
		say := err != nil && !q.failed && n.cfg.OnFailure != nil
		if err != nil {
			q.failed = true
		}
		q.mu.Unlock()
		if say {
			n.cfg.OnFailure(q.sink, err)
		}
	}
}

// Deliver sends e to every sink, one after the other, with the attempts
// and waits of cfg, within ctx, and returns the errors of those that
// failed, joined. It is for a process that lives for one event: give it
// a ctx with a deadline short enough not to hold what waits for it.
func Deliver(ctx context.Context, cfg Config, e journal.Entry, sinks ...Sink) error {
	cfg = cfg.withDefaults()
	var errs []error
	for _, s := range sinks {
		if err := send(ctx, s, e, cfg.Attempts, cfg.Backoff, cfg.Sleep); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s, err))
		}
	}
	return errors.Join(errs...)
}

// send tries e on s up to attempts times, waiting backoff (doubling)
// between attempts, unless an error is permanent or ctx ends.
func send(ctx context.Context, s Sink, e journal.Entry, attempts int, backoff time.Duration, sleep func(context.Context, time.Duration) error) error {
	var err error
	for i := range attempts {
		if i > 0 {
			if serr := sleep(ctx, backoff); serr != nil {
				return err
			}
			backoff *= 2
		}
		if err = s.Send(ctx, e); err == nil || isPermanent(err) || ctx.Err() != nil {
			return err
		}
	}
	if attempts > 1 {
		return fmt.Errorf("%w (%d attempts)", err, attempts)
	}
	return err
}

// permanent marks an error that another attempt would not change.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent returns err marked as one that another attempt would not
// change (a webhook that answers 404, a command that exits 1).
func Permanent(err error) error { return permanent{err} }

func isPermanent(err error) bool { return errors.As(err, new(permanent)) }
