package loopbreaker

// The manual controls: a person (or the host on a person's behalf) steers
// the loop, with the pause menu of GSD's exit.sh as the model. Each is recorded in the
// history and goes to [Config.OnStateChange], even when the state stays the
// same.

// Resume closes the circuit and resets the counters, because a person has
// looked at the loop and wants it to go on (exit.sh's "Resume"). What the
// signals count starts again, so that the loop is not stopped again at
// once by what stopped it: the consecutive failures, the per-fingerprint
// error history and its samples, the last error, the no-progress,
// permission-denial and same-error-in-a-row counts, the progress-score,
// approach and work windows, the step signals' counts and window, the task
// counts and trends (and with them their warnings), the relapse watch,
// the openings in a row (a breaker that gave up probes again), and the
// completion signals (a complete loop goes on). A provider limit in force
// is lifted, a stop included: the person has dealt with it (topped up the
// credit, raised the cap). The spend is kept, as are the calls of the call
// budget: they were made. The lifetime totals (Iterations,
// NeutralIterations, TotalFailures, EvictedErrors, Opens, LastProgress)
// and the transition history are kept. A half-open probe in flight is
// forgotten; its outcome, when recorded, counts as an ordinary iteration.
// Resume works in every state, a held circuit (ForceOpen, Abort, lost
// protected files, a give-up) included; on a closed circuit it only resets
// the counters, and the history records a CLOSED -> CLOSED resume.
// [Config.Guard], if any, takes stock of the protected files as they are
// now: what the person left is what the next iteration is compared with.
func (b *CircuitBreaker) Resume() { b.manualClose(CauseResume) }

// Skip does what Resume does, and is recorded in the history (and given
// to [Config.OnStateChange]) as a skip (CauseSkip): the person chose to move
// on to another task rather than retry the stuck one (exit.sh's "Skip").
// The task the loop was on ([FailureStats.Task], the last one an iteration named)
// goes on the list of skipped tasks ([CircuitBreaker.SkippedTasks]), so that the host, the
// one that moves on, can pick another one; a loop that named no task
// skips nothing.
func (b *CircuitBreaker) Skip() { b.manualClose(CauseSkip) }

// Abort stops the loop for good (exit.sh's "Abort"): the circuit opens,
// or stays open, with a reason of kind [ReasonAborted] whose Message is the
// reason the circuit had before (the completion reason for a complete
// loop, empty if it was closed). No cooldown ends
// an aborted circuit: Check refuses every iteration, with a zero
// RetryAfter, until a person calls Resume, Skip or Reset. A snapshot keeps
// the circuit aborted across restarts. Counters are kept, as evidence.
func (b *CircuitBreaker) Abort() {
	b.mu.Lock()
	defer b.unlock()
	now := b.cfg.Now()
	before := b.reason
	if b.completion.Complete.Kind != ReasonNone {
		before = b.completion.Complete
	}
	b.hold(Reason{Kind: ReasonAborted, Message: before.String()}, now, CauseAbort)
}

// ForceOpen opens the circuit, or keeps it open, with a reason of kind
// [ReasonForcedOpen] whose Message is reason (it may be empty), e.g. because
// a person wants the loop stopped while they look at something, or the
// host saw trouble the signals cannot. No cooldown ends a forced circuit:
// Check refuses every iteration, with a zero RetryAfter, until Resume, Skip
// or Reset. An open circuit keeps its opening time; another state counts a
// new open in [Stats.Opens]. On a complete loop, Abort and ForceOpen end the
// completion: Check reports the held reason, and after Resume or Skip the
// loop runs again.
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
	b.completion = completionState{}
	b.samples = newErrorSamples(&b.cfg)
	if cause == CauseSkip {
		b.tasks.skip()
	}
	b.tasks = taskState{skipped: b.tasks.skipped}
	b.trends = trendState{}
	b.limit = providerLimit{}
	b.close(now, cause)
	b.refreshWarnings()
	b.wake()
}
