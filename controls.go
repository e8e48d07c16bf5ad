package loopbreaker

// The manual controls: a person (or the host on a person's behalf) steers
// the loop, with the pause menu of GSD's exit.sh as the model. Each is recorded in the
// history and goes to [Config.OnStateChange], even when the state stays the
// same.

// Resume closes the circuit, in any state, because a person wants the loop
// to go on (exit.sh's "Resume"). What the signals count starts again, a
// completion and a provider limit (a stop too) are lifted, the reports of
// the provider's usage windows are forgotten (a window share's stop with
// them: the next report counts afresh), and a probe in flight is
// forgotten; the lifetime totals, the spend, the call budget and
// the history are kept. [Config.Guard] takes stock of the files as they are.
func (b *CircuitBreaker) Resume() { b.manualClose(CauseResume) }

// Skip does what Resume does, recorded as a skip (exit.sh's "Skip"), and
// adds the task the loop was on ([FailureStats.Task]) to
// [CircuitBreaker.SkippedTasks].
func (b *CircuitBreaker) Skip() { b.manualClose(CauseSkip) }

// Abort holds the circuit open (exit.sh's "Abort") with [ReasonAborted],
// whose Message is the reason the circuit had before (an abort of an
// aborted circuit keeps the first one's). No cooldown ends it: Check
// refuses until Resume, Skip or Reset. Counters are kept.
func (b *CircuitBreaker) Abort() {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	message := b.reason.String()
	switch {
	case b.completion.Complete.Kind != ReasonNone:
		message = b.completion.Complete.String()
	case b.state == Open && b.reason.Kind == ReasonAborted:
		message = b.reason.Message // aborted again: what came before the first abort
	}
	b.hold(Reason{Kind: ReasonAborted, Message: message}, now, CauseAbort)
}

// ForceOpen holds the circuit open with [ReasonForcedOpen], whose Message is
// reason (it may be empty). No cooldown ends it: Check refuses until
// Resume, Skip or Reset.
func (b *CircuitBreaker) ForceOpen(reason string) {
	b.mu.Lock()
	defer b.unlock()
	b.hold(Reason{Kind: ReasonForcedOpen, Message: reason}, b.cfg.Now(), CauseForceOpen)
}

// manualClose resets the counters and closes the circuit for Resume and
// Skip.
func (b *CircuitBreaker) manualClose(cause Cause) {
	b.refreshGuard()
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	b.count.ConsecutiveFailures, b.count.SameErrorInARow, b.count.LastProgressScore = 0, 0, 0
	evicted := b.errors.evicted
	b.errors = newErrorCounts(b.cfg.Failures.MaxFingerprints)
	b.errors.evicted = evicted
	b.lastFailed, b.lastFingerprint, b.lastFingerprintCount, b.anyFailure = false, 0, 0, false
	b.progress = progressState{progressCounts: progressCounts{LastProgress: b.progress.LastProgress}}
	b.stagnation = newStagnationState(&b.cfg)
	b.steps = newStepState(&b.cfg)
	b.count.SameStepInARow, b.count.SameActionFailedInARow, b.count.SameMessageInARow, b.count.ConsecutiveCondensations = 0, 0, 0, 0
	b.count.StalledSteps = 0
	b.completion = completionState{}
	b.samples = newErrorSamples(&b.cfg)
	if cause == CauseSkip {
		b.tasks.skip()
	}
	b.tasks = taskState{skipped: b.tasks.skipped}
	b.trends = trendState{}
	b.limit = providerLimit{}
	b.windows = windowState{}
	b.close(now, cause)
	b.refreshWarnings()
	b.wake()
}
