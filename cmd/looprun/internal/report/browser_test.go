package report

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/browsertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -update writes the screenshot the documentation shows,
// docs/images/report.png.
var update = flag.Bool("update", false, "write docs/images/report.png from the browser test")

// writePage writes the page of the loop in dir to <dir>/<loop>.report.html,
// as looprun report does, and returns its file URL.
func writePage(t testing.TB, st *story) string {
	t.Helper()
	l, err := Read(st.dir, st.loop)
	require.NoError(t, err)
	path := filepath.Join(st.dir, st.loop+".report.html")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, Write(f, []*Loop{l}, nil, Options{Now: st.clock.t, Location: time.UTC, LinkBase: st.dir}))
	require.NoError(t, f.Close())
	return "file://" + path
}

func TestAPersonOpensTheReportOfTheNightInABrowser(t *testing.T) {
	st := newStory(t)
	url := writePage(t, st)
	ctx := browsertest.New(t, 1280, 900)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url)))
	type seen struct {
		Title, State, Iterations, Stuck, Limits, LogHref, Text string
		Rows, Opened, GaveUp, Closed, Links, Warnings          int
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`(() => {
		const q = s => document.querySelector(s), n = s => document.querySelectorAll(s).length;
		return {
			Title: document.title,
			State: q(".card.state .big").innerText,
			Iterations: document.querySelectorAll(".card")[1].innerText,
			Stuck: q("#stuck h2").innerText,
			Limits: q("#limits tbody").innerText,
			LogHref: q("#i3 a[href$='.log']").href,
			Text: document.body.innerText,
			Rows: n("#iterations tbody tr"),
			Opened: n("#circuit tr.circuit_opened"),
			GaveUp: n("#circuit tr.gave_up"),
			Closed: n("#circuit tr.circuit_closed"),
			Links: n("#iterations a[href$='.log']"),
			Warnings: n("#spend circle.spend_warning"),
		};
	})()`))
	require.NoError(t, err)
	screenshot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	title, state, iterations, stuck, limits, logHref, text := got.Title, got.State, got.Iterations, got.Stuck, got.Limits, got.LogHref, got.Text
	rows, opened, gaveUp, closed, links, warnings := got.Rows, got.Opened, got.GaveUp, got.Closed, got.Links, got.Warnings

	// What the page says is what the state holds.
	s := st.stats
	assert.Equal(t, "looprun: loop", title)
	assert.Equal(t, s.State.String(), state)
	assert.Contains(t, iterations, "12")
	assert.Contains(t, iterations, "5 failed, 1 limited")
	assert.Equal(t, "Last stuck", stuck, "it closed since: a person skipped")
	assert.Contains(t, limits, "You've hit your limit")
	assert.Contains(t, limits, "lifted")
	assert.Equal(t, 13, rows, "12 iterations and the limited one")
	openings, gave := 0, 0
	for _, tr := range s.History {
		if tr.To.String() == "OPEN" {
			if tr.Reason.Kind.String() == "gave_up" {
				gave++
			} else {
				openings++
			}
		}
	}
	assert.Equal(t, openings, opened, "each opening of the history")
	assert.Equal(t, gave, gaveUp)
	assert.Equal(t, 1, gaveUp)
	assert.Equal(t, 1, closed, "the skip")
	assert.Equal(t, 13, links, "every iteration's log is kept")
	assert.Equal(t, "file://"+filepath.Join(st.dir, "logs", "loop-3.log"), logHref, "the link finds the log beside the page")
	assert.FileExists(t, strings.TrimPrefix(logHref, "file://"))
	assert.Equal(t, 1, warnings, "the spend warning, marked on the spend")
	assert.Contains(t, text, "change the approach entirely")

	img, err := png.Decode(bytes.NewReader(screenshot))
	require.NoError(t, err, "a PNG")
	assert.Equal(t, 1280, img.Bounds().Dx())
	assert.Greater(t, img.Bounds().Dy(), 1500, "the whole page")
	if *update {
		out := filepath.Join("..", "..", "..", "..", "docs", "images", "report.png")
		require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
		require.NoError(t, os.WriteFile(out, screenshot, 0o644))
	}
}

// BenchmarkBrowserOpens10000Iterations opens the page of a loop of
// 10,000 iterations in headless Chromium, and reports its size and how
// long the browser took, by the page's own clock (its navigation
// timing), to paint the top of the page, to parse the whole of it, and to
// load it (laid out, its load event).
func BenchmarkBrowserOpens10000Iterations(b *testing.B) {
	st := tellStory(b, b.TempDir(), 10000-12)
	url := writePage(b, st)
	info, err := os.Stat(strings.TrimPrefix(url, "file://"))
	require.NoError(b, err)
	ctx := browsertest.New(b, 1280, 900)
	var timing struct{ Paint, DOM, Load float64 }
	for b.Loop() {
		require.NoError(b, chromedp.Do(ctx, chromedp.Navigate(url)))
		var err error
		timing, err = chromedp.Run(ctx, chromedp.Evaluate[struct{ Paint, DOM, Load float64 }](`(() => {
			const n = performance.getEntriesByType("navigation")[0];
			const p = performance.getEntriesByName("first-contentful-paint")[0];
			return {Paint: p ? p.startTime : 0, DOM: n.domInteractive, Load: n.loadEventEnd};
		})()`))
		require.NoError(b, err)
	}
	b.ReportMetric(float64(info.Size())/(1<<20), "MiB/page")
	b.ReportMetric(timing.Paint, "ms-first-paint")
	b.ReportMetric(timing.DOM, "ms-parsed")
	b.ReportMetric(timing.Load, "ms-loaded")
}
