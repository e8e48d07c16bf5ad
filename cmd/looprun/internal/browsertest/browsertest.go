// Package browsertest opens pages in a real headless Chromium, for tests
// that look at what looprun shows a person: Debian's chromium package (or
// LOOPBREAKER_CHROMIUM), driven through the DevTools protocol by
// chromedp.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path returns the Chromium to run, or skips the test where there is
// none; under CI (LOOPBREAKER_CI) a missing browser fails it: .ci/run
// installs one.
func Path(t testing.TB) string {
	t.Helper()
	path := os.Getenv("LOOPBREAKER_CHROMIUM")
	if path == "" {
		path, _ = exec.LookPath("chromium")
	}
	if path == "" {
		if os.Getenv("LOOPBREAKER_CI") != "" {
			t.Fatal("no chromium: .ci/run installs Debian's package")
		}
		t.Skip("no chromium (apt-get install chromium)")
	}
	return path
}

// New starts a headless Chromium of its own, width by height, with a
// fresh profile and nothing that goes to the network, and stops it at the
// test's end. Actions run on the context it returns (chromedp.Run).
func New(t testing.TB, width, height int) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "looprun-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // as root, in a container
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser, and waits for it
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	})
	if err := chromedp.Do(ctx); err != nil { // the browser starts, on a context without a deadline
		t.Fatal(err)
	}
	return ctx
}
