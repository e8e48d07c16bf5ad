package sessions

import (
	"context"
	"net/http"

	"github.com/loopbreaker/loopbreaker/transport"
)

// sessionKey is the context key of a request's session.
type sessionKey struct{}

// NewContext returns a copy of ctx that carries sess: a model call made with
// it is routed to sess's breaker by [Set.Transport].
func NewContext(ctx context.Context, sess *Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, sess)
}

// FromContext returns the session ctx carries; false when it carries none.
func FromContext(ctx context.Context) (*Session, bool) {
	sess, ok := ctx.Value(sessionKey{}).(*Session)
	return sess, ok && sess != nil
}

// Meter returns the meter of a request for [transport.Route]: the session
// its context carries ([NewContext]), else the session of key (the
// request's [transport.RouteHeader]) when the set holds it; nil for
// neither, and the request is not metered.
func (s *Set) Meter(ctx context.Context, key string) transport.Meter {
	if sess, ok := FromContext(ctx); ok && sess.set == s {
		return sess
	}
	if key == "" {
		return nil
	}
	if sess, ok := s.Lookup(key); ok {
		return sess
	}
	return nil
}

// Transport returns the http.RoundTripper for a model client shared by the
// set's sessions: each request is counted, priced and watched for
// provider limits (as [transport.New] does) by the breaker of its session,
// which [Set.Meter] finds. base nil is http.DefaultTransport.
//
//	client := &http.Client{Transport: set.Transport(nil)}
func (s *Set) Transport(base http.RoundTripper) http.RoundTripper {
	return transport.Route(s.Meter, base)
}
