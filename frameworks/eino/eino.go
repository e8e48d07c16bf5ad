// Package einobreaker puts a loopbreaker breaker in a CloudWeGo Eino
// (github.com/cloudwego/eino) agent, one breaker per session, as a
// ChatModelAgent middleware:
//
//	lb, err := einobreaker.New(loopbreaker.DefaultConfig(), nil) // or a Store
//	...
//	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		Model: chatModel, ToolsConfig: tools,
//		Handlers: []adk.ChatModelAgentMiddleware{lb.Middleware()},
//	})
//	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(einobreaker.WithSession(ctx, chatID), "...")
//
// Each run is one message of the person's. Before each model call (each
// try of a ModelRetryConfig too) the session's breaker is asked: a
// provider limit that ends within a minute (and the context's deadline)
// is waited out, and a stop ends the run with an error that errors.Is
// matches with loopbreaker's sentinels (loopbreaker.ErrOpen, ErrGaveUp,
// ErrSpendCap, ...), in the runner's event. Each tool call is one step,
// recorded once, in the model's order, parallel calls included. A step one
// short of a loop comes with a warning the model reads after the tool's
// result; the call that would complete the loop is refused before it runs,
// the model reads why as its result, and the run ends at the next model
// call. A turn of text only is a message step, and an answer is not the
// done signal, so the next run goes on.
//
// A tool's error ends an Eino run; with this middleware it is the step's
// error and the model reads it as the call's result ("error: ..."), as
// ADK does, so that a model can recover and a loop of failures is seen;
// Options.KeepToolErrors keeps Eino's way. An interrupt passes through.
//
// Eino has no session: the scope is the key of [WithSession] in the run's
// context (Options.Key changes it), and one breaker for the runs that
// carry none. A session is freed after an hour idle (saved to the Store
// first, restored from it when it comes back), or by [Breaker.EndSession].
//
// For the older ReAct agent (flow/agent/react), [Breaker.ToolMiddleware]
// goes in its ToolsConfig.ToolCallMiddlewares and [Breaker.Model] wraps its
// ToolCallingModel.
//
// The package is named einobreaker, as Eino has a package named adk.
package einobreaker

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/sessions"
)

// Options configure a [Breaker].
type Options struct {
	// Sessions configures the breakers, one per session: the breaker
	// config, the Store, how many sessions are kept and for how long idle,
	// how long a provider limit is waited out. See [sessions.Options].
	Sessions sessions.Options
	// Key returns the session key of a run's context; nil is
	// [SessionKey].
	Key func(ctx context.Context) string
	// Model names the model a response's usage is priced at: Eino's
	// messages do not say which model answered. A routed transport
	// ([Breaker.Transport]) reads it from the API's response instead.
	Model string
	// KeepToolErrors lets a tool's error end the run, as Eino does
	// without this middleware; it is recorded as a failed step all the
	// same.
	KeepToolErrors bool
}

// sessionKey is the context key of WithSession.
type sessionKey struct{}

// WithSession returns a copy of ctx whose runs are the session key's: a
// chat, a user, a task. Runs of one key share one breaker.
func WithSession(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, sessionKey{}, key)
}

// SessionKey is the default session key: the key of [WithSession], or ""
// for a context that carries none.
func SessionKey(ctx context.Context) string {
	key, _ := ctx.Value(sessionKey{}).(string)
	return key
}

