package errtext

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxExtractedBytes bounds the result of ExtractError, in bytes.
const MaxExtractedBytes = 4096

// ExtractError finds the error in an agent's raw output and returns it, or
// "" when there is none; loopbreaker.ExtractError documents for users what
// it finds. It reads the output once, line by line (blockScanner). Of the
// lines that are JSON objects, those that hold "error" and, read without
// decoding, a key that may signal an error (maySignalError) are decoded
// after the pass, the last first, until one holds a strong error, and
// searched for an object that signals an error (stage 1, jsonLineError):
// decoding costs, and only the last error counts. The other lines start
// error blocks (classifyLine), which go on over the lines that belong to
// them (continues) (stage 2). The result is the last strong structured
// error, else the last strong block, else the last weak structured error,
// else the last weak block; when a structured error's message holds a
// strong block, that block. It is cut to MaxExtractedBytes (capExtract).
func ExtractError(output string) string {
	sc := blockScanner{decodeJSON: true}
	sc.scan(output)
	if sc.mayHoldJSONError {
		sc.readJSONErrors(output, sc.lastJSONStart)
	}
	switch {
	case sc.jsonFound:
		msg := sc.jsonMsg
		inner := blockScanner{}
		inner.scan(msg)
		if inner.hasStrong {
			return inner.text(msg, inner.strong)
		}
		return capExtract(msg, kindNone)
	case sc.hasStrong:
		return sc.text(output, sc.strong)
	case sc.jsonWeakFound:
		return capExtract(sc.jsonWeakMsg, kindNone)
	case sc.hasWeak:
		return sc.text(output, sc.weak)
	}
	return ""
}

// blockKind says what started an error block, and so which lines go on
// with it.
type blockKind uint8

const (
	kindNone      blockKind = iota
	kindPanic               // Go panic or runtime fatal error
	kindTraceback           // Python traceback
	kindMessage             // an error or exception line, with frames and context
	kindCompile             // compiler location lines
	kindIndented            // a test failure: the lines indented below it
	kindRustPanic           // Rust panic: the line and the message after it
	kindConflict            // git merge conflicts
	kindLine                // a single strong line
	kindWeak                // a summary line
	kindTestRun             // go test -v output of one test: an error if it ends in --- FAIL
)

// span is a block: s[start:end] of the scanned text.
type span struct {
	start, end int
	kind       blockKind
}

// headMax is how much of a line (after indentation, without ANSI escapes)
// the classification reads.
const headMax = 256

// blockScanner finds error blocks in one pass over the lines of a text.
type blockScanner struct {
	decodeJSON bool // read JSON lines as data (stage 1)

	cur      span
	open     bool
	indent   int  // indentation of the block's first line
	blank    bool // blank lines follow cur.end
	finished bool // traceback: exception line seen; Rust panic: message seen
	brace    bool // a continuation line ended in " {" (Node's error object)

	strong, weak       span
	hasStrong, hasWeak bool

	// The last line that may hold a structured error starts at
	// lastJSONStart (stage 1); readJSONErrors decodes it and those before.
	mayHoldJSONError bool
	lastJSONStart    int

	jsonFound, jsonWeakFound bool
	jsonMsg, jsonWeakMsg     string

	buf [headMax]byte
}

// scan reads s line by line.
func (b *blockScanner) scan(s string) {
	for i := 0; i < len(s); {
		eol := lineEnd(s, i)
		b.line(s, i, eol)
		i = eol + 1
	}
	b.close()
}

// close ends the open block and keeps it if it is the last of its kind.
func (b *blockScanner) close() {
	if !b.open {
		return
	}
	b.open = false
	switch b.cur.kind {
	case kindTestRun:
		// The test did not fail (or its end was not seen).
	case kindWeak:
		b.weak, b.hasWeak = b.cur, true
	default:
		b.strong, b.hasStrong = b.cur, true
	}
}

