package limits

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A fieldText is one record of testdata/corpus.txt: a text a provider or
// an agent printed, where it was seen, and what it is (see the file's
// header).
type fieldText struct {
	source, kind, url, note string
	seen, reset             time.Time
	text                    string
	line                    int // where the record begins in the file
}

// corpusKinds are the kinds a record may have.
var corpusKinds = map[string]bool{"wait": true, "throttle": true, "stop": true, "loop": true, "none": true}

// readCorpus parses testdata/corpus.txt.
func readCorpus(t testing.TB) []fieldText { return readCorpusFile(t, "testdata/corpus.txt") }

func readCorpusFile(t testing.TB, name string) []fieldText {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()

	var (
		records []fieldText
		cur     *fieldText
		lines   []string
	)
	end := func() {
		if cur != nil {
			cur.text = strings.Join(lines, "\n")
			records = append(records, *cur)
		}
		cur, lines = nil, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== "):
			end()
			fields := strings.Fields(strings.TrimPrefix(line, "=== "))
			require.Len(t, fields, 2, "line %d: === <source> <kind>", n)
			cur = &fieldText{source: fields[0], kind: fields[1], line: n}
		case cur == nil, line == "" && len(lines) == 0, strings.HasPrefix(line, "#") && len(lines) == 0:
			// The header, or between records.
		case line == "|":
			lines = append(lines, "")
		case strings.HasPrefix(line, "| "):
			lines = append(lines, line[2:])
		case line == "":
			end()
		default:
			key, value, ok := strings.Cut(line, ": ")
			require.True(t, ok && len(lines) == 0, "line %d: a field after the text, or no field: %q", n, line)
			switch key {
			case "url":
				cur.url = value
			case "note":
				cur.note = value
			case "seen", "reset":
				at, err := time.Parse(time.RFC3339, value)
				require.NoError(t, err, "line %d", n)
				if key == "seen" {
					cur.seen = at
				} else {
					cur.reset = at
				}
			default:
				t.Fatalf("line %d: unknown field %q", n, key)
			}
		}
	}
	require.NoError(t, sc.Err())
	end()
	return records
}

func TestCorpusRecordsAreWellFormed(t *testing.T) {
	records := readCorpus(t)
	require.GreaterOrEqual(t, len(records), 150)
	heldOut := readCorpusFile(t, heldOutFile)
	require.GreaterOrEqual(t, len(heldOut), 60)
	urls := map[string]bool{}
	for _, r := range records {
		urls[r.url] = true
	}
	for _, r := range heldOut {
		assert.False(t, urls[r.url], "the held-out record at line %d is from a url of corpus.txt: %s", r.line, r.url)
	}
	for _, r := range append(records, heldOut...) {
		where := fmt.Sprintf("the record at line %d", r.line)
		assert.True(t, corpusKinds[r.kind], "%s: kind %q", where, r.kind)
		assert.True(t, strings.HasPrefix(r.url, "https://"), "%s: url %q", where, r.url)
		assert.False(t, r.seen.IsZero(), "%s: no seen", where)
		assert.NotEmpty(t, strings.TrimSpace(r.text), "%s: no text", where)
		if !r.reset.IsZero() {
			assert.Contains(t, []string{"wait", "throttle"}, r.kind, "%s: a reset on a %s", where, r.kind)
			assert.False(t, r.reset.Before(r.seen), "%s: reset before seen", where)
			assert.LessOrEqual(t, r.reset.Sub(r.seen), MaxAhead, "%s: reset too far", where)
		}
	}
}

// kindName names what FromText recognised the way the corpus does.
func kindName(l Limit) string {
	switch {
	case l.Kind == Stop:
		return "stop"
	case l.Kind == Loop:
		return "loop"
	case l.Kind == Wait && l.Throttle:
		return "throttle"
	case l.Kind == Wait:
		return "wait"
	}
	return "none"
}

// A corpusScore is how FromText does on the corpus.
type corpusScore struct {
	records, kindsRight     int
	resets, resetsRight     int
	lookalikes, takenForLim int
	misses                  []string
}

