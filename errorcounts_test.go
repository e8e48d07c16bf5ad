package loopbreaker

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The history keeps the most recently seen fingerprints; the least
// recently seen one goes first, and Stats counts it.
func TestErrorHistoryEvictsLeastRecentlySeen(t *testing.T) {
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxFingerprints: 3, MaxConsecutive: -1, MaxSameError: -1}})
	for _, msg := range []string{"error a", "error b", "error c", "error a", "error d"} {
		b.RecordFailure(msg)
	}
	s := b.Stats()
	assert.Equal(t, 3, s.Failures.Unique)
	assert.Equal(t, 1, s.Failures.Evicted)
	assert.Equal(t, map[string]int{
		Fingerprint("error a"): 2, // seen again, so b was the oldest
		Fingerprint("error c"): 1,
		Fingerprint("error d"): 1,
	}, s.Failures.Counts)

	// An evicted error that comes back starts counting again.
	b.RecordFailure("error b")
	s = b.Stats()
	assert.Equal(t, 1, s.Failures.Counts[Fingerprint("error b")])
	assert.NotContains(t, s.Failures.Counts, Fingerprint("error c"))
	assert.Equal(t, 2, s.Failures.Evicted)
}

func TestErrorHistoryRecencyOrderUnderChurn(t *testing.T) {
	h := newErrorCounts(4)
	for i := uint32(0); i < 100; i++ {
		h.add(i % 7)
		h.add(3) // 3 is always recent
	}
	assert.Equal(t, 4, h.len())
	assert.Equal(t, 100+14, h.snapshot()[formatFingerprint(3)], "3 is never evicted: once a round, and in 14 rounds as i%7")
	// Walk the list both ways: every entry is linked exactly once.
	seen := map[int32]bool{}
	for i := h.newest; i >= 0; i = h.entries[i].older {
		seen[i] = true
	}
	assert.Len(t, seen, 4)
	n := 0
	for i := h.oldest; i >= 0; i = h.entries[i].newer {
		n++
	}
	assert.Equal(t, 4, n)
}

// A loop that records a million distinct errors stays under a few MB.
func TestMillionDistinctErrorsStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("records a million errors")
	}
	b, _ := newTestBreaker(t, Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 1_000_000
	msg := []byte("dial tcp: lookup host-aaaaa: no such host")
	for i := 0; i < n; i++ {
		for j, k := 0, i; j < 5; j, k = j+1, k/26 { // a distinct host name each time
			msg[22+j] = byte('a' + k%26)
		}
		b.RecordFailure(string(msg))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	s := b.Stats()
	require.Equal(t, n, s.Failures.Total)
	assert.Equal(t, DefaultConfig().Failures.MaxFingerprints, s.Failures.Unique)
	// Every error was new (but for the odd 32-bit fingerprint collision).
	assert.InDelta(t, n, s.Failures.Evicted+s.Failures.Unique, 50)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew by %d KB for %d errors", grown/1024, n)
	assert.Less(t, grown, int64(4<<20), "heap grew by %d bytes", grown)
	runtime.KeepAlive(b)
}
