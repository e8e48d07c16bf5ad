// Package codextest runs the real Codex CLI in tests: the pinned release
// of the npm package @openai/codex, whose native binary needs no Node.js,
// offline and signed in to nothing, against a fake Responses API
// (fakemodel.OpenAI) on the loopback interface.
//
// Tests find the binary through the environment variable
// LOOPBREAKER_CODEX, else as codex on the PATH when it is the pinned
// version. .ci/run installs it and sets both LOOPBREAKER_CODEX and
// LOOPBREAKER_CI; under CI a missing binary fails the test, and elsewhere
// the test is skipped with a message that says how to install it.
//
// Start gives Codex a home of its own: a temporary CODEX_HOME whose
// config.toml makes the fake its model provider (wire_api "responses",
// an API key from a variable that holds no key), asks no approval and
// runs commands unsandboxed, and turns off what looks up github.com and
// chatgpt.com at start (the plugins, apps and remote_plugin features,
// analytics, the update check); HOME and TMPDIR are temporary too. On
// Linux, where the test may make a network namespace, the test's
// thread, the fake model and Codex live in one whose only interface is
// the loopback (package netns): nothing can reach the network, whatever
// Codex would try. Elsewhere the tests rely on the configuration, and
// assert that the fake model saw the requests.
package codextest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/loopbreaker/loopbreaker/internal/netns"
	"github.com/loopbreaker/loopbreaker/internal/pinned"
)

const (
	// Version is the Codex CLI release the tests are written against.
	Version = "0.169.0"
	// Package is the npm package that ships it.
	Package = "@openai/codex"
	// BinaryEnv names the environment variable that gives the binary's
	// path.
	BinaryEnv = "LOOPBREAKER_CODEX"
	// RequireEnv names the environment variable that makes a missing
	// binary a failure rather than a skip: .ci/run sets it.
	RequireEnv = pinned.RequireEnv
	// Model is the model the tests ask for: one Codex knows (it has the
	// model's metadata built in, and so offers its tools, apply_patch
	// among them) and the breaker's price table prices (gpt-5.5: $5 per
	// million input tokens, $0.50 cached, $30 output).
	Model = "gpt-5.5"
	// KeyEnv names the environment variable the fake provider's API key
	// is read from (its env_key); it holds no key.
	KeyEnv = "LOOPBREAKER_FAKE_OPENAI_KEY"
	// Key is what KeyEnv holds.
	Key = "sk-fake-key-for-tests"
)

// ErrNotFound is the error Binary returns when no Codex of Version is to
// be found.
var ErrNotFound = errors.New("codextest: Codex " + Version + " not found")

// release is the pinned release, as package pinned finds it.
var release = pinned.Binary{
	Command: "codex", Env: BinaryEnv, Install: Install, NotFound: ErrNotFound, Version: version,
	Is: func(v string) bool { return v == "codex-cli "+Version },
}

// Binary returns the path of Codex: BinaryEnv's, which must run, else
// codex on the PATH when it says it is Version. The error wraps
// ErrNotFound when there is neither.
func Binary() (string, error) { return release.Find() }

// version returns what the binary at path says of its version ("codex-cli
// 0.169.0"). It runs in a home of its own, which it removes: Codex
// writes helper files into its home even to say its version.
func version(path string) (string, error) {
	home, err := os.MkdirTemp("", "codextest-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(path, "--version")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	out, err := cmd.Output()
	return string(bytes.TrimSpace(out)), err
}

// nativeBinary is where npm puts the platform's native binary, below the
// install prefix, on Linux x86-64.
const nativeBinary = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

// Install is the command that installs the pinned binary, for a message.
const Install = "npm install --prefix ~/.cache/loopbreaker/codex-" + Version + " " + Package + "@" + Version +
	" && export " + BinaryEnv + "=~/.cache/loopbreaker/codex-" + Version + "/" + nativeBinary

// Require returns the binary's path (see Binary). Without it the test is
// skipped, saying how to install it, or fails under CI (RequireEnv set).
func Require(t testing.TB) string {
	t.Helper()
	return release.Require(t)
}

// Env is the environment a test runs Codex in.
type Env struct {
	// Bin is the path of Codex's binary.
	Bin string
	// Model is the fake Responses API Codex talks to.
	Model *fakemodel.OpenAI
	// Home is Codex's CODEX_HOME: its config.toml, and the sessions it
	// keeps.
	Home string
	// Offline says the test runs in a network namespace whose only
	// interface is the loopback (see the package comment); false where
	// no namespace could be made, and the test then relies on the
	// configuration and on asserting what the fake model saw.
	Offline bool
}

// Start readies a test to run Codex against a fake model that answers with
// answer: it finds the binary (Require), moves the test into a network
// namespace of its own where it can (Env.Offline), starts the fake model
// there, writes CODEX_HOME's config.toml (Config) with more lines after
// it (TOML: a key, such as stream_max_retries, lands in the fake
// provider's table, which comes last, and a table may follow), and sets the environment Codex reads, for the test and every process
// it starts (t.Setenv: the test must not be parallel). The model is
// closed when the test ends.
//
// The namespace belongs to the test's goroutine's thread, which is locked
// to it and ends with it: call Start on the test's goroutine, and start
// Codex (or what runs it) from that goroutine.
func Start(t testing.TB, answer fakemodel.Answerer, more ...string) *Env {
	t.Helper()
	e := &Env{Bin: Require(t)}
	e.Offline = netns.Isolate(t)
	e.Model = fakemodel.NewOpenAI(answer)
	t.Cleanup(e.Model.Close)
	home := t.TempDir()
	e.Home = filepath.Join(home, ".codex")
	if err := os.Mkdir(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	config := Config(e.Model.URL) + strings.Join(more, "\n")
	if err := os.WriteFile(filepath.Join(e.Home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		// Other ways to reach a model, or to configure Codex, that the
		// person running the tests may have set.
		"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_API_KEY",
		"CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_THREAD_ID",
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy",
	} {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
	for k, v := range map[string]string{
		"HOME":       home,
		"CODEX_HOME": e.Home,
		"TMPDIR":     t.TempDir(),
		KeyEnv:       Key,
	} {
		t.Setenv(k, v)
	}
	return e
}

// Config returns the config.toml that runs Codex against the fake
// Responses API at url, offline: the fake as the model provider, Model
// as the model, no approval asked and no sandbox (the tests' commands
// run as they would on a developer's machine), and no plugins, apps,
// remote plugins, analytics or update check, which would look up
// github.com and chatgpt.com.
func Config(url string) string {
	return `model = "` + Model + `"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
apps = false
remote_plugin = false

[model_providers.fake]
name = "fake model"
base_url = "` + url + `"
env_key = "` + KeyEnv + `"
wire_api = "responses"
`
}