// line handles the line s[i:eol].
func (b *blockScanner) line(s string, i, eol int) {
	first, indent, head := b.lineHead(s, i, eol)
	if head == "" {
		if b.open {
			b.blank = true
		}
		return
	}
	if line, ok := jsonLine(s, first, eol); ok {
		// A JSON line is data: it ends any block, and stage 1 reads it.
		b.close()
		if b.decodeJSON && mayHoldJSONError(line) {
			b.mayHoldJSONError, b.lastJSONStart = true, i
		}
		return
	}
	if b.open && b.continues(s, first, eol, indent, head) {
		b.cur.end = eol
		b.blank = false
		return
	}
	b.close()
	kind := classifyLine(s, first, eol, indent, head)
	if kind == kindNone {
		return
	}
	b.cur = span{start: i, end: eol, kind: kind}
	b.open, b.indent, b.blank, b.brace = true, indent, false, false
	b.finished = kind == kindRustPanic && !strings.HasSuffix(head, ":")
}

// jsonLine returns the line s[first:eol], its content starting at
// s[first], without its end, and whether it is a JSON object: it opens
// with '{' and ends with '}'.
func jsonLine(s string, first, eol int) (string, bool) {
	line := trimLineEnd(s[first:eol])
	return line, len(line) > 1 && line[0] == '{' && line[len(line)-1] == '}'
}

// mayHoldJSONError reports whether the JSON line may hold a structured
// error: it holds "error" in any case, and maySignalError.
func mayHoldJSONError(line string) bool {
	return maySignalError(line) && containsFoldError(line)
}

// readJSONErrors decodes the JSON lines of s that may hold a structured
// error, from the one that starts at s[start] back to the first line,
// until one holds a strong error: it finds the last strong error of s, and
// the last weak one after it.
func (b *blockScanner) readJSONErrors(s string, start int) {
	for i := start; ; {
		eol := lineEnd(s, i)
		first, _, _ := b.lineHead(s, i, eol)
		if line, ok := jsonLine(s, first, eol); ok && mayHoldJSONError(line) {
			if msg, weak, ok := jsonLineError(line); ok {
				if !weak {
					b.jsonFound, b.jsonMsg = true, msg
					return
				}
				if !b.jsonWeakFound {
					b.jsonWeakFound, b.jsonWeakMsg = true, msg
				}
			}
		}
		if i == 0 {
			return
		}
		i = strings.LastIndexByte(s[:i-1], '\n') + 1
	}
}

// lineHead returns the index of the first byte of the line s[i:eol] after
// its indentation and ANSI escapes, the number of blanks in that
// indentation, and the head of the line's content: up to headMax bytes with
// escapes removed and the line end trimmed. The head is "" for a blank line.
func (b *blockScanner) lineHead(s string, i, eol int) (first, indent int, head string) {
	first = i
	for first < eol {
		switch c := s[first]; c {
		case ' ', '\t':
			indent++
			first++
		case 0x1b:
			first = min(escapeEnd(s, first), eol)
		default:
			goto content
		}
	}
	return eol, indent, ""
content:
	end := min(eol, first+headMax)
	if strings.IndexByte(s[first:end], 0x1b) < 0 {
		return first, indent, trimLineEnd(s[first:end])
	}
	n := 0
	for j := first; j < eol && n < headMax; {
		if s[j] == 0x1b {
			j = escapeEnd(s, j)
			continue
		}
		b.buf[n] = s[j]
		n++
		j++
	}
	return first, indent, trimLineEnd(string(b.buf[:n]))
}

