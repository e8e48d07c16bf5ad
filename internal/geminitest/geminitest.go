// Package geminitest runs the real Gemini CLI in tests: the pinned
// release of the npm package @google/gemini-cli (a Node.js program,
// Node.js 20 or later), offline and signed in to nothing, against a fake
// Gemini API (fakemodel.Gemini) on the loopback interface.
//
// Tests find the program through the environment variable
// LOOPBREAKER_GEMINI, else as gemini on the PATH when it is the pinned
// version. .ci/run installs it and sets both LOOPBREAKER_GEMINI and
// LOOPBREAKER_CI; under CI a missing program fails the test, and
// elsewhere the test is skipped with a message that says how to install
// it.
//
// Start gives Gemini CLI a home of its own: a temporary HOME whose
// ~/.gemini/settings.json signs it in with an API key (an API key that is
// no key, GEMINI_API_KEY) and points it at the fake through
// GOOGLE_GEMINI_BASE_URL, with no usage statistics, no update check and
// one attempt per request (general.maxAttempts, unless the test sets it);
// the working directory is trusted (GEMINI_CLI_TRUST_WORKSPACE), and
// TMPDIR is temporary too (Gemini CLI writes its error reports there).
// On Linux, where the test may make a network namespace, the test's
// thread, the fake model and Gemini CLI live in one whose only interface
// is the loopback (package netns).
package geminitest

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/internal/netns"
	"github.com/loopbreaker/loopbreaker/internal/pinned"
)

const (
	// Version is the Gemini CLI release the tests are written against.
	Version = "0.61.0"
	// Package is the npm package that ships it.
	Package = "@google/gemini-cli"
	// BinaryEnv names the environment variable that gives the program's
	// path.
	BinaryEnv = "LOOPBREAKER_GEMINI"
	// RequireEnv names the environment variable that makes a missing
	// program a failure rather than a skip: .ci/run sets it.
	RequireEnv = pinned.RequireEnv
	// Model is the model the tests ask for (gemini -m): naming it skips
	// Gemini CLI's router model, and the breaker's price table prices it
	// ($0.30 per million input tokens, $0.03 cached, $2.50 output).
	Model = "gemini-2.5-flash"
	// Key is the API key Gemini CLI sends; the fake takes any.
	Key = "fake-gemini-key-for-tests"
)

// ErrNotFound is the error Binary returns when no Gemini CLI of Version
// is to be found.
var ErrNotFound = errors.New("geminitest: Gemini CLI " + Version + " not found")

// release is the pinned release, as package pinned finds it.
var release = pinned.Binary{
	Command: "gemini", Env: BinaryEnv, Install: Install, NotFound: ErrNotFound, Version: version,
	Is: func(v string) bool { return v == Version },
}

// Binary returns the path of Gemini CLI: BinaryEnv's, which must be
// Version, else gemini on the PATH when it is. The error wraps
// ErrNotFound when there is neither.
func Binary() (string, error) { return release.Find() }

// version returns the version of the program at path: its npm package's
// (package.json beside the bundle it links to), which Gemini CLI takes
// seconds to say itself.
func version(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(real), "..", "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", err
	}
	if pkg.Name != Package {
		return "", errors.New(path + " is not " + Package + "'s program")
	}
	return pkg.Version, nil
}

// Install is the command that installs the pinned program, for a message.
const Install = "npm install --prefix ~/.cache/loopbreaker/gemini-cli-" + Version + " " + Package + "@" + Version +
	" && export " + BinaryEnv + "=~/.cache/loopbreaker/gemini-cli-" + Version + "/node_modules/.bin/gemini"

// Require returns the program's path (see Binary). Without it the test is
// skipped, saying how to install it, or fails under CI (RequireEnv set).
func Require(t testing.TB) string {
	t.Helper()
	return release.Require(t)
}

// Env is the environment a test runs Gemini CLI in.
type Env struct {
	// Bin is the path of Gemini CLI's program.
	Bin string
	// Model is the fake Gemini API Gemini CLI talks to.
	Model *fakemodel.Gemini
	// Home is Gemini CLI's HOME: ~/.gemini/ holds its settings, and the
	// sessions' transcripts (tmp/<project>/chats/).
	Home string
	// Offline says the test runs in a network namespace whose only
	// interface is the loopback; false where no namespace could be made.
	Offline bool
}

// Start readies a test to run Gemini CLI against a fake model that
// answers with answer: it finds the program (Require), moves the test
// into a network namespace of its own where it can (Env.Offline), starts
// the fake model there, writes ~/.gemini/settings.json (Settings, with
// the members of more merged in at the top level: {"model":
// {"disableLoopDetection": true}} say), and sets the environment Gemini
// CLI reads, for the test and every process it starts (t.Setenv: the
// test must not be parallel). The model is closed when the test ends.
//
// The namespace belongs to the test's goroutine's thread: call Start on
// the test's goroutine, and start Gemini CLI (or what runs it) from it.
func Start(t testing.TB, answer fakemodel.Answerer, more map[string]any) *Env {
	t.Helper()
	e := &Env{Bin: Require(t)}
	e.Offline = netns.Isolate(t)
	e.Model = fakemodel.NewGemini(answer)
	t.Cleanup(e.Model.Close)
	e.Home = t.TempDir()
	dir := filepath.Join(e.Home, ".gemini")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	settings := Settings()
	maps.Copy(settings, more)
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		// Other ways to reach a model, or to configure Gemini CLI, that
		// the person running the tests may have set.
		"GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
		"GOOGLE_APPLICATION_CREDENTIALS", "GEMINI_MODEL", "GEMINI_CLI_HOME", "GEMINI_SYSTEM_MD", "GEMINI_SANDBOX",
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy",
	} {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
	for k, v := range map[string]string{
		"HOME":                       e.Home,
		"TMPDIR":                     t.TempDir(),
		"GEMINI_API_KEY":             Key,
		"GOOGLE_GEMINI_BASE_URL":     e.Model.URL,
		"GEMINI_CLI_TRUST_WORKSPACE": "true",
		// Gemini CLI starts itself again in a child process with a
		// larger heap: a second of start-up a run, for nothing here.
		"GEMINI_CLI_NO_RELAUNCH": "true",
	} {
		t.Setenv(k, v)
	}
	return e
}

// Settings returns the ~/.gemini/settings.json that runs Gemini CLI
// against the fake, offline: signed in with an API key (which, with
// GOOGLE_GEMINI_BASE_URL, it sends to the fake), no usage statistics, no
// update check, and one attempt per request to the model (a 429 is not
// retried: the tests script the retries they mean).
func Settings() map[string]any {
	return map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 1},
	}
}

// Transcripts returns the paths of the sessions' transcripts under home,
// in the order of their names (their start).
func Transcripts(home string) []string {
	paths, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	return paths
}
