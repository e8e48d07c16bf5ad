package looprun

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/loopbreaker/loopbreaker"
)

// The status block a Ralph agent prints at the end of an iteration, as
// ralph-claude-code's prompt asks for it:
//
//	---RALPH_STATUS---
//	STATUS: IN_PROGRESS | COMPLETE | BLOCKED
//	TASKS_COMPLETED_THIS_LOOP: <number>
//	FILES_MODIFIED: <number>
//	TESTS_STATUS: PASSING | FAILING | NOT_RUN
//	WORK_TYPE: IMPLEMENTATION | TESTING | DOCUMENTATION | REFACTORING
//	EXIT_SIGNAL: false | true
//	RECOMMENDATION: <one line summary of what to do next>
//	---END_RALPH_STATUS---
//
// or in the colon form some prompts use, a "RALPH_STATUS:" line with the
// fields indented under it. looprun also reads two fields of its own,
// TASK: (the task the iteration worked on) and APPROACH: (how it went
// about it). The last whole block of the output wins.
const (
	statusBegin = "---RALPH_STATUS---"
	statusEnd   = "---END_RALPH_STATUS---"
	statusColon = "RALPH_STATUS:"

	// maxStatusLine bounds a line the status reader holds: a longer line
	// is no line of a block.
	maxStatusLine = 4 << 10
	// maxStatusLines bounds the lines of a block: one that goes on longer
	// without its end is no block.
	maxStatusLines = 40
	// maxStatusText bounds the text fields kept (TASK, APPROACH,
	// RECOMMENDATION), in bytes.
	maxStatusText = 200
)

// statusBlock is what a status block said. A field the block left out is
// zero, with its has... flag false.
type statusBlock struct {
	status         string // IN_PROGRESS, COMPLETE, BLOCKED, as given in upper case
	tasksCompleted int
	hasTasks       bool
	filesModified  int
	hasFiles       bool
	testsStatus    string // PASSING, FAILING, NOT_RUN
	workType       string // IMPLEMENTATION, TESTING, ...
	exitSignal     bool
	hasExitSignal  bool
	recommendation string
	task           string
	approach       string
}

// done reports whether the block says the work is done: EXIT_SIGNAL:
// true, or, without an EXIT_SIGNAL, STATUS: COMPLETE, as ralph-claude-code
// reads it (an explicit EXIT_SIGNAL: false wins over STATUS: COMPLETE).
func (b statusBlock) done() bool {
	if b.hasExitSignal {
		return b.exitSignal
	}
	return b.status == "COMPLETE"
}

// work is the kind of work the block says the iteration did, given the
// files it changed: IMPLEMENTATION is implementation; TESTING (or
// TEST_ONLY) that changed no file only ran the tests, and one that changed
// files worked on the tests, as does DEBUGGING; DOCUMENTATION,
// REFACTORING and any other kind are other work. No WORK_TYPE is
// unlabelled.
func (b statusBlock) work(filesChanged int) loopbreaker.WorkKind {
	switch b.workType {
	case "":
		return loopbreaker.WorkUnlabelled
	case "IMPLEMENTATION":
		return loopbreaker.WorkImplementation
	case "TESTING", "TEST_ONLY", "TESTS_ONLY":
		if filesChanged == 0 {
			return loopbreaker.WorkTestsOnly
		}
		return loopbreaker.WorkTestFix
	case "DEBUGGING":
		return loopbreaker.WorkTestFix
	}
	return loopbreaker.WorkOther
}