// continues reports whether the line (content from s[first], head its
// cleaned start) goes on with the open block.
func (b *blockScanner) continues(s string, first, eol, indent int, head string) bool {
	kind := b.cur.kind
	if kind == kindWeak || kind == kindLine {
		return false
	}
	if kind == kindRustPanic {
		if b.finished || b.blank {
			return false
		}
		b.finished = true
		return true
	}
	if kind == kindTestRun && !b.blank && indent == b.indent && strings.HasPrefix(head, "--- FAIL") {
		// The test's own output came first (go test -v); the block is an
		// error now, and goes on over the lines indented below.
		b.cur.kind = kindIndented
		return true
	}
	if kind == kindTraceback && !b.finished {
		// Everything up to and including the exception line.
		if indent <= b.indent {
			b.finished = true
		}
		return true
	}
	if b.blank {
		switch kind {
		case kindPanic:
			return hasAnyPrefix(head, "goroutine ", "runtime stack:", "panic: ")
		case kindMessage:
			return hasAnyPrefix(head, "Caused by:", "caused by:")
		case kindIndented:
			// Test runners (jest, pytest) separate the parts of one
			// failure with blank lines; the indentation holds it together.
			return indent > b.indent
		}
		return false
	}
	if indent > b.indent {
		if kind == kindMessage && strings.HasSuffix(head, " {") {
			b.brace = true
		}
		return true
	}
	switch kind {
	case kindPanic:
		return hasAnyPrefix(head, "[signal", "goroutine ", "created by ", "panic: ", "fatal error: ",
			"runtime stack:", "[recovered") || isGoCallLine(head)
	case kindMessage:
		switch {
		case hasAnyPrefix(head, "Caused by:", "caused by:", "Require stack:", "- ", "|", "-->"),
			isGutterLine(head):
			return true
		case head == "}" && b.brace:
			b.brace = false
			return true
		}
		return frameLineEnd(s, first, true) >= 0
	case kindCompile:
		if sev, ok := parseLocation(head); ok && indent == b.indent {
			return sev != sevWarning
		}
		return isGutterLine(head)
	case kindConflict:
		return hasAnyPrefix(head, "CONFLICT (", "Automatic merge failed")
	}
	return false
}

// classifyLine returns the kind of block the line starts, or kindNone.
func classifyLine(s string, first, eol, indent int, head string) blockKind {
	if isWeakLine(head) {
		return kindWeak
	}
	switch {
	case hasAnyPrefix(head, "panic: ", "fatal error: "):
		return kindPanic
	case strings.HasPrefix(head, "Traceback (most recent call last):"):
		return kindTraceback
	case strings.HasPrefix(head, "Exception in thread "):
		return kindMessage
	case strings.HasPrefix(head, "thread '") && strings.Contains(head, " panicked at "):
		return kindRustPanic
	case hasAnyPrefix(head, "--- FAIL", "FAIL ", "FAIL:", "FAILED "):
		return kindIndented
	case hasAnyPrefix(head, "=== RUN ", "=== CONT ", "=== NAME "):
		return kindTestRun
	case strings.HasPrefix(head, "CONFLICT ("):
		return kindConflict
	}
	if indent == 0 {
		if sev, ok := parseLocation(head); ok {
			if sev == sevError {
				return kindCompile
			}
			return kindNone
		}
	}
	if isSeverityLine(head) || isExceptionLine(head) {
		return kindMessage
	}
	if isToolErrorLine(head) {
		return kindLine
	}
	line := trimLineEnd(s[first:eol])
	if hasAnySuffix(line, ": command not found", ": No such file or directory", ": Permission denied") {
		return kindLine
	}
	return kindNone
}

// isWeakLine reports whether head is a summary line that restates an error
// printed before it.
func isWeakLine(head string) bool {
	for _, p := range [...]string{"exit status ", "Exit status ", "exit code ", "Exit code "} {
		if strings.HasPrefix(head, p) {
			_, ok := afterCount(head[len(p):])
			return ok
		}
	}
	switch {
	case head == "FAIL" || strings.HasPrefix(head, "FAIL\t") || strings.HasPrefix(head, "FAILED ("):
		return true
	case strings.Contains(head, "previous error"):
		return true
	case strings.HasPrefix(head, "make: *** ") || strings.HasPrefix(head, "make[") && strings.Contains(head, "]: *** "):
		return true
	case strings.HasPrefix(head, "Found "):
		// tsc: "Found 2 errors in the same file", not "Found 0 errors.".
		rest, ok := afterCount(head[len("Found "):])
		return ok && strings.HasPrefix(rest, " error")
	}
	// "1 error", "3 errors" (javac), "2 errors generated." (clang), but not
	// "0 errors".
	rest, ok := afterCount(head)
	return ok && (rest == " error" || rest == " errors" || rest == " error generated." || rest == " errors generated.")
}

// afterCount reads a count greater than zero at the start of s and returns
// what follows it; ok is false when s does not start with one.
func afterCount(s string) (rest string, ok bool) {
	n := digitsPrefix(s)
	if n == 0 || strings.Trim(s[:n], "0") == "" {
		return "", false
	}
	return s[n:], true
}

