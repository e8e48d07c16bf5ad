package loopbreaker

import (
	"strconv"
	"strings"
)

// WorkKind says what kind of work an iteration did, as the host labels it
// ([Iteration.Work]). The test-fix-loop signal reads it.
type WorkKind uint8

// The work kinds.
const (
	WorkUnlabelled     WorkKind = iota // the host did not say
	WorkImplementation                 // worked on the product itself
	WorkTestFix                        // only fixed tests
	WorkOther                          // anything else (docs, planning, ...)
	WorkTestsOnly                      // only ran the tests
)

// String returns "unlabelled", "implementation", "test_fix", "other" or
// "tests_only".
func (k WorkKind) String() string {
	switch k {
	case WorkUnlabelled:
		return "unlabelled"
	case WorkImplementation:
		return "implementation"
	case WorkTestFix:
		return "test_fix"
	case WorkOther:
		return "other"
	case WorkTestsOnly:
		return "tests_only"
	}
	return "WorkKind(" + strconv.Itoa(int(k)) + ")"
}

// ScoreWeights are the points of superkit's progress score: a measured
// iteration scores the sum of those that apply to it.
type ScoreWeights struct {
	TestPassing    int // per test passing now that did not before (default +3)
	TaskCompleted  int // per completed task (default +5)
	FilesChanged   int // once when any file changed (default +1)
	ErrorResolved  int // per resolved build or lint error (default +2)
	SameError      int // when the iteration failed with the previous iteration's error (default -2)
	NoFilesChanged int // when no file changed (default -3)
	Reverted       int // when the iteration reverted earlier changes (default -1)
}

// DefaultScoreWeights returns superkit's weights, which a zero ScoreWeights
// in Config stands for.
func DefaultScoreWeights() ScoreWeights {
	return ScoreWeights{
		TestPassing:    3,
		TaskCompleted:  5,
		FilesChanged:   1,
		ErrorResolved:  2,
		SameError:      -2,
		NoFilesChanged: -3,
		Reverted:       -1,
	}
}

// maxWindow bounds the windows in Config, and so the memory they take.
const maxWindow = 1000

// ring holds the last len(buf) values pushed, oldest first.
type ring[T any] struct {
	buf  []T
	next int // where the next value goes
	n    int // how many values it holds, up to len(buf)
}

func newRing[T any](size int) ring[T] { return ring[T]{buf: make([]T, max(size, 0))} }

func (r *ring[T]) push(v T) {
	if len(r.buf) == 0 {
		return
	}
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
}

func (r *ring[T]) full() bool { return len(r.buf) > 0 && r.n == len(r.buf) }

func (r *ring[T]) clear() { r.next, r.n = 0, 0 }

// at returns the i-th value held, oldest first.
func (r *ring[T]) at(i int) T {
	return r.buf[(r.next-r.n+i+len(r.buf))%len(r.buf)]
}

// approach is one labelled iteration in the circular-approach window.
type approach struct {
	fingerprint uint32 // of Iteration.Approach
	advanced    bool   // the iteration resolved something (see resolved)
	text        string // the label as the host gave it, trimmed and cut (taskName)
}

// stagnationState is what the window signals remember.
type stagnationState struct {
	scores     ring[int]      // the progress scores since the circuit last opened
	approaches ring[approach] // the labelled approaches, oldest first
	works      ring[WorkKind] // the labelled work kinds, oldest first

	// The last recorded iteration added to the approaches or the works
	// window. The window signals judge only such an iteration: one that
	// brings no label is no new evidence of circling or of a test-fix
	// loop, so a half-open probe without one is judged on its outcome.
	approachAdded, workAdded bool
}

func newStagnationState(cfg *Config) stagnationState {
	return stagnationState{
		scores:     newRing[int](cfg.Progress.ScoreWindow),
		approaches: newRing[approach](cfg.Progress.CircularApproachWindow),
		works:      newRing[WorkKind](cfg.Progress.TestFixWindow),
	}
}

