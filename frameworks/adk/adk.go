// Package adkbreaker puts a loopbreaker breaker in a Google ADK for Go
// (google.golang.org/adk/v2) runner, one breaker per session, as an ADK
// plugin:
//
//	lb, err := adkbreaker.New(loopbreaker.DefaultConfig(), nil) // or a Store
//	...
//	r, err := runner.New(runner.Config{
//		AppName: "app", Agent: agent, SessionService: session.InMemoryService(),
//		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{lb.Plugin()}},
//	})
//
// Before each model call the session's breaker is asked: a provider limit
// that ends within a minute (and the context's deadline) is waited out,
// and a stop ends the run with an error that errors.Is matches with
// loopbreaker's sentinels (loopbreaker.ErrOpen, ErrGaveUp, ErrSpendCap,
// ...), which the runner's iterator yields. Each tool call is one step,
// recorded once, in the model's order, parallel calls included. A step
// one short of a loop comes with a warning the model reads beside its
// result; the call that would complete the loop is refused before it runs,
// and the model reads why as the call's result ({"error": "loopbreaker
// stopped your tool calls: ..."}), and the run ends at the next model call. A turn of text only is a message step, and an answer is
// not the done signal, so the person's next message runs. The usage each
// response reports is priced at the response's model, so a dollar cap
// holds; a model error that is a provider limit puts the limit in force.
//
// The breaker's scope is the ADK session: app name, user ID and session
// ID (Options.Key changes it). ADK has no callback for a session's end:
// call [Breaker.EndSession] when the host deletes one; otherwise it is
// freed after an hour idle (saved to the Store first, and restored from
// it when the session comes back).
//
// The package is named adkbreaker, as ADK's own packages take the names
// agent, model, plugin and runner.
package adkbreaker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/sessions"
	"github.com/loopbreaker/loopbreaker/transport"
)

// PluginName is the name of the plugin [Breaker.Plugin] returns.
const PluginName = "loopbreaker"

// Options configure a [Breaker].
type Options struct {
	// Sessions configures the breakers, one per session: the breaker
	// config, the Store, how many sessions are kept and for how long idle,
	// how long a provider limit is waited out. See [sessions.Options].
	Sessions sessions.Options
	// Key returns the session key of a callback's context; nil is
	// [SessionKey]: app, user and session. Return ctx.UserID() for one
	// breaker per user, or ctx.AppName() for one for the whole app.
	Key func(ctx agent.ReadonlyContext) string
}

// SessionKey is the default session key: "app/user/session".
func SessionKey(ctx agent.ReadonlyContext) string {
	return ctx.AppName() + "/" + ctx.UserID() + "/" + ctx.SessionID()
}

// A Breaker keeps a loopbreaker breaker per ADK session and plugs them into
// a runner. It is safe for concurrent use.
type Breaker struct {
	set *sessions.Set
	key func(agent.ReadonlyContext) string

	// refused holds the IDs of the calls BeforeTool refused, for their
	// AfterTool to pass over: a refusal is no step.
	refused sync.Map
	// models holds the model each invocation's requests name, for a
	// response that names none.
	models sync.Map
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
	key := opts.Key
	if key == nil {
		key = SessionKey
	}
	return &Breaker{set: set, key: key}, nil
}

// Sessions returns the set of the sessions' breakers: for a session's
// Stats, Resume or Snapshot.
func (b *Breaker) Sessions() *sessions.Set { return b.set }

// Session returns the session of key, "app/user/session" unless
// Options.Key says otherwise.
func (b *Breaker) Session(ctx context.Context, key string) (*sessions.Session, error) {
	return b.set.Get(ctx, key)
}

// EndSession frees the breaker of a session the host deleted, saved first.
func (b *Breaker) EndSession(ctx context.Context, appName, userID, sessionID string) error {
	return b.set.End(ctx, appName+"/"+userID+"/"+sessionID)
}

