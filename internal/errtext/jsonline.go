package errtext

import "strings"

// An agent's stream-JSON output is mostly JSON lines, and many of them
// mention an error without signalling one: a tool result with
// "is_error":false, a message that quotes a compiler. Decoding each
// (jsonLineError) would cost most of ExtractError, so a JSON line is first
// read without decoding, by maySignalError, and only the lines that may
// signal an error are decoded, last first, until a strong error is found
// (blockScanner.readJSONErrors).

// maySignalError reports whether the JSON line may hold an object that
// signals an error (signalsError): whether, of its keys, "is_error" has
// the value true, "type" the string "error", "subtype" a string that
// starts with "error", "error" a string or an object that is not empty, or
// "level" or "severity" a string. It reads the line once, jumping from
// quote to quote, without regard to nesting: it may answer true for a line
// that holds no such object (a key repeated, a string that is only blanks,
// a line that is no JSON), never false for one that does.
func maySignalError(line string) bool {
	for i := 0; ; {
		q := strings.IndexByte(line[i:], '"')
		if q < 0 {
			return false
		}
		open := i + q
		end := stringEnd(line, open+1)
		if end == len(line) {
			return false
		}
		i = end + 1
		colon := skipJSONSpace(line, i)
		if colon == len(line) || line[colon] != ':' {
			continue // a value, not a key
		}
		if valueSignals(keyOf(line, open, end), line, skipJSONSpace(line, colon+1)) {
			return true
		}
	}
}

// signalKeys are the keys whose values signalsError reads.
var signalKeys = [...]string{"is_error", "type", "subtype", "error", "level", "severity"}

// keyOf returns the key whose string runs from the quote at line[open] to
// the quote at line[end] when it is one of signalKeys, else "". A key
// with escapes ("\u0074ype") is decoded.
func keyOf(line string, open, end int) string {
	raw := line[open+1 : end]
	if strings.IndexByte(raw, '\\') < 0 {
		return raw // not one of signalKeys is no matter: valueSignals ignores it
	}
	for _, k := range signalKeys {
		if jsonStringIs(line, open, k, false) {
			return k
		}
	}
	return ""
}

// valueSignals reports whether the value at line[v:] of the key may make
// its object signal an error (see maySignalError).
func valueSignals(key, line string, v int) bool {
	if v == len(line) {
		return false
	}
	switch key {
	case "is_error":
		return strings.HasPrefix(line[v:], "true")
	case "type":
		return jsonStringIs(line, v, "error", false)
	case "subtype":
		return jsonStringIs(line, v, "error", true)
	case "error":
		switch line[v] {
		case '"':
			return !strings.HasPrefix(line[v:], `""`)
		case '{':
			next := skipJSONSpace(line, v+1)
			return next < len(line) && line[next] != '}'
		}
	case "level", "severity":
		return line[v] == '"'
	}
	return false
}

// stringEnd returns the index of the quote that closes the JSON string
// whose text starts at s[i], or len(s) when it is not closed: the first
// quote after i that an odd run of backslashes does not escape.
func stringEnd(s string, i int) int {
	for {
		q := strings.IndexByte(s[i:], '"')
		if q < 0 {
			return len(s)
		}
		quote := i + q
		k := quote
		for k > i && s[k-1] == '\\' {
			k--
		}
		if (quote-k)%2 == 0 {
			return quote
		}
		i = quote + 1
	}
}

// skipJSONSpace returns the index of the first byte at or after s[i] that
// is not JSON white space, or len(s).
func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// jsonStringIs reports whether the JSON string that opens with the quote
// at s[i] is want (an ASCII text), or starts with it when prefix is set.
// Escapes are decoded: "\u0065rror" is "error".
func jsonStringIs(s string, i int, want string, prefix bool) bool {
	if i >= len(s) || s[i] != '"' {
		return false
	}
	i++
	for k := 0; k < len(want); k++ {
		c, next, ok := jsonByte(s, i)
		if !ok || c != want[k] {
			return false
		}
		i = next
	}
	_, _, more := jsonByte(s, i)
	return prefix || !more
}

// jsonByte reads one character of a JSON string at s[i]: its byte, where
// the next one starts, and ok false at the closing quote or the end of s.
// An escape is decoded; one that stands for a rune outside ASCII, or is
// invalid, reads as 0xff, which no ASCII text holds.
func jsonByte(s string, i int) (c byte, next int, ok bool) {
	if i >= len(s) || s[i] == '"' {
		return 0, i, false
	}
	if s[i] != '\\' {
		return s[i], i + 1, true
	}
	if i+1 == len(s) {
		return 0xff, i + 1, true
	}
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		return e, i + 2, true
	case 'b':
		return '\b', i + 2, true
	case 'f':
		return '\f', i + 2, true
	case 'n':
		return '\n', i + 2, true
	case 'r':
		return '\r', i + 2, true
	case 't':
		return '\t', i + 2, true
	case 'u':
		if i+6 <= len(s) {
			r := 0
			for j := i + 2; j < i+6; j++ {
				d := hexDigit(s[j])
				if d < 0 {
					return 0xff, i + 2, true
				}
				r = r<<4 | d
			}
			if r < 0x80 {
				return byte(r), i + 6, true
			}
			return 0xff, i + 6, true
		}
	}
	return 0xff, i + 2, true
}

// hexDigit is the value of the hexadecimal digit c, or -1.
func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
