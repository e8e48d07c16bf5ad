package looprun

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
)

// sampleBytes is how much of the end of an iteration's output looprun
// keeps in memory for loopbreaker.ExtractError, which finds the error of
// a failed iteration.
//
// ExtractError picks the last error in the output, and a failing agent's
// or tool's error comes at its end: on the error corpus and the agent
// transcripts of the loopbreaker tests (179 outputs of go, gcc, rustc,
// tsc, node, python, pytest, java, git and curl, plain and stream-JSON)
// the last 1,218 bytes, cut at a line start, always gave the same answer
// as the whole output. The start of the output matters only when nothing
// after it is an error, so looprun keeps the end alone, and keeps a lot of
// it: a go test timeout's report of a thousand goroutines took 156 KB, and
// a final stream-JSON result line may be long. It costs 2 MiB of memory
// (the buffer slides). What it gives up: in a longer output, an error
// whose first line is not in the last mebibyte (one printed early and
// followed by more than a mebibyte of other text, or a report longer than
// that) is not found; the error found in the last mebibyte, or the exit
// status, stands for it.
const sampleBytes = 1 << 20

// capture is where the output of an iteration goes, written as it comes.
// It keeps, in bounded memory whatever the command prints, what the runner
// needs to know about the output: its length, a hash of it (to tell
// whether it changed), whether the done marker is in it, its last
// sampleBytes bytes (for the error), and what an agent's output says of
// the run (each agent's reader, package agent, reads its lines). Everything written goes on to a log,
// which keeps the first logHeadBytes; finishLog then adds the end that is
// still in memory.
//
// To show the output as it comes as well, write to
// io.MultiWriter(terminal, capture). A capture is not safe for concurrent
// use: one goroutine writes the output to it (the copy of the command's
// output pipe), and the runner reads it once that has ended.
type capture struct {
	marker  []byte
	keepMax int // bytes of the end kept in memory: sampleBytes
	log     io.Writer
	logMax  int64 // bytes written to the log as they come: logHeadBytes

	n      int64
	sum    hash.Hash
	seen   bool   // the marker has been seen
	carry  []byte // the last len(marker)-1 bytes: a marker may be split across writes
	joint  []byte // carry and the start of the next write, where a split marker is
	tail   []byte // the last keepMax to 2*keepMax bytes
	logged int64  // bytes written to the log
	logErr error  // the first error writing the log; no more is written

	line []byte // the line being written, up to maxJSONLine bytes
	long bool   // ...which is longer than that: it is passed over
	// plainMarker says the marker was in a line that is no agent's:
	// output of the command's own, around the agent's.
	plainMarker bool
	readers     []agent.Output // every agent's: a command may run any of them
	agents      []*agent.Agent // whose readers they are
	run         agent.Run      // what the agent's output told, once finish has been called
	ran         *agent.Agent   // whose output it was; nil for none
	status      statusReader   // the agent's status blocks
}

// maxJSONLine bounds the line the capture holds for the agents' readers
// while it streams: a line longer than this (a huge tool result, or a
// result text longer than a mebibyte) is passed over, unread.
const maxJSONLine = 1 << 20

// newCapture returns a capture that watches for marker ("" watches for
// nothing) and writes the output to log (nil: no log).
func newCapture(marker string, log io.Writer) *capture {
	c := &capture{marker: []byte(marker), keepMax: sampleBytes, log: log, logMax: logHeadBytes, sum: sha256.New()}
	for _, ag := range agent.All {
		c.readers, c.agents = append(c.readers, ag.NewOutput()), append(c.agents, ag)
	}
	return c
}

// Write takes the next piece of the output. It never fails: a log that
// cannot be written stops being written (see logError), and the command
// goes on.
func (c *capture) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.sum.Write(p)
	c.watch(p)
	c.keep(p)
	c.writeLog(p)
	c.lines(p)
	c.status.Write(p)
	return len(p), nil
}

// lines hands each whole line of p, with the line written before it, to
// the agents' readers.
func (c *capture) lines(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.keepLine(p)
			return
		}
		c.keepLine(p[:i])
		if !c.long {
			c.readLine(c.line)
		}
		c.line, c.long = c.line[:0], false
		p = p[i+1:]
	}
}

