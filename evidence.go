package loopbreaker

import (
	"container/list"
	"strings"

	"github.com/loopbreaker/loopbreaker/internal/errtext"
)

// maxErrorSamples bounds [FailureRules.MaxSamples], and so the size of a
// snapshot: 10,000 fingerprints of two samples, each at most 200 runes
// (1,200 bytes of JSON when every rune must be escaped), is 24 MB at
// most, well inside FileStore's [MaxStateFileSize].
const maxErrorSamples = 10000

// ErrorSample is the text of the first and the latest failure with one
// fingerprint, each cut to 200 runes of valid UTF-8.
type ErrorSample struct {
	First  string `json:"first"`
	Latest string `json:"latest"`
}

// errorSamples keeps the samples of the most recently seen fingerprints,
// at most max of them; the least recently seen is forgotten first. It is
// kept behind a pointer in loop (its list must not be copied).
type errorSamples struct {
	max   int
	index map[uint32]*list.Element // fingerprint -> element of order
	order list.List                // of *sampleEntry, most recently seen first
}

type sampleEntry struct {
	fingerprint uint32
	ErrorSample
}

// newErrorSamples returns the samples of cfg: [FailureRules.MaxSamples] of
// them (none when negative), never more than the error history holds.
func newErrorSamples(cfg *Config) *errorSamples {
	return &errorSamples{max: max(min(cfg.Failures.MaxSamples, cfg.Failures.MaxFingerprints), 0)}
}

// add records text, an error's sample (see sampleOf), as the latest of
// fp, and as its first when fp is new. The text is copied only when it is
// stored, so a host's megabyte error is not kept alive by a sample of it.
func (s *errorSamples) add(fp uint32, text string) {
	if s.max == 0 {
		return
	}
	if s.index == nil {
		s.index = make(map[uint32]*list.Element)
	}
	if el, ok := s.index[fp]; ok {
		e := el.Value.(*sampleEntry)
		if e.Latest != text {
			e.Latest = strings.Clone(text)
		}
		s.order.MoveToFront(el)
		return
	}
	text = strings.Clone(text)
	e := &sampleEntry{fingerprint: fp, ErrorSample: ErrorSample{First: text, Latest: text}}
	if s.order.Len() < s.max {
		s.index[fp] = s.order.PushFront(e)
		return
	}
	// Full: the least recently seen makes room, its element reused.
	el := s.order.Back()
	delete(s.index, el.Value.(*sampleEntry).fingerprint)
	el.Value = e
	s.order.MoveToFront(el)
	s.index[fp] = el
}

// put adds fp, which s does not hold, with sample as the most recently
// seen; s must not be full. Restore uses it, least recently seen first.
func (s *errorSamples) put(fp uint32, sample ErrorSample) {
	if s.index == nil {
		s.index = make(map[uint32]*list.Element)
	}
	s.index[fp] = s.order.PushFront(&sampleEntry{fingerprint: fp, ErrorSample: sample})
}

// latest returns the latest sample of fp; "" when none is kept.
func (s *errorSamples) latest(fp uint32) string {
	if el, ok := s.index[fp]; ok {
		return el.Value.(*sampleEntry).Latest
	}
	return ""
}

// each calls f for every fingerprint with samples, least recently seen
// first.
func (s *errorSamples) each(f func(fp uint32, sample ErrorSample)) {
	for el := s.order.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*sampleEntry)
		f(e.fingerprint, e.ErrorSample)
	}
}

// snapshot returns a copy of the samples keyed by fingerprint text; nil
// when there are none.
func (s *errorSamples) snapshot() map[string]ErrorSample {
	if s.order.Len() == 0 {
		return nil
	}
	m := make(map[string]ErrorSample, s.order.Len())
	s.each(func(fp uint32, sample ErrorSample) { m[formatFingerprint(fp)] = sample })
	return m
}

// sampleOf returns the sample of an error text: its first 200 runes,
// white space around them trimmed, as valid UTF-8.
func sampleOf(text string) string { return errtext.Sample(text) }