// Transport returns the http.RoundTripper for the HTTP client of a model
// shared by all sessions (genai.ClientConfig.HTTPClient for ADK's Gemini
// model): each request is counted, priced and read for provider limits by
// its session's breaker, which the plugin names in a request header the
// transport removes. base nil is http.DefaultTransport.
func (b *Breaker) Transport(base http.RoundTripper) http.RoundTripper {
	return b.set.Transport(base)
}

// Plugin returns the ADK plugin to install in runner.Config.PluginConfig.
func (b *Breaker) Plugin() *plugin.Plugin {
	p, _ := plugin.New(plugin.Config{
		Name:                  PluginName,
		OnUserMessageCallback: b.onUserMessage,
		BeforeModelCallback:   b.beforeModel,
		AfterModelCallback:    b.afterModel,
		OnModelErrorCallback:  b.onModelError,
		BeforeToolCallback:    b.beforeTool,
		AfterToolCallback:     b.afterTool,
		OnToolErrorCallback:   b.onToolError,
		AfterRunCallback:      b.afterRun,
	})
	return p // plugin.New returns no error
}

// session returns the session of a callback's context.
func (b *Breaker) session(ctx agent.ReadonlyContext) (*sessions.Session, error) {
	return b.set.Get(ctx, b.key(ctx))
}

// invocationKey is the key of ctx's invocation, for the models map.
func invocationKey(ctx agent.ReadonlyContext) string { return ctx.InvocationID() }

func (b *Breaker) onUserMessage(ctx agent.InvocationContext, _ *genai.Content) (*genai.Content, error) {
	s := ctx.Session()
	sess, err := b.set.Get(ctx, b.key(readonly{ctx}))
	if err != nil {
		return nil, fmt.Errorf("loopbreaker: session %s/%s/%s: %w", s.AppName(), s.UserID(), s.ID(), err)
	}
	sess.UserMessage()
	return nil, nil
}

func (b *Breaker) beforeModel(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	sess, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	if err := sess.BeforeModel(ctx); err != nil {
		return nil, err
	}
	if req.Model != "" {
		b.models.Store(invocationKey(ctx), req.Model)
	}
	// Name the session for a routed transport: ADK gives the model call
	// no context of ours, but sends these headers with it.
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	if req.Config.HTTPOptions == nil {
		req.Config.HTTPOptions = &genai.HTTPOptions{}
	}
	if req.Config.HTTPOptions.Headers == nil {
		req.Config.HTTPOptions.Headers = make(http.Header)
	}
	req.Config.HTTPOptions.Headers.Set(transport.RouteHeader, sess.Key())
	return nil, nil
}

func (b *Breaker) afterModel(ctx agent.Context, resp *model.LLMResponse, respErr error) (*model.LLMResponse, error) {
	if resp == nil || respErr != nil || resp.Partial {
		return nil, nil // a streamed chunk: the whole response comes last
	}
	sess, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	sess.AfterModel(b.turn(ctx, resp))
	return nil, nil
}

// turn is what the response says: its calls, its text and its usage.
func (b *Breaker) turn(ctx agent.Context, resp *model.LLMResponse) sessions.Turn {
	var t sessions.Turn
	var text strings.Builder
	if resp.Content != nil {
		for _, p := range resp.Content.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				t.Calls = append(t.Calls, sessions.Call{ID: p.FunctionCall.ID, Tool: p.FunctionCall.Name, Args: jsonText(p.FunctionCall.Args)})
			case p.Text != "" && !p.Thought:
				text.WriteString(p.Text)
			}
		}
	}
	t.Text = text.String()
	if u := resp.UsageMetadata; u != nil {
		m := resp.ModelVersion
		if m == "" {
			if v, ok := b.models.Load(invocationKey(ctx)); ok {
				m = v.(string)
			}
		}
		t.Usage = loopbreaker.Usage{
			Model:           m,
			InputTokens:     int(u.PromptTokenCount) + int(u.ToolUsePromptTokenCount),
			OutputTokens:    int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
			CacheReadTokens: int(u.CachedContentTokenCount),
		}
	}
	return t
}