// keepLine adds p to the line being written, unless the line is too long.
func (c *capture) keepLine(p []byte) {
	if c.long || len(c.line)+len(p) > maxJSONLine {
		c.line, c.long = c.line[:0], true
		return
	}
	c.line = append(c.line, p...)
}

// readLine gives a line to the agents' readers, in turn, until one takes
// it; a line none takes is the command's own, where the done marker
// counts.
func (c *capture) readLine(line []byte) {
	taken := false
	for _, r := range c.readers {
		if taken = r.Line(line); taken {
			break
		}
	}
	if !taken && len(c.marker) > 0 && bytes.Contains(line, c.marker) {
		if t := bytes.TrimSpace(line); len(t) == 0 || t[0] != '{' {
			c.plainMarker = true
		}
	}
}

// finish is called once the output has ended, exitCode the command's exit
// status: it reads the last line, which may end without a newline, the
// whole output when it is held whole (a JSON object spread over lines),
// and the status block the output may end in; the run is the first
// agent's whose output it was.
func (c *capture) finish(exitCode int) {
	c.status.finish()
	if !c.long && len(c.line) > 0 {
		c.readLine(c.line)
	}
	c.line, c.long = nil, false
	var whole []byte
	if c.n <= int64(len(c.kept())) {
		whole = c.kept()
	}
	c.run, c.ran = agent.Run{}, nil
	for i, r := range c.readers {
		if run := r.Finish(whole, exitCode); run.Seen && c.ran == nil {
			c.run, c.ran = run, c.agents[i]
		}
	}
}

// watch looks for the marker in p and across the boundary with the
// writes before it.
func (c *capture) watch(p []byte) {
	m := len(c.marker)
	if c.seen || m == 0 {
		return
	}
	c.joint = append(append(c.joint[:0], c.carry...), p[:min(len(p), m-1)]...)
	if bytes.Contains(c.joint, c.marker) || bytes.Contains(p, c.marker) {
		c.seen = true
		return
	}
	if len(p) >= m-1 {
		c.carry = append(c.carry[:0], p[len(p)-(m-1):]...)
	} else {
		c.carry = append(c.carry[:0], c.joint[max(0, len(c.joint)-(m-1)):]...)
	}
}

// keep adds p to the kept end of the output. The buffer slides: when it
// would pass twice keepMax, its last keepMax bytes move to its front, so
// each byte is copied at most once more.
func (c *capture) keep(p []byte) {
	if len(p) >= c.keepMax {
		c.tail = append(c.tail[:0], p[len(p)-c.keepMax:]...)
		return
	}
	if len(c.tail)+len(p) > 2*c.keepMax {
		drop := len(c.tail) + len(p) - c.keepMax
		c.tail = append(c.tail[:0], c.tail[drop:]...)
	}
	if need := len(c.tail) + len(p); need > cap(c.tail) {
		// Grow by doubling, up to the 2*keepMax the buffer slides in.
		grown := make([]byte, len(c.tail), min(2*c.keepMax, max(2*cap(c.tail), need, 4096)))
		copy(grown, c.tail)
		c.tail = grown
	}
	c.tail = append(c.tail, p...)
}

// writeLog writes to the log what of p fits in its first logMax bytes.
func (c *capture) writeLog(p []byte) {
	if c.log == nil || c.logErr != nil || c.logged >= c.logMax {
		return
	}
	p = p[:min(int64(len(p)), c.logMax-c.logged)]
	n, err := c.log.Write(p)
	c.logged += int64(n)
	c.logErr = err
}

// length is how many bytes were written.
func (c *capture) length() int64 { return c.n }

// hash is the SHA-256 of everything written.
func (c *capture) hash() [sha256.Size]byte {
	var h [sha256.Size]byte
	c.sum.Sum(h[:0])
	return h
}

// markerSeen reports whether the marker was anywhere in the output.
func (c *capture) markerSeen() bool { return c.seen }

