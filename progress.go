package loopbreaker

import "time"

// Progress is what one iteration achieved ([Iteration.Progress]): counts
// for the iteration, except TestsPassing. Any unit works for OutputLength
// and Errors, if it is always the same.
type Progress struct {
	// FilesChanged, TasksCompleted and a rise in TestsPassing (the tests
	// passing after it) are progress.
	FilesChanged   int
	TasksCompleted int
	TestsPassing   int
	// OutputLength is the size of the iteration's output.
	OutputLength int
	// PermissionDenials counts the tool calls refused.
	PermissionDenials int
	// ErrorsResolved and Reverted count only in the progress score.
	ErrorsResolved int
	Reverted       bool
	// Errors counts the errors met, for the errors-rising warning.
	Errors int
}

// outputTrendLen is how many recent output lengths Stats reports.
const outputTrendLen = 10

// outputBaselineLen is how many previous output lengths make the baseline
// of the output-decline signal.
const outputBaselineLen = 3

// progressCounts are the progress signals' counters that Stats reports,
// under the same names, and that a snapshot stores, under its JSON names.
type progressCounts struct {
	ConsecutiveNoProgress        int       `json:"consecutive_no_progress"`
	ConsecutivePermissionDenials int       `json:"consecutive_permission_denials"`
	LastProgress                 time.Time `json:"last_progress"` // when an iteration last made progress
}

// progressState is what the progress signals remember between iterations.
type progressState struct {
	measured bool // the last recorded iteration reported Progress
	made     bool // ...and it made progress

	progressCounts

	testsPassing     int  // TestsPassing of the last measured iteration
	haveTestsPassing bool // testsPassing is set
	newlyPassing     int  // how far the last measured iteration raised it

	// outputs holds the recent output lengths, oldest first once full:
	// outputs[(outputNext+i)%len] for i in 0..outputCount-1.
	outputs     [outputTrendLen]int
	outputNext  int
	outputCount int

	// The output-decline evidence of the last measured iteration.
	output       int // its output length
	baselineSum  int // the sum of up to outputBaselineLen previous lengths
	baselineSize int // how many lengths baselineSum adds
}

// observeProgress updates the progress signals for one iteration recorded
// at now; p is nil when the host did not measure it. Called with b.mu held.
func (b *CircuitBreaker) observeProgress(p *Progress, now time.Time) {
	ps := &b.progress
	ps.measured = p != nil
	if p == nil {
		ps.made = false
		return
	}
	ps.newlyPassing = 0
	if ps.haveTestsPassing && p.TestsPassing > ps.testsPassing {
		ps.newlyPassing = subSat(p.TestsPassing, ps.testsPassing)
	}
	ps.made = p.FilesChanged > 0 || p.TasksCompleted > 0 || ps.newlyPassing > 0
	ps.testsPassing, ps.haveTestsPassing = p.TestsPassing, true
	if ps.made {
		ps.ConsecutiveNoProgress = 0
		ps.LastProgress = now
	} else {
		ps.ConsecutiveNoProgress++
	}
	if p.PermissionDenials > 0 {
		ps.ConsecutivePermissionDenials++
	} else {
		ps.ConsecutivePermissionDenials = 0
	}

	ps.output = p.OutputLength
	ps.baselineSum, ps.baselineSize = 0, min(ps.outputCount, outputBaselineLen)
	for i := 1; i <= ps.baselineSize; i++ {
		ps.baselineSum = addSat(ps.baselineSum, ps.outputs[(ps.outputNext-i+outputTrendLen)%outputTrendLen])
	}
	ps.outputs[ps.outputNext] = p.OutputLength
	ps.outputNext = (ps.outputNext + 1) % outputTrendLen
	ps.outputCount = min(ps.outputCount+1, outputTrendLen)
}

// outputTrend returns the recent output lengths, oldest first.
func (ps *progressState) outputTrend() []int {
	if ps.outputCount == 0 {
		return nil
	}
	trend := make([]int, ps.outputCount)
	start := ps.outputNext - ps.outputCount + outputTrendLen
	for i := range trend {
		trend[i] = ps.outputs[(start+i)%outputTrendLen]
	}
	return trend
}

// declines reports whether the last measured iteration's output fell more
// than percent below the baseline (the mean of the previous lengths), and by
// how many whole percent; the baseline sum must be positive. In floating
// point, as lengths near the largest int overflow an int product; the
// comparison is exact for every length below 2^53 / 300.
func (ps *progressState) declines(percent int) (bool, int) {
	sum := float64(ps.baselineSum)
	drop := sum - float64(ps.output)*float64(ps.baselineSize) // (baseline - current) * size
	return drop*100 > float64(percent)*sum, int(drop * 100 / sum)
}
