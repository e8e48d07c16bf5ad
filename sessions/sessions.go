// Package sessions keeps a loopbreaker breaker per conversation, for a host
// that serves many of them at once: a chat server, or an agent framework
// whose runner takes user after user and session after session. Each
// session's breaker is made on first use (restored from a
// [loopbreaker.Store] when one is given), kept while the session is in
// use, and freed when the host ends the session, when it has been idle
// for [Options.IdleTimeout], or when [Options.MaxSessions] more recent
// ones need the room; a freed session is saved first, so that it comes
// back as it was.
//
// A [Session] also knows the steps of a tool-calling model turn, so that
// every framework adapter (github.com/loopbreaker/loopbreaker/frameworks/...)
// and a hand-written chat loop wire the breaker in the same way:
//
//	sess, err := set.Get(ctx, userID+"/"+chatID)
//	...
//	sess.UserMessage()                      // a new message from the person
//	for {
//		if err := sess.BeforeModel(ctx); err != nil {
//			return err // stuck, a spend cap, a limit that outlasts ctx: errors.Is(err, loopbreaker.ErrOpen), ...
//		}
//		resp, err := callModel(ctx)
//		if err != nil {
//			sess.ModelFailed(err)
//			return err
//		}
//		sess.AfterModel(sessions.Turn{Calls: resp.Calls, Text: resp.Text, Usage: resp.Usage})
//		if len(resp.Calls) == 0 {
//			return nil // the answer
//		}
//		for _, call := range resp.Calls {
//			if refusal, refused := sess.BeforeTool(call); refused {
//				results = append(results, refusal) // the model reads why; nothing ran
//				continue
//			}
//			out, err := run(call)
//			warning := sess.AfterTool(call, out, err) // "this call has failed 2 times in a row; ..."
//			results = append(results, out+"\n"+warning)
//		}
//	}
//
// The package is the standard library and loopbreaker only; its transport
// routing ([Set.Transport]) sends one shared model client's requests to
// the breaker of each request's session.
package sessions

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// Defaults of [Options].
const (
	DefaultMaxSessions = 10000
	DefaultIdleTimeout = time.Hour
	DefaultMaxWait     = time.Minute
)

// Options configure a [Set]. The zero value is usable: each session's
// breaker on loopbreaker.DefaultConfig, no store, the defaults above.
type Options struct {
	// Config is each session's breaker configuration; its zero value is
	// [loopbreaker.DefaultConfig]. Its Now and Sleep are the Set's clock
	// too: the idle timeout and the waits before a model call use them.
	Config loopbreaker.Config
	// Store, when set, restores a session's breaker when the session is
	// first used and saves it after every step, when it is freed and when
	// it ends. The loop name of a session is [LoopName] of its key.
	Store loopbreaker.Store
	// MaxSessions bounds the sessions kept in memory: making one more
	// frees the least recently used (saved first). 0: DefaultMaxSessions.
	MaxSessions int
	// IdleTimeout frees a session not used for this long (saved first),
	// at the next Get of any session. 0: DefaultIdleTimeout; negative:
	// never.
	IdleTimeout time.Duration
	// MaxWait is the longest [Session.BeforeModel] waits for a provider
	// limit or the call budget to end by itself, within the context's
	// deadline; a longer one ends the run with its error. 0:
	// DefaultMaxWait; negative: never wait.
	MaxWait time.Duration
	// DoneOnAnswer records a turn in which the model only wrote text (its
	// answer) as the agent's done signal. Leave it false for a chat
	// agent: an answer ends a run, not the work, and a breaker that
	// counts answers as done signals completes the loop (ErrComplete)
	// and refuses the person's next message.
	DoneOnAnswer bool
	// UserMessageCloses closes an open circuit when the person writes a
	// new message ([Session.UserMessage]): the person has read why the
	// run stopped and asks again. False: the circuit stays open until
	// its cooldown ends.
	UserMessageCloses bool
}

// ErrClosed is returned by the calls of a Set that has been closed.
var ErrClosed = errors.New("sessions: the set is closed")

// A Set keeps a breaker per session, by key. It is safe for concurrent use.
type Set struct {
	opts Options
	now  func() time.Time

	mu     sync.Mutex
	byKey  map[string]*list.Element // of *Session
	lru    *list.List               // most recently used first
	closed bool
}