// words returns what the agent's own last words say: their status block
// (hasBlock), and whether they quote one as an example of the format; ok
// is false when the output had no words of an agent's.
func (c *capture) words() (block statusBlock, hasBlock, example, ok bool) {
	if !c.run.Seen || !c.run.HasWords {
		return statusBlock{}, false, false, false
	}
	status := readStatus(c.run.Words)
	block, hasBlock = status.block()
	return block, hasBlock, status.example, true
}

// statusBlock returns the agent's last status block: the one in its own
// last words (Claude Code's result text, Codex's last message), else the
// last in the output.
func (c *capture) statusBlock() (statusBlock, bool) {
	if block, ok, _, _ := c.words(); ok {
		return block, true
	}
	return c.status.block()
}

// exampleSeen reports whether the agent quoted a status block as an
// example of the format (fenced, with more text after it): the default
// done marker, a field of that block, is then in the example.
func (c *capture) exampleSeen() bool {
	if _, _, example, ok := c.words(); ok {
		return example
	}
	return c.status.example
}

// doneMarkerSeen reports whether the output holds the done marker where it
// is the agent's word. When the output is an agent's (its result, or its
// events), that is its own last words, and any line that is no agent's
// (what a script around it printed); not the session's other events, its
// steps: a tool result that prints PROMPT.md, or a file holding a status
// block, is no signal. Otherwise it is anywhere.
func (c *capture) doneMarkerSeen() bool {
	if c.run.Seen {
		return c.plainMarker || len(c.marker) > 0 && strings.Contains(c.run.Words, string(c.marker))
	}
	return c.markerSeen()
}

// limitText returns the text to look for a provider limit in, once the
// run failed: the agent's own message of why it gave up, when its events
// tell the outcome (a failed command is the agent's doing, whatever its
// output says, and Codex prints the limits it got past while retrying
// too); otherwise the end of the output.
func (c *capture) limitText() string {
	if c.run.Told {
		return c.run.LimitText
	}
	return c.sample()
}

// outputError returns the error the output shows, for a run that passed:
// of an agent whose events tell the outcome, the error it got past (the
// last command that failed with one); of another command, the error
// ExtractError finds in the end of the output.
func (c *capture) outputError() string {
	if c.run.Told {
		return c.run.Noticed
	}
	return loopbreaker.ExtractError(c.sample())
}

// claimText returns the agent's last words, where a claim of done is
// looked for: of an agent whose events tell them, its last message (a
// command's output is not its word); else the end of the output (see
// claimsDone).
func (c *capture) claimText() string {
	if c.run.Told {
		return c.run.Words
	}
	return c.sample()
}

// kept is the end of the output held in memory: all of it, or its last
// keepMax bytes.
func (c *capture) kept() []byte {
	return c.tail[max(0, len(c.tail)-c.keepMax):]
}

// sample is the output for ExtractError: all of it when it is at most
// keepMax bytes long; else its last keepMax bytes from the first line
// that starts in them, since a line cut at its start could read as
// something else ("" when no line starts in them).
func (c *capture) sample() string {
	t := c.kept()
	if c.n > int64(len(t)) {
		i := bytes.IndexByte(t, '\n')
		if i < 0 {
			return ""
		}
		t = t[i+1:]
	}
	return string(t)
}

// finishLog completes the log once the output has ended: when the output
// was longer than the log's first logMax bytes, it adds the end of the
// output held in memory, after a line that says how much was left out
// (none, when the end held joins the start written). It returns the first
// error writing the log.
func (c *capture) finishLog() error {
	if c.log == nil || c.logErr != nil || c.logged == c.n {
		return c.logErr
	}
	rest := c.n - c.logged
	end := c.kept()
	if int64(len(end)) >= rest {
		_, c.logErr = c.log.Write(end[int64(len(end))-rest:])
		return c.logErr
	}
	_, c.logErr = fmt.Fprintf(c.log, "\n[looprun: %d bytes of output cut here; the last %d bytes follow]\n", rest-int64(len(end)), len(end))
	if c.logErr == nil {
		_, c.logErr = c.log.Write(end)
	}
	return c.logErr
}