// isSeverityLine reports whether head opens with a severity word that
// says this line is an error.
func isSeverityLine(head string) bool {
	if hasAnyPrefix(head, "error:", "error[", "Error:", "ERROR:", "ERROR[", "fatal:", "Fatal:", "FATAL:",
		"[ERROR]", "[error]", "[FATAL]", "[fatal]", "npm ERR!") {
		return true
	}
	if strings.HasPrefix(head, "error TS") && len(head) > 8 && head[8] >= '0' && head[8] <= '9' {
		return true
	}
	// "prog: error: ...", "prog: fatal error: ...", "prog: fatal: ...".
	if n := progPrefix(head); n > 0 && hasAnyPrefix(head[n:], "error:", "fatal error:", "fatal:") {
		return true
	}
	// An upper-case log level after a timestamp:
	// "2026-01-19T09:00:00Z ERROR ...", "[09:00:00] FATAL: ...".
	j := 0
	for j < len(head) && isTimestampByte(head[j]) {
		j++
	}
	for _, level := range [...]string{"ERROR", "FATAL", "CRITICAL"} {
		if strings.HasPrefix(head[j:], level) {
			k := j + len(level)
			if k == len(head) || head[k] == ' ' || head[k] == ':' || head[k] == ']' {
				return true
			}
		}
	}
	// logfmt.
	for _, kv := range [...]string{"level=error", "level=fatal", "level=ERROR", "level=FATAL"} {
		if k := strings.Index(head, kv); k >= 0 && (k == 0 || head[k-1] == ' ') &&
			(k+len(kv) == len(head) || head[k+len(kv)] == ' ') {
			return true
		}
	}
	return false
}

// isTimestampByte reports whether c may be part of a timestamp or log
// prefix before a level: digits and the punctuation of dates and times.
func isTimestampByte(c byte) bool {
	return c >= '0' && c <= '9' || strings.IndexByte(" -:.,/+TZ[]", c) >= 0
}

// isExceptionLine reports whether head opens with an exception name and a
// colon: "TypeError: x", "java.lang.IllegalStateException: x", "Error:".
func isExceptionLine(head string) bool {
	j := 0
	for j < len(head) && isIdentByte(head[j]) {
		j++
	}
	name := head[:j]
	if !strings.HasSuffix(name, "Error") && !strings.HasSuffix(name, "Exception") {
		return false
	}
	return j < len(head) && head[j] == ':' && (j+1 == len(head) || head[j+1] == ' ')
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '$'
}

// isToolErrorLine reports lines in which a tool states its own failure:
// "curl: (7) Failed to connect ...".
func isToolErrorLine(head string) bool {
	n := progPrefix(head)
	if n == 0 || n >= len(head) || head[n] != '(' {
		return false
	}
	d := digitsPrefix(head[n+1:])
	return d > 0 && strings.HasPrefix(head[n+1+d:], ") ")
}

// progPrefix returns the length of a leading program name and ": " (such as
// "gcc: " or "vet: "), or 0. The name is letters, digits, '-', '_' and '.'.
func progPrefix(head string) int {
	j := 0
	for j < len(head) && (isIdentByte(head[j]) && head[j] != '$' || head[j] == '-') {
		j++
	}
	if j == 0 || !strings.HasPrefix(head[j:], ": ") {
		return 0
	}
	return j + 2
}

// severity is what a compiler location line says it is.
type severity uint8

const (
	sevError   severity = iota // an error, or no severity word (Go)
	sevWarning                 // a warning: not an error, and the end of one
	sevNote                    // a note, info, hint or help about the error before it
)

