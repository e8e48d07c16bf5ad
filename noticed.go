package loopbreaker

// noticedError is the error that the iteration just recorded, a success,
// noticed ([Iteration.Noticed]): the same-error signal judges it as it
// judges a failure's error.
type noticedError struct {
	fingerprint uint32
	count       int  // its count in the error history, this one included
	set         bool // the last iteration noticed one
}

// sameErrorNow returns the error the same-error signal judges after the
// iteration just recorded: its failure's, or the error it noticed
// although it succeeded; ok is false when it had neither.
func (b *CircuitBreaker) sameErrorNow() (fp uint32, count int, ok bool) {
	switch {
	case b.lastFailed:
		return b.lastFingerprint, b.lastFingerprintCount, true
	case b.noticed.set:
		return b.noticed.fingerprint, b.noticed.count, true
	}
	return 0, 0, false
}
