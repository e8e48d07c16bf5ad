// Package genkitbreaker puts a loopbreaker breaker in Firebase Genkit for
// Go (github.com/firebase/genkit/go), one breaker per session, as Genkit
// middleware:
//
//	lb, err := genkitbreaker.New(loopbreaker.DefaultConfig(), nil) // or a Store
//	...
//	resp, err := genkit.Generate(genkitbreaker.WithSession(ctx, chatID), g,
//		ai.WithPrompt(question), ai.WithTools(tools...), ai.WithUse(lb.Middleware()))
//
// Each Generate is one message of the person's. Before each model call of
// its tool loop the session's breaker is asked: a provider limit that ends
// within a minute (and the context's deadline) is waited out, and a stop
// ends Generate with an error that errors.Is matches with loopbreaker's
// sentinels (loopbreaker.ErrOpen, ErrGaveUp, ErrSpendCap, ...). Each tool
// call is one step, recorded once, in the model's order, though Genkit
// runs a turn's calls at once. A step one short of a loop comes with a
// warning the model reads beside the tool's output; the call that would
// complete the loop is refused before it runs and the model reads why as
// its output (not a tool interrupt, which would end Generate and wait for
// the host), and Generate ends at the next model call. A turn of text
// only is a message step, and an answer is not the done signal, so the
// next Generate goes on.
//
// A tool's error ends a Genkit Generate; with this middleware it is the
// step's error and the model reads it as the call's output ("error:
// ..."), so that a model can recover and a loop of failures is seen;
// Options.KeepToolErrors keeps Genkit's way. A tool interrupt passes
// through.
//
// The scope is the key of [WithSession] in Generate's context, else the
// session of Genkit's experimental agent runtime (ai/exp) when the
// context carries one, else one breaker for all (Options.Key changes it).
// A session is freed after an hour idle (saved to the Store first,
// restored from it when it comes back), or by [Breaker.EndSession].
//
// The package is named genkitbreaker, as Genkit's own are genkit and ai.
package genkitbreaker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/ai/exp"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/sessions"
)

// MiddlewareName is the name of the middleware [Breaker.Middleware]
// returns.
const MiddlewareName = "loopbreaker"

// Options configure a [Breaker].
type Options struct {
	// Sessions configures the breakers, one per session: the breaker
	// config, the Store, how many sessions are kept and for how long idle,
	// how long a provider limit is waited out. See [sessions.Options].
	Sessions sessions.Options
	// Key returns the session key of Generate's context; nil is
	// [SessionKey].
	Key func(ctx context.Context) string
	// KeepToolErrors lets a tool's error end Generate, as Genkit does
	// without this middleware; it is recorded as a failed step all the
	// same.
	KeepToolErrors bool
}

// sessionKey is the context key of WithSession.
type sessionKey struct{}

// WithSession returns a copy of ctx whose Generate calls are the session
// key's: a chat, a user, a task. Calls of one key share one breaker.
func WithSession(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, sessionKey{}, key)
}

// SessionKey is the default session key: the key of [WithSession]; else
// the ID of the session of Genkit's agent runtime (ai/exp) that ctx
// carries; else "".
func SessionKey(ctx context.Context) string {
	if key, ok := ctx.Value(sessionKey{}).(string); ok {
		return key
	}
	if s, ok := exp.ArtifactStoreFromContext(ctx).(interface{ SessionID() string }); ok {
		return s.SessionID()
	}
	return ""
}

// A Breaker keeps a loopbreaker breaker per session and plugs them into
// Genkit's Generate. It is safe for concurrent use.
type Breaker struct {
	set  *sessions.Set
	opts Options
	refs atomic.Uint64 // names the tool requests a model left unnamed
}

// New returns a Breaker whose sessions' breakers are made with cfg, and
// saved to and restored from store (nil: kept in memory only).
func New(cfg loopbreaker.Config, store loopbreaker.Store) (*Breaker, error) {
	return NewWithOptions(Options{Sessions: sessions.Options{Config: cfg, Store: store}})
}

// NewWithOptions returns a Breaker configured by opts.
func NewWithOptions(opts Options) (*Breaker, error) {
	set, err := sessions.New(opts.Sessions)
	if err != nil {
		return nil, err
	}
	if opts.Key == nil {
		opts.Key = SessionKey
	}
	return &Breaker{set: set, opts: opts}, nil
}

// Sessions returns the set of the sessions' breakers: for a session's
// Stats, Resume or Snapshot.
func (b *Breaker) Sessions() *sessions.Set { return b.set }

// Session returns the session of key.
func (b *Breaker) Session(ctx context.Context, key string) (*sessions.Session, error) {
	return b.set.Get(ctx, key)
}

// EndSession frees the breaker of a session that is over, saved first.
func (b *Breaker) EndSession(ctx context.Context, key string) error { return b.set.End(ctx, key) }

// Middleware returns the middleware for ai.WithUse.
func (b *Breaker) Middleware() ai.Middleware { return middleware{b: b} }