func (b *Breaker) onModelError(ctx agent.Context, _ *model.LLMRequest, modelErr error) (*model.LLMResponse, error) {
	sess, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	sess.ModelFailed(modelErr)
	return nil, nil
}

// call is the tool call of a tool callback.
func call(ctx agent.Context, t tool.Tool, args map[string]any) sessions.Call {
	return sessions.Call{ID: ctx.FunctionCallID(), Tool: t.Name(), Args: jsonText(args)}
}

func (b *Breaker) beforeTool(ctx agent.Context, t tool.Tool, args map[string]any) (map[string]any, error) {
	sess, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	words, refused := sess.BeforeTool(call(ctx, t, args))
	if !refused {
		return nil, nil
	}
	// A result, not an error: ADK hands a BeforeTool error to the tool
	// error callbacks as the tool's own failure.
	b.refused.Store(refusedKey(ctx), true)
	return map[string]any{"error": words}, nil
}

// refusedKey names a refused call: its session's invocation and its ID.
func refusedKey(ctx agent.Context) string { return ctx.InvocationID() + "\x00" + ctx.FunctionCallID() }

func (b *Breaker) afterTool(ctx agent.Context, t tool.Tool, args, result map[string]any, toolErr error) (map[string]any, error) {
	if _, refused := b.refused.LoadAndDelete(refusedKey(ctx)); refused {
		return nil, nil
	}
	sess, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	stepErr := toolErr
	if stepErr == nil {
		stepErr = resultError(result)
	}
	warning := sess.AfterTool(call(ctx, t, args), jsonText(result), stepErr)
	if warning == "" {
		return nil, nil
	}
	// The model reads the warning beside the result.
	if toolErr != nil {
		return nil, fmt.Errorf("%w\n%s", toolErr, warning)
	}
	withWarning := make(map[string]any, len(result)+1)
	for k, v := range result {
		withWarning[k] = v
	}
	withWarning["loopbreaker"] = warning
	return withWarning, nil
}

// runnable is what a tool ADK runs has: a call of another tool (one the
// model made up) reaches OnToolError only, no AfterTool.
type runnable interface {
	Run(ctx agent.Context, args any) (map[string]any, error)
}

func (b *Breaker) onToolError(ctx agent.Context, t tool.Tool, args map[string]any, toolErr error) (map[string]any, error) {
	if _, ok := t.(runnable); ok {
		return nil, nil // AfterTool records it
	}
	sess, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	sess.AfterTool(call(ctx, t, args), "", toolErr)
	return nil, nil
}

func (b *Breaker) afterRun(ctx agent.InvocationContext) {
	b.models.Delete(ctx.InvocationID())
}

// resultError is the error a tool's result reports: ADK's convention is
// a result {"error": ...}, which is how it reports a tool's error to the
// model too.
func resultError(result map[string]any) error {
	switch e := result["error"].(type) {
	case error:
		return e
	case string:
		if e != "" {
			return toolError(e)
		}
	}
	return nil
}

// toolError is the error of a tool whose result said it failed.
type toolError string

func (e toolError) Error() string { return string(e) }

// jsonText is v as JSON, "" for nil: Go's encoding sorts a map's keys, so
// the same arguments are always the same text.
func jsonText(v map[string]any) string {
	if v == nil {
		return ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// readonly gives an invocation context the ReadonlyContext a Key takes.
type readonly struct{ agent.InvocationContext }

func (r readonly) AgentName() string { return r.Agent().Name() }
func (r readonly) ReadonlyState() session.ReadonlyState {
	return r.Session().State()
}
func (r readonly) UserID() string    { return r.Session().UserID() }
func (r readonly) AppName() string   { return r.Session().AppName() }
func (r readonly) SessionID() string { return r.Session().ID() }