// A Breaker keeps a loopbreaker breaker per session and plugs them into
// Eino agents. It is safe for concurrent use.
type Breaker struct {
	set  *sessions.Set
	opts Options
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

// session returns the session of ctx: the one a run put in it, else the
// one of its key.
func (b *Breaker) session(ctx context.Context) (*sessions.Session, error) {
	if sess, ok := sessions.FromContext(ctx); ok {
		return sess, nil
	}
	return b.set.Get(ctx, b.opts.Key(ctx))
}

// Middleware returns the middleware for ChatModelAgentConfig.Handlers.
func (b *Breaker) Middleware() adk.ChatModelAgentMiddleware { return &middleware{b: b} }

// middleware is the ChatModelAgentMiddleware of a Breaker.
type middleware struct {
	*adk.BaseChatModelAgentMiddleware
	b *Breaker
}

// BeforeAgent starts a run: a message of the person's. The run's context
// carries its session, for the model calls (and a routed transport).
func (m *middleware) BeforeAgent(ctx context.Context, runCtx *adk.ChatModelAgentContext) (context.Context, *adk.ChatModelAgentContext, error) {
	sess, err := m.b.session(ctx)
	if err != nil {
		return ctx, runCtx, err
	}
	sess.UserMessage()
	return sessions.NewContext(ctx, sess), runCtx, nil
}

// AfterModelRewriteState records what the model answered: its last
// message.
func (m *middleware) AfterModelRewriteState(ctx context.Context, state *adk.ChatModelAgentState, mc *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	if len(state.Messages) == 0 {
		return ctx, state, nil
	}
	sess, err := m.b.session(ctx)
	if err != nil {
		return ctx, state, err
	}
	sess.AfterModel(m.b.turn(state.Messages[len(state.Messages)-1]))
	return ctx, state, nil
}

// WrapModel asks the breaker before each try of a model call, and tells
// it of a try that failed.
func (m *middleware) WrapModel(_ context.Context, inner model.BaseChatModel, _ *adk.ModelContext) (model.BaseChatModel, error) {
	return &checkedModel{b: m.b, inner: inner}, nil
}

// WrapInvokableToolCall records each call as a step.
func (m *middleware) WrapInvokableToolCall(_ context.Context, endpoint adk.InvokableToolCallEndpoint, tCtx *adk.ToolContext) (adk.InvokableToolCallEndpoint, error) {
	return func(ctx context.Context, args string, opts ...tool.Option) (string, error) {
		return m.b.runTool(ctx, sessions.Call{ID: tCtx.CallID, Tool: tCtx.Name, Args: args}, func(ctx context.Context) (string, error) {
			return endpoint(ctx, args, opts...)
		})
	}, nil
}

// WrapStreamableToolCall records each streamed call as a step, its
// result the whole stream.
func (m *middleware) WrapStreamableToolCall(_ context.Context, endpoint adk.StreamableToolCallEndpoint, tCtx *adk.ToolContext) (adk.StreamableToolCallEndpoint, error) {
	return func(ctx context.Context, args string, opts ...tool.Option) (*schema.StreamReader[string], error) {
		out, err := m.b.runTool(ctx, sessions.Call{ID: tCtx.CallID, Tool: tCtx.Name, Args: args}, func(ctx context.Context) (string, error) {
			sr, err := endpoint(ctx, args, opts...)
			if err != nil {
				return "", err
			}
			return readAll(sr)
		})
		if err != nil {
			return nil, err
		}
		return schema.StreamReaderFromArray([]string{out}), nil
	}, nil
}

// readAll reads a tool's stream whole.
func readAll(sr *schema.StreamReader[string]) (string, error) {
	defer sr.Close()
	var b strings.Builder
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
		b.WriteString(chunk)
	}
}