// observeStagnation updates the window signals for a success or a
// failure; sameError says it failed with the previous iteration's error.
// Called with b.mu held, after observeProgress.
func (b *CircuitBreaker) observeStagnation(it *Iteration, failed, sameError bool, approachFP uint32) {
	st := &b.stagnation
	switch {
	case !failed:
		b.count.SameErrorInARow = 0
	case sameError:
		b.count.SameErrorInARow++
	default:
		b.count.SameErrorInARow = 1
	}

	if p := it.Progress; p != nil {
		b.count.LastProgressScore = b.score(p, sameError)
		st.scores.push(b.count.LastProgressScore)
	}
	st.approachAdded = it.Approach != ""
	if st.approachAdded {
		st.approaches.push(approach{fingerprint: approachFP, advanced: b.resolved(it.Progress, failed), text: strings.Clone(taskName(it.Approach))})
	}
	st.workAdded = it.Work != WorkUnlabelled
	if st.workAdded {
		st.works.push(it.Work)
	}
}

// resolved reports whether an iteration got the loop somewhere, as the
// circular-approach signal sees it: it completed a task, raised the passing
// tests or resolved errors. Changed files do not count: an agent circling
// between fixes changes files every time. Without Progress, a success
// counts.
func (b *CircuitBreaker) resolved(p *Progress, failed bool) bool {
	if p == nil {
		return !failed
	}
	return p.TasksCompleted > 0 || b.progress.newlyPassing > 0 || p.ErrorsResolved > 0
}

// score returns the progress score of a measured iteration.
func (b *CircuitBreaker) score(p *Progress, sameError bool) int {
	w := &b.cfg.Progress.ScoreWeights
	s := addSat(mulSat(w.TestPassing, b.progress.newlyPassing), mulSat(w.TaskCompleted, max(p.TasksCompleted, 0)))
	s = addSat(s, mulSat(w.ErrorResolved, max(p.ErrorsResolved, 0)))
	if p.FilesChanged > 0 {
		s = addSat(s, w.FilesChanged)
	} else {
		s = addSat(s, w.NoFilesChanged)
	}
	if sameError {
		s = addSat(s, w.SameError)
	}
	if p.Reverted {
		s = addSat(s, w.Reverted)
	}
	return s
}

// scoreSum returns the sum of the scores in the window and how many there
// are.
func (st *stagnationState) scoreSum() (sum, n int) {
	for i := range st.scores.n {
		sum = addSat(sum, st.scores.at(i))
	}
	return sum, st.scores.n
}

// circle returns the number of approaches (2 or 3) that the full window
// cycles through without progress, or 0.
func (st *stagnationState) circle() int {
	r := &st.approaches
	if !r.full() {
		return 0
	}
	for i := range r.n {
		if r.at(i).advanced {
			return 0
		}
	}
	for period := 2; period <= 3 && 2*period <= r.n; period++ {
		if st.cycles(period) {
			return period
		}
	}
	return 0
}

// cycles reports whether the window repeats period distinct approaches.
func (st *stagnationState) cycles(period int) bool {
	r := &st.approaches
	for i := range period {
		for j := range i {
			if r.at(i).fingerprint == r.at(j).fingerprint {
				return false
			}
		}
	}
	for i := period; i < r.n; i++ {
		if r.at(i).fingerprint != r.at(i-period).fingerprint {
			return false
		}
	}
	return true
}

// circleFingerprints returns the fingerprints of the first period
// approaches of the window, joined with "/", and their texts, joined with
// " | ".
func (st *stagnationState) circleFingerprints(period int) (fingerprints, texts string) {
	fps, txts := make([]string, period), make([]string, period)
	for i := range fps {
		a := st.approaches.at(i)
		fps[i], txts[i] = formatFingerprint(a.fingerprint), a.text
	}
	return strings.Join(fps, "/"), evidenceText(strings.Join(txts, " | "))
}

// testFixes returns how many iterations in the full work window were test
// fixes, or -1 while the window is not full.
func (st *stagnationState) testFixes() int {
	if !st.works.full() {
		return -1
	}
	n := 0
	for i := range st.works.n {
		if st.works.at(i) == WorkTestFix {
			n++
		}
	}
	return n
}