// parseLocation reads a compiler location at the start of head, after an
// optional program name: "file.go:12:3: msg", "Main.java:5: error: msg",
// "a.ts(3,5): error TS2304: msg", "a.ts:3:5 - error TS2304: msg". ok says
// whether there is one; sev what its message is.
func parseLocation(head string) (sev severity, ok bool) {
	if n := progPrefix(head); n > 0 {
		if sev, ok := parseLocation(head[n:]); ok {
			return sev, ok
		}
	}
	j := 0
	for j < len(head) && head[j] != ' ' && head[j] != '\t' && head[j] != ':' && head[j] != '(' {
		j++
	}
	path := head[:j]
	if path == "" || !strings.ContainsAny(path, "./") || j == len(head) {
		return sevError, false
	}
	rest := head[j:]
	switch rest[0] {
	case ':':
		k := 1 + digitsPrefix(rest[1:])
		if k == 1 {
			return sevError, false
		}
		if k < len(rest) && rest[k] == ':' {
			if c := 1 + digitsPrefix(rest[k+1:]); c > 1 {
				k += c
			}
		}
		switch {
		case strings.HasPrefix(rest[k:], ": "):
			rest = rest[k+2:]
		case strings.HasPrefix(rest[k:], " - "):
			rest = rest[k+3:]
		default:
			return sevError, false
		}
	case '(':
		k := 1 + digitsPrefix(rest[1:])
		if k == 1 || k >= len(rest) || rest[k] != ',' {
			return sevError, false
		}
		c := 1 + digitsPrefix(rest[k+1:])
		if c == 1 || !strings.HasPrefix(rest[k+c:], "): ") {
			return sevError, false
		}
		rest = rest[k+c+3:]
	default:
		return sevError, false
	}
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" {
		return sevError, false
	}
	for _, word := range [...]string{"warning", "note", "info", "hint", "help"} {
		if len(rest) >= len(word) && strings.EqualFold(rest[:len(word)], word) &&
			(len(rest) == len(word) || rest[len(word)] == ':' || rest[len(word)] == ' ' || rest[len(word)] == '[') {
			if word == "warning" {
				return sevWarning, true
			}
			return sevNote, true
		}
	}
	return sevError, true
}

// isGutterLine reports a line of a compiler's source context: "2 | code",
// "|", "12 |".
func isGutterLine(head string) bool {
	n := digitsPrefix(head)
	rest := strings.TrimLeft(head[n:], " ")
	return rest == "|" || strings.HasPrefix(rest, "| ")
}

// isGoCallLine reports a Go goroutine trace's call line, "main.main()" or
// "main.(*T).f(0xc000010000, 0x1)": a name without blanks, then a
// parenthesised argument list that ends the line.
func isGoCallLine(head string) bool {
	open := strings.IndexByte(head, '(')
	if open <= 0 || !strings.HasSuffix(head, ")") {
		return false
	}
	if strings.HasPrefix(head[open:], "(*") {
		// A method on a pointer: the argument list is the next one.
		if k := strings.Index(head[open:], ")."); k > 0 {
			next := strings.IndexByte(head[open+k+2:], '(')
			if next < 0 {
				return false
			}
			open += k + 2 + next
		}
	}
	return !hasBlank(head[:open])
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, p := range suffixes {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}

// text returns the block sp of s, trimmed and capped.
func (b *blockScanner) text(s string, sp span) string {
	return capExtract(s[sp.start:sp.end], sp.kind)
}

// capExtract trims white space around text and bounds it to
// MaxExtractedBytes: a Python traceback keeps its first line and as many
// whole last lines as fit; anything else keeps as many whole first lines as
// fit, or, for one long line, as many whole runes.
func capExtract(text string, kind blockKind) string {
	text = strings.TrimSpace(text)
	if len(text) <= MaxExtractedBytes {
		return text
	}
	if kind == kindTraceback {
		firstEnd := strings.IndexByte(text, '\n')
		if firstEnd > 0 && firstEnd < MaxExtractedBytes/2 {
			room := MaxExtractedBytes - firstEnd - 1
			if k := strings.IndexByte(text[len(text)-room:], '\n'); k >= 0 {
				tail := strings.TrimRight(text[len(text)-room+k+1:], " \t\r\n")
				if strings.TrimSpace(tail) != "" {
					return strings.TrimRight(text[:firstEnd], " \t\r") + "\n" + tail
				}
			}
		}
	}
	cut := MaxExtractedBytes
	if k := strings.LastIndexByte(text[:cut], '\n'); k > 0 {
		return strings.TrimSpace(text[:k])
	}
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return strings.TrimSpace(text[:cut])
}

// containsFoldError reports whether s holds "error" in any ASCII case.
func containsFoldError(s string) bool {
	for i := 0; i+5 <= len(s); i++ {
		if s[i]|0x20 == 'e' && s[i+1]|0x20 == 'r' && s[i+2]|0x20 == 'r' && s[i+3]|0x20 == 'o' && s[i+4]|0x20 == 'r' {
			return true
		}
	}
	return false
}

// jsonLineError decodes a JSON line and returns the message of its last
// error-signalling object, if it is an object and has one. The message is
// weak when the object says only that it failed, not how: it has nothing
// but a subtype, or nothing at all (the message is then the line).
func jsonLineError(line string) (msg string, weak, ok bool) {
	var v any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return "", false, false
	}
	if _, isObject := v.(map[string]any); !isObject {
		return "", false, false
	}
	var found bool
	msg, weak, found = lastErrorObject(v)
	if !found {
		return "", false, false
	}
	if msg == "" {
		msg = line
	}
	return msg, weak, true
}