// runTool runs one tool call as a step: asked about before it runs
// (refused, the model reads why instead), recorded after, with the
// warning of a signal one step short after its result.
func (b *Breaker) runTool(ctx context.Context, c sessions.Call, run func(context.Context) (string, error)) (string, error) {
	sess, err := b.session(ctx)
	if err != nil {
		return "", err
	}
	if words, refused := sess.BeforeTool(c); refused {
		return words, nil
	}
	out, err := run(ctx)
	if _, interrupted := compose.IsInterruptRerunError(err); interrupted {
		return out, err // no step: the run pauses for the person
	}
	warning := sess.AfterTool(c, out, err)
	if err != nil {
		if b.opts.KeepToolErrors {
			return out, err
		}
		out = joinLines("error: "+err.Error(), out)
	}
	return joinLines(out, warning), nil
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

// turn is what a model's message says: its calls, its text and its usage.
func (b *Breaker) turn(msg *schema.Message) sessions.Turn {
	var t sessions.Turn
	if msg == nil {
		return t
	}
	for _, c := range msg.ToolCalls {
		t.Calls = append(t.Calls, sessions.Call{ID: c.ID, Tool: c.Function.Name, Args: c.Function.Arguments})
	}
	t.Text = msg.Content
	if msg.ResponseMeta != nil && msg.ResponseMeta.Usage != nil {
		u := msg.ResponseMeta.Usage
		t.Usage = loopbreaker.Usage{
			Model:           b.opts.Model,
			InputTokens:     u.PromptTokens,
			OutputTokens:    u.CompletionTokens,
			CacheReadTokens: u.PromptTokenDetails.CachedTokens,
		}
	}
	return t
}

// checkedModel is a model whose calls the breaker is asked about first.
type checkedModel struct {
	b     *Breaker
	inner model.BaseChatModel
	// record: the model records its answers itself (the ReAct agent,
	// which has no AfterModelRewriteState).
	record bool
}

// before asks the breaker before a model call.
func (m *checkedModel) before(ctx context.Context) (*sessions.Session, error) {
	sess, err := m.b.session(ctx)
	if err != nil {
		return nil, err
	}
	return sess, sess.BeforeModel(ctx)
}

func (m *checkedModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	sess, err := m.before(ctx)
	if err != nil {
		return nil, err
	}
	msg, err := m.inner.Generate(sessions.NewContext(ctx, sess), input, opts...)
	if err != nil {
		sess.ModelFailed(err)
		return nil, err
	}
	if m.record {
		sess.AfterModel(m.b.turn(msg))
	}
	return msg, nil
}

func (m *checkedModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	sess, err := m.before(ctx)
	if err != nil {
		return nil, err
	}
	sr, err := m.inner.Stream(sessions.NewContext(ctx, sess), input, opts...)
	if err != nil {
		sess.ModelFailed(err)
		return nil, err
	}
	if !m.record {
		return sr, nil
	}
	// The ReAct agent: the answer is recorded once the stream has been
	// read whole, before the tools it calls run.
	var chunks []*schema.Message
	var once sync.Once
	return schema.StreamReaderWithConvert(sr, func(msg *schema.Message) (*schema.Message, error) {
		chunks = append(chunks, msg)
		return msg, nil
	}, schema.WithOnEOF(func() (any, error) {
		once.Do(func() {
			if whole, err := schema.ConcatMessages(chunks); err == nil {
				sess.AfterModel(m.b.turn(whole))
			}
		})
		return nil, io.EOF
	})), nil
}

// WithTools keeps the breaker on a model given tools.
func (m *checkedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	tc, ok := m.inner.(model.ToolCallingChatModel)
	if !ok {
		return nil, errors.New("einobreaker: the model takes no tools (it is no model.ToolCallingChatModel)")
	}
	inner, err := tc.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &checkedModel{b: m.b, inner: inner, record: m.record}, nil
}

// ShouldRetry is a ModelRetryConfig.ShouldRetry that retries a model call
// that failed, except when the breaker stopped it: asking again would be
// refused again. A provider limit is waited out by the breaker itself
// before the retry.
func ShouldRetry(_ context.Context, rc *adk.RetryContext) *adk.RetryDecision {
	return &adk.RetryDecision{Retry: rc.Err != nil && !sessions.IsStop(rc.Err)}
}

// Model returns inner with the breaker asked before each call and told of
// each answer, for the ReAct agent's AgentConfig.ToolCallingModel (with
// [Breaker.ToolMiddleware]). A ChatModelAgent takes [Breaker.Middleware]
// instead.
func (b *Breaker) Model(inner model.ToolCallingChatModel) model.ToolCallingChatModel {
	return &checkedModel{b: b, inner: inner, record: true}
}

// ToolMiddleware returns the tool middleware for the ReAct agent's
// ToolsConfig.ToolCallMiddlewares: each call is a step, as
// [Breaker.Middleware] records it.
func (b *Breaker) ToolMiddleware() compose.ToolMiddleware {
	return compose.ToolMiddleware{
		Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
				out, err := b.runTool(ctx, sessions.Call{ID: in.CallID, Tool: in.Name, Args: in.Arguments}, func(ctx context.Context) (string, error) {
					o, err := next(ctx, in)
					if o == nil {
						return "", err
					}
					return o.Result, err
				})
				if err != nil {
					return nil, err
				}
				return &compose.ToolOutput{Result: out}, nil
			}
		},
	}
}