// New returns a Set. It validates the breaker configuration, so that a
// bad one fails here and not at the first session.
func New(opts Options) (*Set, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	switch {
	case opts.MaxSessions < 0:
		return nil, fmt.Errorf("sessions: MaxSessions %d is negative", opts.MaxSessions)
	case opts.MaxSessions == 0:
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	now := opts.Config.Now
	if now == nil {
		now = time.Now
	}
	return &Set{opts: opts, now: now, byKey: make(map[string]*list.Element), lru: list.New()}, nil
}

// Options returns the set's options, with the defaults filled in.
func (s *Set) Options() Options { return s.opts }

// Get returns the session of key, made (and restored from the store) on
// its first use; an empty key is a session like any other. It first frees
// the sessions idle for longer than the idle timeout. An error is the
// store's (a corrupt snapshot is never taken for a fresh start) or
// ErrClosed.
func (s *Set) Get(ctx context.Context, key string) (*Session, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	now := s.now()
	freed := s.sweepLocked(now)
	if el, ok := s.byKey[key]; ok {
		sess := el.Value.(*Session)
		sess.touch(now)
		s.lru.MoveToFront(el)
		s.mu.Unlock()
		s.saveAll(ctx, freed)
		return sess, nil
	}
	s.mu.Unlock()
	s.saveAll(ctx, freed)

	// Made outside the lock: a store's Load may be slow.
	cb, err := s.breaker(ctx, key)
	if err != nil {
		return nil, err
	}
	sess := newSession(s, key, cb, now)

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if el, ok := s.byKey[key]; ok { // made meanwhile by another caller
		sess = el.Value.(*Session)
		sess.touch(now)
		s.lru.MoveToFront(el)
		s.mu.Unlock()
		return sess, nil
	}
	s.byKey[key] = s.lru.PushFront(sess)
	for s.lru.Len() > s.opts.MaxSessions {
		freed = append(freed, s.removeLocked(s.lru.Back()))
	}
	s.mu.Unlock()
	s.saveAll(ctx, freed)
	return sess, nil
}

// breaker makes the breaker of a new session: restored from the store
// when one is given.
func (s *Set) breaker(ctx context.Context, key string) (*loopbreaker.CircuitBreaker, error) {
	if s.opts.Store == nil {
		return loopbreaker.New(s.opts.Config)
	}
	cb, _, err := loopbreaker.NewFromStore(ctx, s.opts.Config, s.opts.Store, LoopName(key))
	if err != nil {
		return nil, fmt.Errorf("sessions: session %q: %w", key, err)
	}
	return cb, nil
}

// Lookup returns the session of key when the set holds it, without
// making one or marking it used.
func (s *Set) Lookup(key string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[key]
	if !ok {
		return nil, false
	}
	return el.Value.(*Session), true
}

// End frees the session of key, saved first: the host says the
// conversation is over (a framework with no session-end callback of its
// own leaves it to the idle timeout). A later Get of the key restores it
// from the store, or starts afresh without one. Ending a session the set
// does not hold does nothing. The error is the store's.
func (s *Set) End(ctx context.Context, key string) error {
	s.mu.Lock()
	el, ok := s.byKey[key]
	var sess *Session
	if ok {
		sess = s.removeLocked(el)
	}
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	return sess.Save(ctx)
}

// Len returns how many sessions the set holds.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}

// Close saves and frees every session; the set makes no more. The error
// joins the store's.
func (s *Set) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	var freed []*Session
	for s.lru.Len() > 0 {
		freed = append(freed, s.removeLocked(s.lru.Back()))
	}
	s.mu.Unlock()
	var errs []error
	for _, sess := range freed {
		errs = append(errs, sess.Save(ctx))
	}
	return errors.Join(errs...)
}

// sweepLocked removes the sessions idle for longer than the idle timeout
// and returns them, to be saved outside the lock.
func (s *Set) sweepLocked(now time.Time) []*Session {
	if s.opts.IdleTimeout < 0 {
		return nil
	}
	var freed []*Session
	for el := s.lru.Back(); el != nil; el = s.lru.Back() {
		if now.Sub(el.Value.(*Session).lastUsed()) < s.opts.IdleTimeout {
			break
		}
		freed = append(freed, s.removeLocked(el))
	}
	return freed
}

// removeLocked removes el's session from the set and returns it.
func (s *Set) removeLocked(el *list.Element) *Session {
	sess := el.Value.(*Session)
	s.lru.Remove(el)
	delete(s.byKey, sess.key)
	return sess
}

// saveAll saves the sessions freed: a session that is freed keeps what it
// learned in the store. A failed save is passed over (it has no caller to
// go to) and the next one tried.
func (s *Set) saveAll(ctx context.Context, freed []*Session) {
	for _, sess := range freed {
		_ = sess.Save(ctx)
	}
}

// LoopName returns the store's loop name of a session key: the key when it
// is a valid [loopbreaker.FileStore] name (ASCII letters, digits, '.', '_'
// and '-', not starting with '.', at most 100 bytes), else the key with
// every other byte made '_', cut, and followed by a hash of the whole key,
// so that two keys never share a name ("app/user/chat" becomes
// "app_user_chat-5e0c2a61b7d3f409"); a Windows device name is kept from
// the start by a '_'.
func LoopName(key string) string {
	const maxKept = 100
	valid := key != "" && len(key) <= maxKept && key[0] != '.'
	b := make([]byte, 0, min(len(key), maxKept)+17)
	for i := 0; i < len(key) && len(b) < maxKept; i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			b = append(b, c)
			continue
		}
		b = append(b, '_')
		valid = false
	}
	if valid && !reservedName(key) {
		return key
	}
	if len(b) > 0 && b[0] == '.' || reservedName(string(b)) {
		b = append([]byte{'_'}, b[:min(len(b), maxKept-1)]...)
	}
	return fmt.Sprintf("%s-%016x", b, fnv64(key))
}

// reservedName reports whether Windows takes a file of this name for a
// device: those names are not kept as they are.
func reservedName(key string) bool {
	stem, _, _ := strings.Cut(key, ".")
	switch len(stem) {
	case 3:
		for _, d := range []string{"con", "prn", "aux", "nul"} {
			if strings.EqualFold(stem, d) {
				return true
			}
		}
	case 4:
		c := stem[3]
		return '0' <= c && c <= '9' && (strings.EqualFold(stem[:3], "com") || strings.EqualFold(stem[:3], "lpt"))
	}
	return false
}

// fnv64 is the FNV-1a hash of s.
func fnv64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}