// set reads one "KEY: value" line into the block; false when the line is
// no such line. Keys that are not the block's are read and left out.
func (b *statusBlock) set(line string) bool {
	key, value, ok := strings.Cut(line, ":")
	key = strings.ToUpper(strings.TrimSpace(key))
	if !ok || key == "" || strings.Trim(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
		return false
	}
	value = strings.TrimSpace(value)
	switch key {
	case "STATUS":
		b.status = strings.ToUpper(value)
	case "TASKS_COMPLETED_THIS_LOOP":
		b.tasksCompleted, b.hasTasks = leadingNumber(value)
	case "FILES_MODIFIED":
		b.filesModified, b.hasFiles = leadingNumber(value)
	case "TESTS_STATUS":
		b.testsStatus = strings.ToUpper(value)
	case "WORK_TYPE":
		b.workType = strings.ToUpper(value)
	case "EXIT_SIGNAL":
		switch strings.ToLower(value) {
		case "true", "yes":
			b.exitSignal, b.hasExitSignal = true, true
		case "false", "no":
			b.exitSignal, b.hasExitSignal = false, true
		}
	case "RECOMMENDATION":
		b.recommendation = clip(value, maxStatusText)
	case "TASK":
		b.task = clip(value, maxStatusText)
	case "APPROACH":
		b.approach = clip(value, maxStatusText)
	}
	return true
}

// leadingNumber reads the number a value starts with ("2", "2 (login,
// logout)"); false when it starts with none. A huge number is a million.
func leadingNumber(v string) (int, bool) {
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(v[:min(end, 7)])
	if err != nil || end > 7 {
		return 1_000_000, true
	}
	return min(n, 1_000_000), true
}

// clip cuts s to at most n bytes, at a rune's start.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// statusReader finds the status blocks in an output as it streams, one
// line at a time, in bounded memory. Not safe for concurrent use.
type statusReader struct {
	line []byte // the line being written, up to maxStatusLine bytes
	long bool   // ...which is longer than that: it is passed over

	in    int // 0: outside a block; inDashes, inColon: in one
	lines int // lines of the block so far
	cur   statusBlock
	last  statusBlock // the last whole block
	seen  bool        // last holds one

	// A block inside a code fence (``` or ~~~) is a report when nothing
	// but the fence's end follows it, and an example (the agent showing
	// the format, then saying it is not done) when more text does.
	prev    []byte // the last line read, trimmed, up to maxMarkerLine bytes
	fenced  bool   // the block being read began right after a fence line
	fence   int    // after a fenced block: awaitingFence, afterFence
	before  statusBlock
	hadLast bool // before and hadLast: last and seen before the fenced block
	example bool // a fenced block was taken for an example
}

// The states after a fenced block.
const (
	awaitingFence = 1 + iota // the fence's end is to come
	afterFence               // the fence ended: any text now makes the block an example
)

const (
	inDashes = 1 + iota
	inColon
)

// Write takes the next piece of the output. Outside a block it looks for
// the name of a block's first line, RALPH_STATUS, and reads lines only
// from the line that has it: an agent's output is mostly no block, and
// is passed over at the speed of bytes.Index, with nothing copied but the
// start of a line the write cuts, up to maxMarkerLine bytes.
func (s *statusReader) Write(p []byte) {
	for len(p) > 0 {
		if s.fence == afterFence && len(bytes.TrimSpace(p)) > 0 {
			s.takeBack() // text after the fence's end
		}
		if s.in == 0 && s.fence != awaitingFence && len(s.line) == 0 && !s.long {
			j := bytes.Index(p, []byte(statusName))
			if j < 0 {
				// No block starts in p; one may start in its last line.
				end := bytes.LastIndexByte(p, '\n')
				if end >= 0 {
					s.remember(p[bytes.LastIndexByte(p[:end], '\n')+1 : end])
				}
				s.keep(p[end+1:])
				return
			}
			start := bytes.LastIndexByte(p[:j], '\n') + 1
			if start > 0 {
				s.remember(p[bytes.LastIndexByte(p[:start-1], '\n')+1 : start-1])
			}
			p = p[start:]
		}
		i := bytes.IndexByte(p, '\n')
		switch {
		case i < 0:
			s.keep(p)
			return
		case len(s.line) == 0 && !s.long:
			// The whole line is in p: read it where it is.
			s.read(p[:i], i > s.limit())
		default:
			s.keep(p[:i])
			s.read(s.line, s.long)
			s.line, s.long = s.line[:0], false
		}
		p = p[i+1:]
	}
}

// statusName is in the first line of a block, in either form.
const statusName = "RALPH_STATUS"

// limit is the longest line that matters: maxMarkerLine outside a block,
// maxStatusLine in one.
func (s *statusReader) limit() int {
	if s.in == 0 {
		return maxMarkerLine
	}
	return maxStatusLine
}

