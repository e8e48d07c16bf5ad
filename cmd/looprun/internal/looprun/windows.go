package looprun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/windows"
)

// A subscriber's budget is a share of the provider's usage windows (the
// 5-hour and the weekly one), which the agents say as they run: Claude
// Code in a rate_limit_event of its stream-json output, for a subscriber,
// after each response; Codex in the rate_limits of the token_count events
// of its rollout, the session's transcript, as its events (codex exec
// --json) say nothing of them. -max-window-share stops the loop at a share
// of them.

// windowObserver is a breaker that hears the usage windows
// (*loopbreaker.CircuitBreaker is one).
type windowObserver interface {
	ObserveWindow(loopbreaker.Window)
}

// reportWindows tells the breaker how much of the provider's usage windows
// the run's agent said is used, before the iteration is recorded; a
// breaker that hears no windows is told nothing.
func (r *runner) reportWindows(out *capture) {
	wo, ok := r.cb.(windowObserver)
	if !ok {
		return
	}
	ws := out.claude.windows
	if out.claude.codex.seen && out.claude.codex.thread != "" {
		ws = append(ws, codexWindows(codexHome(os.Getenv), out.claude.codex.thread)...)
	}
	for _, w := range ws {
		wo.ObserveWindow(w)
	}
}

// codexHome is Codex's home: $CODEX_HOME, else ~/.codex; "" when neither
// is known.
func codexHome(env func(string) string) string {
	if d := env("CODEX_HOME"); d != "" {
		return d
	}
	if h := env("HOME"); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// maxRolloutLine bounds a line of the rollout that is read: the
// token_count events are small, and a longer line (a tool's output) is
// passed over.
const maxRolloutLine = 1 << 20

// codexWindows returns the windows the last token_count event of the
// thread's rollout reports, in Codex's home ($CODEX_HOME/sessions/<year>/
// <month>/<day>/rollout-<time>-<thread>.jsonl); nil when there is none.
func codexWindows(home, thread string) []loopbreaker.Window {
	if home == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	if len(paths) == 0 {
		return nil
	}
	f, err := os.Open(paths[len(paths)-1])
	if err != nil {
		return nil
	}
	defer f.Close()
	return lastWindows(f)
}

// lastWindows returns the windows of the last line of rd that reports
// them (windows.FromCodex), reading it a line at a time.
func lastWindows(rd io.Reader) []loopbreaker.Window {
	var last []loopbreaker.Window
	br := bufio.NewReaderSize(rd, 64<<10)
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case long:
		case len(line)+len(chunk) > maxRolloutLine:
			line, long = line[:0], true
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !long {
			if ws, ok := windows.FromCodex(bytes.TrimSpace(line)); ok {
				last = ws
			}
		}
		line, long = line[:0], false
		if err != nil {
			return last
		}
	}
}

// windowShare handles a refusal at -max-window-share: with
// -window-share-stop, the loop stops (exit 5); otherwise it waits, with a
// countdown, for the window's reset, as the person asked.
func (r *runner) windowShare(ctx context.Context, d loopbreaker.Decision) (code int, stop bool) {
	if d.RetryAfter <= 0 {
		r.stopped = d.Reason.String()
		return exitBudget, true
	}
	until := r.clock.Now().Add(d.RetryAfter)
	fmt.Fprintf(r.out, "      %s\n      waiting %s, until %s\n", d.Reason, d.RetryAfter.Round(time.Second), r.clockTime(until))
	return r.waitWithCountdown(ctx, countdown{what: "the window's reset", until: until, inLog: true})
}
