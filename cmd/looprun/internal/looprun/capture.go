package looprun

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
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
// sampleBytes bytes (for the error), and what Claude Code's JSON output
// says of the run (claudeOutput). Everything written goes on to a log,
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

	claude claudeOutput // read once finish has been called
	status statusReader // the agent's status blocks
}

// newCapture returns a capture that watches for marker ("" watches for
// nothing) and writes the output to log (nil: no log).
func newCapture(marker string, log io.Writer) *capture {
	c := &capture{marker: []byte(marker), keepMax: sampleBytes, log: log, logMax: logHeadBytes, sum: sha256.New()}
	c.claude.marker = c.marker
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
	c.claude.Write(p)
	c.status.Write(p)
	return len(p), nil
}

// finish is called once the output has ended: it reads the last line of
// Claude Code's JSON output, and the whole output as one JSON object when
// no line was its result, and the status block the output may end in.
func (c *capture) finish() {
	c.status.finish()
	if c.n <= int64(len(c.kept())) {
		c.claude.finish(c.kept())
	} else {
		c.claude.finish(nil)
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

// statusBlock returns the agent's last status block: the one in the
// result text of Claude Code's JSON output, else the last in the output.
func (c *capture) statusBlock() (statusBlock, bool) {
	if c.claude.result.hasBlock {
		return c.claude.result.block, true
	}
	return c.status.block()
}

// markerSeen reports whether the marker was in the output.
func (c *capture) markerSeen() bool { return c.seen }

// exampleSeen reports whether the agent quoted a status block as an
// example of the format (fenced, with more text after it): the default
// done marker, a field of that block, is then in the example.
func (c *capture) exampleSeen() bool {
	if c.claude.result.seen {
		return c.claude.result.example
	}
	return c.status.example
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