// maxMarkerLine bounds the line held outside a block, where only a line
// that starts one matters.
const maxMarkerLine = 64

// keep adds p to the line being written, unless the line is too long to
// matter: longer than maxMarkerLine outside a block, maxStatusLine in one.
func (s *statusReader) keep(p []byte) {
	if s.long || len(s.line)+len(p) > s.limit() {
		s.line, s.long = s.line[:0], true
		return
	}
	s.line = append(s.line, p...)
}

// finish reads the last line, which may end without a newline, and takes
// a block the output ended in as whole: an agent cut short after its
// block's last field has still said it.
func (s *statusReader) finish() {
	if s.long || len(s.line) > 0 {
		s.read(s.line, s.long)
	}
	s.line, s.long = nil, false
	if s.in != 0 && s.lines > 0 {
		s.close()
	}
}

// block returns the last whole block, if any.
func (s *statusReader) block() (statusBlock, bool) { return s.last, s.seen }

// read reads one line; long says it was too long to hold, and line is
// none of it.
func (s *statusReader) read(line []byte, long bool) {
	trimmed := bytes.TrimSpace(line)
	if long {
		defer s.remember(nil)
	} else {
		defer s.remember(trimmed)
	}
	if s.in == 0 && s.fence == awaitingFence {
		switch {
		case len(trimmed) == 0 && !long:
			return
		case !long && isFence(trimmed):
			s.fence = afterFence
			return
		}
		s.takeBack() // more text inside the fence
	}
	switch {
	case long:
	case bytes.Equal(trimmed, []byte(statusBegin)):
		s.in, s.lines, s.cur, s.fenced = inDashes, 0, statusBlock{}, isFence(s.prev)
		return
	case bytes.Equal(trimmed, []byte(statusColon)):
		s.in, s.lines, s.cur, s.fenced = inColon, 0, statusBlock{}, isFence(s.prev)
		return
	case s.in == 0:
		return
	case bytes.Equal(trimmed, []byte(statusEnd)):
		s.close()
		return
	}
	if s.in == 0 {
		return
	}
	s.lines++
	switch {
	case s.lines > maxStatusLines:
		s.in = 0 // no block goes on this long
	case s.in == inColon && (long || len(trimmed) == 0 || !indented(line) || !s.cur.set(string(trimmed))):
		// The colon form ends at the first line that is not an
		// indented field.
		if s.lines > 1 {
			s.lines--
			s.close()
		} else {
			s.in = 0
		}
	case s.in == inDashes && !long:
		s.cur.set(string(trimmed))
	}
}

// indented reports whether line starts with a space or a tab.
func indented(line []byte) bool {
	return len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
}

func (s *statusReader) close() {
	if s.fenced {
		s.before, s.hadLast, s.fence = s.last, s.seen, awaitingFence
	} else {
		s.fence = 0
	}
	s.last, s.seen, s.in = s.cur, true, 0
}

// takeBack takes the fenced block just read back: text followed it, so it
// was an example of the format, not the agent's report.
func (s *statusReader) takeBack() {
	s.last, s.seen, s.fence, s.example = s.before, s.hadLast, 0, true
}

// remember keeps line as the last line read (nil: one too long to hold).
func (s *statusReader) remember(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) > maxMarkerLine {
		line = nil
	}
	s.prev = append(s.prev[:0], line...)
}

// isFence reports whether a trimmed line opens or closes a Markdown code
// fence: three backticks or tildes, and perhaps a language.
func isFence(line []byte) bool {
	return bytes.HasPrefix(line, []byte("```")) || bytes.HasPrefix(line, []byte("~~~"))
}

// parseStatusBlock returns the last status block in text (the result
// text of Claude Code's JSON output, where the block is a string's lines).
func parseStatusBlock(text string) (statusBlock, bool) {
	s := readStatus(text)
	return s.block()
}

// readStatus reads text's status blocks.
func readStatus(text string) *statusReader {
	var s statusReader
	s.Write([]byte(text))
	s.finish()
	return &s
}
