// Package windows reads what the model providers report of their usage
// windows (a subscription's 5-hour and weekly limits), for
// [loopbreaker.CircuitBreaker.ObserveWindow]: Anthropic's unified
// rate-limit headers and the Codex backend's x-codex headers on a
// response, a rate_limit_event of Claude Code's stream-json output, and
// the rate_limits of a token_count event in Codex's rollout (its session
// transcript).
//
// What each says, as the pinned releases send it (Claude Code 2.1.328 and
// Codex 0.169.0, run against the fake model APIs):
//
//   - anthropic-ratelimit-unified-5h-utilization: 0.42 (a fraction of the
//     window used), anthropic-ratelimit-unified-5h-reset: 1796181210 (Unix
//     seconds), and the same for 7d, the weekly window. Every response of
//     a subscription carries them, a 429's too.
//   - x-codex-primary-used-percent: 42.5 (a percent),
//     x-codex-primary-window-minutes: 300, x-codex-primary-reset-at: Unix
//     seconds; the same for secondary (10080 minutes, a week).
//   - Claude Code, for a subscriber (it says nothing of windows to an API
//     key): {"type":"rate_limit_event","rate_limit_info":{"status":
//     "allowed","rateLimitType":"five_hour","utilization":0.91,
//     "unifiedWindows":{"five_hour":{"utilization":0.42,"resetsAt":...},
//     "seven_day":{...}}}} after each response.
//   - Codex: {"type":"event_msg","payload":{"type":"token_count",...,
//     "rate_limits":{"primary":{"used_percent":42.5,"window_minutes":300,
//     "resets_at":...},"secondary":{...}}}} after each response; older
//     releases give resets_in_seconds, counted from the line's timestamp.
//
// A share that is no number, or negative, is left out; so is a window
// whose share is not given.
package windows

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker"
)

// The windows' lengths.
const (
	FiveHours = 5 * time.Hour
	Week      = 7 * 24 * time.Hour
)

// The Sources of the windows an agent's output reports.
const (
	ClaudeCode = "Claude Code"
	Codex      = "Codex"
)

// anthropicWindows are the unified windows the headers name, and their
// lengths.
var anthropicWindows = [...]struct {
	utilization, reset string
	length             time.Duration
}{
	{"Anthropic-Ratelimit-Unified-5h-Utilization", "Anthropic-Ratelimit-Unified-5h-Reset", FiveHours},
	{"Anthropic-Ratelimit-Unified-7d-Utilization", "Anthropic-Ratelimit-Unified-7d-Reset", Week},
}

// codexWindows are the Codex backend's windows, as its headers name them.
var codexWindows = [...]struct{ used, minutes, reset string }{
	{"X-Codex-Primary-Used-Percent", "X-Codex-Primary-Window-Minutes", "X-Codex-Primary-Reset-At"},
	{"X-Codex-Secondary-Used-Percent", "X-Codex-Secondary-Window-Minutes", "X-Codex-Secondary-Reset-At"},
}

// FromHeader returns the windows the headers of a response report, each
// with source as its Source; nil when they report none. h is read as
// net/http keeps it (canonical keys); it may be nil.
func FromHeader(h http.Header, source string) []loopbreaker.Window {
	var ws []loopbreaker.Window
	for _, a := range anthropicWindows {
		used, ok := number(first(h, a.utilization))
		if !ok {
			continue
		}
		ws = append(ws, loopbreaker.Window{Length: a.length, Used: percent(used), Reset: resetAt(first(h, a.reset)), Source: source})
	}
	for _, c := range codexWindows {
		used, ok := number(first(h, c.used))
		if !ok {
			continue
		}
		ws = append(ws, loopbreaker.Window{Length: minutes(first(h, c.minutes)), Used: used, Reset: resetAt(first(h, c.reset)), Source: source})
	}
	return ws
}

