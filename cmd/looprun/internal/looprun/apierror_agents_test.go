package looprun

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key the API does not take: Claude Code gives up with "Invalid API key
// · Fix external API key" (at once when the answer says x-should-retry:
// false; it retries a bare 401 for three minutes), words the provider
// limits also read as a stop, and names the error's class, authentication_failed, in its stream and
// to its StopFailure hook. looprun stops at once for a person (exit 8),
// counting no failure: from the class in the stream, and in the json
// format (which names no class) from the hook's log. Claude Code does not
// wait for its StopFailure hook (it exits as the hook starts, ending a
// hook still running), so on a busy machine the hook's line may never be
// written; the error's words then stop the loop just the same.
func TestClaudeCodeAuthenticationFailureStopsForAPerson(t *testing.T) {
	refused := fakemodel.Always(fakemodel.Error(http.StatusUnauthorized, "authentication_error", "invalid x-api-key").WithHeader("x-should-retry", "false"))
	for _, tc := range []struct {
		name  string
		hooks bool
		args  []string
	}{
		{"stream-json", false, claudeFlags},
		{"json, with the hooks", true, []string{"--output-format", "json", "--allowedTools", "Bash", "--permission-mode", "acceptEdits"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newClaudeProject(t, refused, map[string]string{})
			if tc.hooks {
				installHooks(t, p.repo)
			}
			out, code := p.looprun(t, nil, append([]string{"-p", "fix the tests"}, tc.args...)...)
			require.Equal(t, exitProvider, code, out)
			assert.Contains(t, out, "Provider stopped the loop (no waiting ends this): Invalid API key · Fix external API key")
			assert.Contains(t, out, "failures: 0")
			assert.Len(t, p.sessions(), 1, "one session")
			if !tc.hooks {
				assert.Contains(t, out, "Invalid API key · Fix external API key (authentication_failed)", "the class from the stream")
				return
			}
			log, err := os.ReadFile(filepath.Join(p.dir, ".loopbreaker", "hooks", "events.log"))
			if errors.Is(err, fs.ErrNotExist) {
				t.Log("Claude Code ended its StopFailure hook before it wrote: the words alone stopped the loop")
				return
			}
			require.NoError(t, err)
			assert.Contains(t, string(log), "StopFailure: api error authentication_failed (no waiting ends it: a person acts): Invalid API key")
			assert.Contains(t, out, "Invalid API key · Fix external API key (authentication_failed)", "the class from the hook's log")
		})
	}
}

// A key the API does not take, through Codex (OpenAI's 401
// invalid_api_key) and Gemini CLI (the Gemini API's API_KEY_INVALID):
// each agent prints the API's refusal in its own words, the provider
// limits read them as a stop, and looprun stops at once for a person
// (exit 8), counting no failure, where the same failure again and again
// would have had it try the same key until the circuit opened.
func TestRefusedKeysStopCodexAndGeminiForAPerson(t *testing.T) {
	t.Run("Codex", func(t *testing.T) {
		p := newCodexProject(t, fakemodel.Always(fakemodel.InvalidAPIKey()), map[string]string{})
		out, code := p.looprun(t, nil, "fix the tests")
		require.Equal(t, exitProvider, code, out)
		assert.Contains(t, out, "Provider stopped the loop (no waiting ends this)")
		assert.Contains(t, out, "failures: 0")
		assert.NotContains(t, out, "OPEN")
	})
	t.Run("Gemini CLI", func(t *testing.T) {
		p := newGeminiProject(t, fakemodel.Always(fakemodel.APIKeyInvalid()), map[string]string{})
		out, code := p.looprun(t, nil, "-p", "fix the tests", "--output-format", "stream-json")
		require.Equal(t, exitProvider, code, out)
		assert.Contains(t, out, "Provider stopped the loop (no waiting ends this)")
		assert.Contains(t, out, "failures: 0")
		assert.NotContains(t, out, "OPEN")
	})
}
