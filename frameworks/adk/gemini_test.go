package adkbreaker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model/gemini"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/loopbreaker/loopbreaker"
	adkbreaker "github.com/loopbreaker/loopbreaker/frameworks/adk"
	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/loopbreakertest"
	"github.com/loopbreaker/loopbreaker/sessions"
)

// Two sessions share one ADK Gemini model, whose client sends its
// requests through the breaker's routed transport to a fake Gemini API.
// Each request is counted and priced by the breaker of its session (the
// plugin names it in a header, which is never sent): alice's 429 is
// alice's, waited out before her next run and then served, while bob's
// run goes on.
func TestOneGeminiClientFeedsEachSessionsBreaker(t *testing.T) {
	const modelName = "gemini-2.5-flash"
	answer := fakemodel.Reply{Content: []fakemodel.Block{fakemodel.Text("Two files.")}}
	listFiles := fakemodel.Reply{Content: []fakemodel.Block{{Type: "tool_use", Name: "list_files", Input: json.RawMessage(`{}`)}}}
	api := fakemodel.NewGemini(fakemodel.Script(
		fakemodel.QuotaPerMinute(modelName, 20*time.Second), // alice, run 1
		listFiles, answer, // bob
		listFiles, answer, // alice, run 2
	))
	defer api.Close()

	clock := loopbreakertest.NewClock(time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC))
	cfg, _ := loopbreaker.Preset("tool-steps")
	cfg.Now, cfg.Sleep = clock.Now, clock.Sleep
	cfg.Spend.MaxCallsPerHour = 100
	lb, err := adkbreaker.NewWithOptions(adkbreaker.Options{Sessions: sessions.Options{Config: cfg}})
	require.NoError(t, err)

	ctx := context.Background()
	llm, err := gemini.NewModel(ctx, modelName, &genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPClient:  &http.Client{Transport: lb.Transport(nil)},
		HTTPOptions: genai.HTTPOptions{BaseURL: api.URL},
	})
	require.NoError(t, err)
	list, err := functiontool.New(functiontool.Config{Name: "list_files", Description: "List the files."},
		func(agent.Context, struct{}) (map[string]any, error) {
			return map[string]any{"output": "a.go\nb.go"}, nil
		})
	require.NoError(t, err)
	coder, err := llmagent.New(llmagent.Config{Name: "coder", Model: llm, Tools: []tool.Tool{list}})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{
		AppName: "app", Agent: coder, SessionService: session.InMemoryService(), AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{lb.Plugin()}},
	})
	require.NoError(t, err)
	runAs := func(user string) error {
		var last error
		for _, err := range r.Run(ctx, user, "chat", genai.NewContentFromText("How many files?", genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				last = err
			}
		}
		return last
	}

	err = runAs("alice")
	require.Error(t, err, "the 429 ends alice's first run")
	assert.False(t, sessions.IsStop(err), "the API's error, not the breaker's: %v", err)
	require.NoError(t, runAs("bob"), "bob's breaker saw no limit")
	assert.Empty(t, clock.Slept())
	require.NoError(t, runAs("alice"), "waited out, then served")
	assert.Equal(t, []time.Duration{20 * time.Second}, clock.Slept())

	alice, err := lb.Session(ctx, "app/alice/chat")
	require.NoError(t, err)
	bob, err := lb.Session(ctx, "app/bob/chat")
	require.NoError(t, err)
	as, bs := alice.Breaker().Stats(), bob.Breaker().Stats()
	assert.Equal(t, 3, as.Budget.Used, "alice's three requests, counted by the transport")
	assert.Equal(t, 2, bs.Budget.Used)
	assert.Equal(t, loopbreaker.CauseProviderLimit, as.History[0].Cause)
	assert.Empty(t, bs.History)
	assert.Equal(t, 2*fakemodel.DefaultUsage.InputTokens, bs.Spend.Total.InputTokens, "bob's usage, read once from the responses")
	assert.Greater(t, bs.Spend.Total.CostUSD, 0.0, "priced at gemini-2.5-flash")

	requests := api.Requests()
	require.Len(t, requests, 5)
	for _, req := range requests {
		assert.Empty(t, req.Header.Get("Loopbreaker-Route"), "the route header is never sent")
	}
}