// first returns the first value of the header key, trimmed; "" when
// there is none.
func first(h http.Header, key string) string {
	if vs := h[key]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

// number reads a share (isShare).
func number(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && isShare(f)
}

// isShare reports whether f may be a share: a finite number, not
// negative.
func isShare(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }

// percent is a fraction of a window as a percent, at most 100 (a share
// beyond the window is the whole window, as ObserveWindow counts it).
func percent(fraction float64) float64 { return math.Min(fraction*100, 100) }

// maxUnix bounds a reset in Unix seconds (the year 9999): beyond it, a
// number is no time.
const maxUnix = 253402300799

// resetAt reads a reset: Unix seconds, or an RFC 3339 time after 1970;
// zero for anything else.
func resetAt(s string) time.Time {
	if f, ok := number(s); ok {
		return unix(f)
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil && t.Unix() > 0 {
		return t
	}
	return time.Time{}
}

// unix is the time of f Unix seconds; zero for none, one before the
// first whole second after 1970 (no reset is that old), or one past
// maxUnix.
func unix(f float64) time.Time {
	if !(f >= 1 && f <= maxUnix) {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// maxMinutes is the longest window a time.Duration holds (about 292
// years): beyond it, a length is none.
const maxMinutes = math.MaxInt64 / int64(time.Minute)

// maxSeconds bounds a reset given in seconds from now (2^33 s, about
// 272 years, well inside a time.Duration): beyond it, a wait is none.
const maxSeconds = 1 << 33

// minutes reads a window's length in minutes; zero when it is not
// given, or too long for a time.Duration.
func minutes(s string) time.Duration {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > maxMinutes {
		return 0
	}
	return time.Duration(n) * time.Minute
}

// claudeEvent is what FromClaudeCode reads of a line.
type claudeEvent struct {
	Type string `json:"type"`
	Info *struct {
		RateLimitType string   `json:"rateLimitType"`
		Utilization   *float64 `json:"utilization"`
		ResetsAt      float64  `json:"resetsAt"`
		Windows       *struct {
			FiveHour *claudeWindow `json:"five_hour"`
			SevenDay *claudeWindow `json:"seven_day"`
		} `json:"unifiedWindows"`
	} `json:"rate_limit_info"`
}

// claudeWindow is one of a rate_limit_event's unifiedWindows.
type claudeWindow struct {
	Utilization *float64 `json:"utilization"`
	ResetsAt    float64  `json:"resetsAt"`
}

// claudeLengths are the lengths of Claude Code's rate-limit types.
var claudeLengths = map[string]time.Duration{"five_hour": FiveHours, "seven_day": Week}

// FromClaudeCode returns the windows a line of Claude Code's stream-json
// output reports: a rate_limit_event's unifiedWindows, the 5-hour and the
// weekly one, or without them the utilization of the event's own
// rateLimitType; false when the line is no rate_limit_event, or reports no
// window.
func FromClaudeCode(line []byte) ([]loopbreaker.Window, bool) {
	line = bytes.TrimSpace(line)
	if !bytes.HasPrefix(line, []byte("{")) || !bytes.Contains(line, []byte(`"rate_limit_event"`)) {
		return nil, false // most lines: cheap, nothing decoded
	}
	var ev claudeEvent
	if json.Unmarshal(line, &ev) != nil || ev.Type != "rate_limit_event" || ev.Info == nil {
		return nil, false
	}
	var ws []loopbreaker.Window
	add := func(length time.Duration, used *float64, reset float64) {
		if used != nil && isShare(*used) {
			ws = append(ws, loopbreaker.Window{Length: length, Used: percent(*used), Reset: unix(reset), Source: ClaudeCode})
		}
	}
	info := ev.Info
	switch {
	case info.Windows != nil:
		if w := info.Windows.FiveHour; w != nil {
			add(FiveHours, w.Utilization, w.ResetsAt)
		}
		if w := info.Windows.SevenDay; w != nil {
			add(Week, w.Utilization, w.ResetsAt)
		}
	case claudeLengths[info.RateLimitType] != 0:
		add(claudeLengths[info.RateLimitType], info.Utilization, info.ResetsAt)
	}
	return ws, len(ws) > 0
}

// codexLine is what FromCodex reads of a line of the rollout.
type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type       string `json:"type"`
		RateLimits *struct {
			Primary   *codexWindow `json:"primary"`
			Secondary *codexWindow `json:"secondary"`
		} `json:"rate_limits"`
	} `json:"payload"`
}

// codexWindow is one of the rate_limits' windows.
type codexWindow struct {
	UsedPercent     *float64 `json:"used_percent"`
	WindowMinutes   float64  `json:"window_minutes"`
	ResetsAt        float64  `json:"resets_at"`
	ResetsInSeconds float64  `json:"resets_in_seconds"`
}

// FromCodex returns the windows a line of Codex's rollout reports: the
// primary and secondary windows of a token_count event's rate_limits;
// false when the line is no such event, or reports no window.
func FromCodex(line []byte) ([]loopbreaker.Window, bool) {
	if !bytes.Contains(line, []byte(`"rate_limits"`)) || !bytes.Contains(line, []byte(`"token_count"`)) {
		return nil, false // most lines: cheap, nothing decoded
	}
	var l codexLine
	if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" || l.Payload.RateLimits == nil {
		return nil, false
	}
	var ws []loopbreaker.Window
	for _, w := range []*codexWindow{l.Payload.RateLimits.Primary, l.Payload.RateLimits.Secondary} {
		if w == nil || w.UsedPercent == nil || !isShare(*w.UsedPercent) {
			continue
		}
		var length time.Duration
		if w.WindowMinutes > 0 && w.WindowMinutes <= float64(maxMinutes) {
			length = time.Duration(w.WindowMinutes) * time.Minute
		}
		reset := unix(w.ResetsAt)
		if reset.IsZero() && w.ResetsInSeconds > 0 && w.ResetsInSeconds < maxSeconds && !l.Timestamp.IsZero() {
			reset = l.Timestamp.Add(time.Duration(w.ResetsInSeconds * float64(time.Second)))
			if reset.Unix() < 1 {
				reset = time.Time{} // a line stamped before 1970: no reset is that old
			}
		}
		ws = append(ws, loopbreaker.Window{Length: length, Used: *w.UsedPercent, Reset: reset, Source: Codex})
	}
	return ws, len(ws) > 0
}