// middleware is the ai.Middleware of a Breaker.
type middleware struct{ b *Breaker }

// Name is the middleware's name.
func (middleware) Name() string { return MiddlewareName }

// New makes the hooks of one Generate: one message of the person's.
func (m middleware) New(ctx context.Context) (*ai.Hooks, error) {
	sess, err := m.b.set.Get(ctx, m.b.opts.Key(ctx))
	if err != nil {
		return nil, err
	}
	sess.UserMessage()
	h := &hooks{b: m.b, sess: sess}
	return &ai.Hooks{WrapGenerate: h.wrapGenerate, WrapModel: h.wrapModel, WrapTool: h.wrapTool}, nil
}

// hooks are the hooks of one Generate, on its session.
type hooks struct {
	b     *Breaker
	sess  *sessions.Session
	model atomic.Value // string: the model Generate names, for pricing
}

// wrapGenerate keeps the model Generate names, for a response that names
// none.
func (h *hooks) wrapGenerate(ctx context.Context, params *ai.GenerateParams, next ai.GenerateNext) (*ai.ModelResponse, error) {
	if params.Options != nil {
		h.model.Store(params.Options.Model)
	}
	return next(ctx, params)
}

// wrapModel asks the breaker before the model call and tells it the
// answer: its calls, named for their steps, its text and its usage.
func (h *hooks) wrapModel(ctx context.Context, params *ai.ModelParams, next ai.ModelNext) (*ai.ModelResponse, error) {
	if err := h.sess.BeforeModel(ctx); err != nil {
		return nil, err
	}
	resp, err := next(sessions.NewContext(ctx, h.sess), params)
	if err != nil {
		h.sess.ModelFailed(err)
		return nil, err
	}
	h.sess.AfterModel(h.turn(resp))
	return resp, nil
}

// turn is what a response says. It names the tool requests the model left
// unnamed, as Genkit would after this hook, so that their steps are
// recorded in the model's order.
func (h *hooks) turn(resp *ai.ModelResponse) sessions.Turn {
	var t sessions.Turn
	if resp == nil {
		return t
	}
	if resp.Message != nil {
		var text strings.Builder
		for _, p := range resp.Message.Content {
			switch {
			case p.IsToolRequest():
				if p.ToolRequest.Ref == "" {
					p.ToolRequest.Ref = fmt.Sprintf("loopbreaker-%d", h.b.refs.Add(1))
				}
				t.Calls = append(t.Calls, sessions.Call{ID: p.ToolRequest.Ref, Tool: p.ToolRequest.Name, Args: jsonText(p.ToolRequest.Input)})
			case p.IsText() && !p.IsReasoning():
				text.WriteString(p.Text)
			}
		}
		t.Text = text.String()
	}
	if u := resp.Usage; u != nil {
		// Genkit's response names no model: the one Generate called.
		model, _ := h.model.Load().(string)
		t.Usage = loopbreaker.Usage{
			Model:           model,
			InputTokens:     u.InputTokens,
			OutputTokens:    u.OutputTokens + u.ThoughtsTokens,
			CacheReadTokens: u.CachedContentTokens,
		}
	}
	return t
}

// wrapTool runs a tool call as a step: asked about before it runs
// (refused, the model reads why as its output), recorded after, with the
// warning of a signal one step short beside its output.
func (h *hooks) wrapTool(ctx context.Context, params *ai.ToolParams, next ai.ToolNext) (*ai.MultipartToolResponse, error) {
	c := sessions.Call{ID: params.Request.Ref, Tool: params.Request.Name, Args: jsonText(params.Request.Input)}
	if words, refused := h.sess.BeforeTool(c); refused {
		return &ai.MultipartToolResponse{Output: words}, nil
	}
	resp, err := next(ctx, params)
	if interrupted, _ := ai.IsToolInterruptError(err); interrupted {
		return resp, err // no step: Generate pauses for the host
	}
	var output any
	if resp != nil {
		output = resp.Output
	}
	warning := h.sess.AfterTool(c, jsonText(output), err)
	if err != nil {
		if h.b.opts.KeepToolErrors {
			return resp, err
		}
		return &ai.MultipartToolResponse{Output: joinLines("error: "+err.Error(), warning)}, nil
	}
	if warning == "" {
		return resp, nil
	}
	withWarning := *resp
	if s, ok := output.(string); ok {
		withWarning.Output = joinLines(s, warning)
	} else {
		withWarning.Output = map[string]any{"output": output, "loopbreaker": warning}
	}
	return &withWarning, nil
}

// joinLines joins the texts that are not empty, a blank line between.
func joinLines(texts ...string) string {
	var kept []string
	for _, t := range texts {
		if t != "" {
			kept = append(kept, t)
		}
	}
	return strings.Join(kept, "\n\n")
}

// jsonText is v as JSON: a tool's input or output as the breaker compares
// it. A string is itself; Go's encoding sorts a map's keys.
func jsonText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.RawMessage:
		return string(v)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
