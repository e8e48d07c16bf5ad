package limits

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// A segment is a stretch of text the rules read, or a finding that a
// stream-json event gave by itself (event non-nil, text empty).
type segment struct {
	text string
	// firstLine: the text came from an agent's JSON event, where a limit
	// message is the whole text; a match counts only on its first line.
	firstLine bool
	event     *finding
}

// event is what FromText reads of a line of Claude Code's stream-json
// output (claude -p --output-format stream-json), or of the one JSON
// object --output-format json prints. Fields are decoded one by one, so
// that one of an unexpected type spoils only itself.
type event struct {
	Type           string          `json:"type"`
	Result         json.RawMessage `json:"result"`
	IsError        json.RawMessage `json:"is_error"`
	APIErrorStatus json.RawMessage `json:"api_error_status"`
	Message        json.RawMessage `json:"message"`
	RateLimitInfo  json.RawMessage `json:"rate_limit_info"`
}

// decodeEvent reads line as a JSON object: the whole line, or its end from
// the first `{"` on, as when a host writes "exit status 1: {...}".
func decodeEvent(line string) (event, bool) {
	t := strings.TrimSpace(line)
	i := strings.IndexByte(t, '{')
	if i < 0 || !strings.HasSuffix(t, "}") || i > 0 && !strings.HasPrefix(t[i:], `{"`) {
		return event{}, false
	}
	var ev event
	if json.Unmarshal([]byte(t[i:]), &ev) != nil {
		return event{}, false
	}
	return ev, true
}

// segments splits w into what a host's patterns read, as the scanner reads
// it (see scanner): the plain text between events, and the texts of
// "result" and "assistant" events; "user" events are left out.
// Consecutive plain lines form one segment, so that a message wrapped over
// two lines is read whole.
func segments(w string, now time.Time) []segment {
	var segs []segment
	var plain []string
	flush := func() {
		if len(plain) > 0 {
			segs = append(segs, segment{text: strings.Join(plain, "\n")})
			plain = plain[:0]
		}
	}
	addText := func(s string) {
		if strings.TrimSpace(s) != "" {
			segs = append(segs, segment{text: s, firstLine: true})
		}
	}
	for _, line := range strings.Split(w, "\n") {
		line = strings.TrimSuffix(line, "\r")
		ev, ok := decodeEvent(line)
		var result string
		isResult := ok && (ev.Type == "result" || ev.Type == "" && unmarshal(ev.Result, &result))
		switch {
		case ok && ev.Type == "user":
			flush()
		case ok && ev.Type == "rate_limit_event":
			flush()
			if f, ok := rateLimitEvent(ev.RateLimitInfo, now); ok {
				segs = append(segs, segment{event: &f})
			}
		case isResult:
			flush()
			if f, ok := resultStatus(ev); ok {
				segs = append(segs, segment{event: &f})
			}
			if unmarshal(ev.Result, &result) {
				addText(result)
			}
		case ok && ev.Type == "assistant":
			flush()
			for _, s := range assistantTexts(ev.Message) {
				addText(s)
			}
		default:
			plain = append(plain, line)
		}
	}
	flush()
	return segs
}

// unmarshal decodes raw into v, and reports whether it could.
func unmarshal(raw json.RawMessage, v any) bool {
	return json.Unmarshal(raw, v) == nil
}

// resultStatus reads a "result" event: with is_error true and
// api_error_status 429 or 529 it is a throttle.
func resultStatus(ev event) (finding, bool) {
	var isError bool
	var status int
	_ = json.Unmarshal(ev.IsError, &isError)
	_ = json.Unmarshal(ev.APIErrorStatus, &status)
	if !isError || status != 429 && status != 529 {
		return finding{}, false
	}
	return finding{kind: Wait, throttle: true, why: "Claude Code API error " + strconv.Itoa(status)}, true
}

// rateLimitEvent reads the rate_limit_info of a rate_limit_event.
func rateLimitEvent(raw json.RawMessage, now time.Time) (finding, bool) {
	var info struct {
		Status         string  `json:"status"`
		ResetsAt       float64 `json:"resetsAt"`
		RateLimitType  string  `json:"rateLimitType"`
		IsUsingOverage bool    `json:"isUsingOverage"`
	}
	_ = json.Unmarshal(raw, &info) // a field of another type stays zero
	if info.Status != "rejected" || info.IsUsingOverage {
		return finding{}, false
	}
	f := finding{kind: Wait, why: "Claude Code rate_limit_event rejected"}
	if info.RateLimitType != "" {
		f.why += " (" + info.RateLimitType + ")"
	}
	if info.ResetsAt > 0 {
		f.reset = unixAt(info.ResetsAt, now)
	}
	return f, true
}

// assistantTexts returns the text blocks of an assistant message, whose
// content is a list of blocks or a string.
func assistantTexts(raw json.RawMessage) []string {
	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &msg) != nil {
		return nil
	}
	var s string
	if json.Unmarshal(msg.Content, &s) == nil {
		return []string{s}
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(msg.Content, &blocks)
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return texts
}
