package redisstore

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// FuzzReplyTexts feeds any text to what reads the script's texts and cuts
// error samples and limit messages: nothing panics, a reason always reads
// as one, a sample is valid UTF-8 of at most 200 runes, a cost
// is a number not below zero or an error, and a limit's message is one line of at most
// 200 bytes (and "...").
func FuzzReplyTexts(f *testing.F) {
	f.Add(`{"kind":"same_error","count":5,"threshold":5,"fingerprint":"0badf00d","sample":"boom"}`)
	f.Add(`{"kind":"aborted"}`)
	f.Add(`{"kind":"from_a_newer_worker"}`)
	f.Add("not json \xff")
	f.Add("1e308")
	f.Add("-0.5")
	f.Add("NaN")
	f.Add("You've hit your limit · resets 5pm (Europe/Vilnius)\nmore")
	f.Fuzz(func(t *testing.T, text string) {
		r := parseReason(text)
		if text != "" && r.Kind == loopbreaker.ReasonNone && r != (loopbreaker.Reason{}) {
			t.Fatalf("%q read as a reason of no kind with fields: %+v", text, r)
		}
		_ = r.String()
		s := errtext.Sample(text)
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > errtext.SampleRunes {
			t.Fatalf("sample of %q: %q", text, s)
		}
		p := replyReader{v: []any{text}}
		c := p.cost(0, "cost")
		if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
			t.Fatalf("cost %q read as %v", text, c)
		}
		if f, err := strconv.ParseFloat(text, 64); p.err == nil && (err != nil || f != c) {
			t.Fatalf("cost %q read as %v, without an error", text, c)
		}
		if line := errtext.FirstLine(text); len(line) > 203 || strings.Contains(line, "\n") ||
			utf8.ValidString(text) && !utf8.ValidString(line) {
			t.Fatalf("first line of %q: %q", text, line)
		}
	})
}