func scoreCorpus(records []fieldText) corpusScore {
	var s corpusScore
	for _, r := range records {
		s.records++
		l := FromText(r.text, r.seen)
		got := kindName(l)
		wrong := []string{}
		if got == r.kind {
			s.kindsRight++
		} else {
			wrong = append(wrong, "kind "+got)
		}
		if r.kind == "none" {
			s.lookalikes++
			if got != "none" {
				s.takenForLim++
			}
		}
		if !r.reset.IsZero() {
			s.resets++
			if d := l.Reset.Sub(r.reset); !l.Reset.IsZero() && d < time.Minute && d > -time.Minute {
				s.resetsRight++
			} else {
				wrong = append(wrong, "reset "+l.Reset.Format(time.RFC3339))
			}
		}
		if len(wrong) > 0 {
			s.misses = append(s.misses, fmt.Sprintf("line %d %s %s: %s (%s) %s", r.line, r.source, r.kind, strings.Join(wrong, ", "), l.Why, r.url))
		}
	}
	return s
}

// heldOutFile is the corpus kept apart: texts the rules were not written
// or tuned against (see its header).
const heldOutFile = "testdata/heldout.txt"

// TestHeldOutCorpusIsRecognised scores FromText on the texts kept apart
// (testdata/heldout.txt) and prints the figures, as
// TestFieldCorpusIsRecognised does for the corpus the rules were tuned on.
func TestHeldOutCorpusIsRecognised(t *testing.T) {
	s := scoreCorpus(readCorpusFile(t, heldOutFile))
	for _, m := range s.misses {
		t.Log("miss: " + m)
	}
	t.Logf("held out: kinds right: %d of %d (%.1f%%); resets within a minute: %d of %d; look-alikes taken for limits: %d of %d",
		s.kindsRight, s.records, 100*float64(s.kindsRight)/float64(s.records), s.resetsRight, s.resets, s.takenForLim, s.lookalikes)
}

// TestFieldCorpusIsRecognised scores FromText on the provider-limit texts
// collected from the field (testdata/corpus.txt) and prints the figures:
// the kinds right, the resets within a minute, the look-alikes taken for
// a limit. Run it with -v to see them, and the texts it gets wrong.
func TestFieldCorpusIsRecognised(t *testing.T) {
	records := readCorpus(t)
	s := scoreCorpus(records)

	bySource := map[string]map[string]int{}
	for _, r := range records {
		if bySource[r.source] == nil {
			bySource[r.source] = map[string]int{}
		}
		bySource[r.source][r.kind]++
	}
	sources := make([]string, 0, len(bySource))
	for src := range bySource {
		sources = append(sources, src)
	}
	sort.Strings(sources)
	for _, src := range sources {
		k := bySource[src]
		t.Logf("%-16s wait %2d  throttle %2d  stop %2d  none %2d", src, k["wait"], k["throttle"], k["stop"], k["none"])
	}
	for _, m := range s.misses {
		t.Log("miss: " + m)
	}
	t.Logf("kinds right: %d of %d (%.1f%%); resets within a minute: %d of %d; look-alikes taken for limits: %d of %d",
		s.kindsRight, s.records, 100*float64(s.kindsRight)/float64(s.records), s.resetsRight, s.resets, s.takenForLim, s.lookalikes)

	assert.GreaterOrEqual(t, float64(s.kindsRight)/float64(s.records), corpusKindsFloor, "kinds right")
	assert.GreaterOrEqual(t, s.resetsRight, s.resets-corpusResetsMissed, "resets within a minute")
	assert.LessOrEqual(t, s.takenForLim, corpusLookalikesTaken, "look-alikes taken for limits")
}

// The figures the corpus must keep: a change that recognises less fails.
// Every reset within a minute and no look-alike taken for a limit, as the
// recognition was built to; 95% of the kinds, as a rule added for one
// tool's new wording may cost another's.
const (
	corpusKindsFloor      = 0.95
	corpusResetsMissed    = 0
	corpusLookalikesTaken = 0
)