// lastErrorObject walks v in document order (object keys sorted) and
// returns the message of the last object that signals an error, preferring
// one with a message that is not weak; it does not look inside a
// signalling object.
func lastErrorObject(v any) (msg string, weak, found bool) {
	switch v := v.(type) {
	case map[string]any:
		if signalsError(v) {
			msg, weak = errorMessage(v)
			return msg, weak, true
		}
		keys := make([]string, 0, len(v))
		for k, child := range v {
			switch child.(type) {
			case map[string]any, []any:
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			msg, weak, found = keepLast(msg, weak, found, v[k])
		}
	case []any:
		for _, child := range v {
			msg, weak, found = keepLast(msg, weak, found, child)
		}
	}
	return msg, weak, found
}

// keepLast returns the error found in child if there is one and it is not
// weaker than the one found so far; otherwise the one so far.
func keepLast(msg string, weak, found bool, child any) (string, bool, bool) {
	if m, w, ok := lastErrorObject(child); ok && (!found || weak || !w) {
		return m, w, true
	}
	return msg, weak, found
}

// signalsError reports whether a JSON object says it is an error (see
// ExtractError).
func signalsError(m map[string]any) bool {
	if isErr, ok := m["is_error"].(bool); ok {
		return isErr
	}
	if t, _ := m["type"].(string); t == "error" {
		return true
	}
	if st, _ := m["subtype"].(string); strings.HasPrefix(st, "error") {
		return true
	}
	switch e := m["error"].(type) {
	case string:
		if strings.TrimSpace(e) != "" {
			return true
		}
	case map[string]any:
		if len(e) > 0 {
			return true
		}
	}
	for _, key := range [...]string{"level", "severity"} {
		if lv, _ := m[key].(string); lv != "" {
			switch strings.ToLower(lv) {
			case "error", "fatal", "critical", "panic":
				return true
			}
		}
	}
	return false
}

// errorMessage returns the message of an error object (see ExtractError),
// or ""; weak when the message is only a subtype or there is none.
func errorMessage(m map[string]any) (msg string, weak bool) {
	switch e := m["error"].(type) {
	case string:
		if strings.TrimSpace(e) != "" {
			return e, false
		}
	case map[string]any:
		for _, key := range [...]string{"message", "msg", "detail", "type"} {
			if s, _ := e[key].(string); strings.TrimSpace(s) != "" {
				return s, false
			}
		}
	}
	if s, _ := m["result"].(string); strings.TrimSpace(s) != "" {
		return s, false
	}
	if s := contentText(m["content"]); strings.TrimSpace(s) != "" {
		return s, false
	}
	for _, key := range [...]string{"message", "msg", "text", "detail"} {
		if s, _ := m[key].(string); strings.TrimSpace(s) != "" {
			return s, false
		}
	}
	if s, _ := m["subtype"].(string); strings.TrimSpace(s) != "" {
		return s, true
	}
	return "", true
}

// contentText returns a tool result's content: a string, or the "text" of
// its blocks (or its strings), one per line.
func contentText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, block := range v {
			switch block := block.(type) {
			case string:
				parts = append(parts, block)
			case map[string]any:
				if s, ok := block["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
