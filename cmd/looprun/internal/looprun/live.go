package looprun

import (
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// liveOutput is where the command's output is shown as it comes (unless
// -quiet), and, on a terminal, the status line while an iteration runs:
// one line, redrawn in place each second, that the output wipes as it
// comes and that comes back once the output rests at a line's end, or
// rests mid-line for restAfter (an agent's "Thinking..." without a
// newline): that line is then ended, and the status line drawn under it.
// Off a
// terminal (a pipe, a log) there is no status line, and nothing but the
// output is written: no carriage returns, no escape sequences. Safe for
// concurrent use: the copy of the command's output and the status line's
// ticker write to it at once.
type liveOutput struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool // w is a terminal: the status line is shown
	quiet    bool // the command's output is not shown

	midLine bool // the last byte of output shown was not a newline
	status  bool // the status line is on the screen

	now       func() time.Time // the real clock, which tests set; nil: time.Now
	lastWrite time.Time        // when the output was last shown
}

// restAfter is how long output that stops mid-line rests before the
// status line ends its line and shows under it.
const restAfter = time.Second

// clock returns the time now.
func (l *liveOutput) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// statusWidth bounds the status line, so that it never wraps on a
// terminal of 80 columns: a wrapped line is not redrawn in place.
const statusWidth = 79

// clearLine takes the cursor to the start of the line and clears it.
const clearLine = "\r\x1b[K"

// Write shows the command's output. It never fails: a terminal that went
// away must not stop the command, whose output the capture still takes.
func (l *liveOutput) Write(p []byte) (int, error) {
	if l.quiet || len(p) == 0 {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wipe()
	_, _ = l.w.Write(p)
	l.midLine = p[len(p)-1] != '\n'
	l.lastWrite = l.clock()
	return len(p), nil
}

// showStatus draws the status line, in place of the one shown, when the
// output rests at a line's end, or has rested mid-line for restAfter (its
// line is then ended); nothing off a terminal.
func (l *liveOutput) showStatus(text string) {
	if !l.terminal {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.midLine {
		if l.clock().Sub(l.lastWrite) < restAfter {
			return // the output's line is still being written: the status line waits
		}
		_, _ = io.WriteString(l.w, "\n") // it rests: the rest of it goes on the next line
		l.midLine = false
	}
	if utf8.RuneCountInString(text) > statusWidth {
		text = string([]rune(text)[:statusWidth-3]) + "..."
	}
	_, _ = io.WriteString(l.w, clearLine+text)
	l.status = true
}

// endLine makes the next text the runner writes start a line of its own:
// it wipes the status line, and ends a line the output left open.
func (l *liveOutput) endLine() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wipe()
	if l.midLine {
		_, _ = io.WriteString(l.w, "\n")
		l.midLine = false
	}
}

// wipe clears the status line, if it is shown.
func (l *liveOutput) wipe() {
	if l.status {
		_, _ = io.WriteString(l.w, clearLine)
		l.status = false
	}
}

// statusTicker redraws the status line each second until stop is called.
// text gives the line from the time elapsed. On a terminal only.
type statusTicker struct {
	stopOnce sync.Once
	done     chan struct{}
	ended    chan struct{}
}

// startStatus starts the status line of a run that started now: drawn at
// once, then each second. Off a terminal it does nothing.
func (l *liveOutput) startStatus(text func(elapsed time.Duration) string) *statusTicker {
	t := &statusTicker{done: make(chan struct{}), ended: make(chan struct{})}
	if !l.terminal {
		close(t.ended)
		return t
	}
	started := time.Now() // the command runs in real time, whatever the runner's clock
	l.showStatus(text(0))
	go func() {
		defer close(t.ended)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-t.done:
				return
			case now := <-tick.C:
				l.showStatus(text(now.Sub(started)))
			}
		}
	}()
	return t
}

// stop stops the ticker and waits for it; the caller wipes the line
// (endLine).
func (t *statusTicker) stop() {
	t.stopOnce.Do(func() { close(t.done) })
	<-t.ended
}
