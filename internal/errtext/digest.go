package errtext

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDigestInput bounds how much of a text Digest reads, in bytes: of a
// longer text, the first and the last half of it, and its length.
const MaxDigestInput = 1 << 20

// Digest returns a hash of the whole of s, normalized as Normalize
// normalizes it (numbers, hex values, durations, temporary directories,
// stack frames and colours replaced, lower-cased, trimmed) but without
// Normalize's cap: two texts have the same digest when they are the same
// from end to end but for what varies between runs. A text that grows (a
// build log polled as it is written) has a new digest each time, where its
// fingerprint, which reads the first 500 runes, stays the same. It reads at
// most MaxDigestInput bytes; of a longer text, the first and the last half
// of that, cut at line ends, and its length. It allocates nothing.
func Digest(s string) uint32 { return digestWith(s, false) }

// ResultDigest is Digest for a tool's result, where numbers are what the
// tool says: a counter that moves, line 41 then line 42, 3 files then 4
// are new results. Only the numbers that vary while nothing changes
// (dates and times of day, durations, hex values such as addresses) are
// replaced, as temporary directories, stack frames and colours are.
func ResultDigest(s string) uint32 { return digestWith(s, true) }

// Digest is ResultDigest with keep false.
func digestWith(s string, keep bool) uint32 {
	if len(s) <= MaxDigestInput {
		return fold(digestOf(s, fnvOffset, keep))
	}
	head, tail := s[:MaxDigestInput/2], s[len(s)-MaxDigestInput/2:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	h := digestOf(head, fnvOffset, keep)
	h = fnvWrite(h, []byte{0})
	h = digestOf(tail, h, keep)
	var size [8]byte
	for i := range size {
		size[i] = byte(uint64(len(s)) >> (8 * i))
	}
	return fold(fnvWrite(h, size[:]))
}

// digestOf returns the FNV-1a hash h, continued with s normalized; keep:
// as ResultDigest normalizes it.
func digestOf(s string, h uint64, keep bool) uint64 {
	var buf [32 << 10]byte
	return digestIn(buf[:], s, h, keep)
}

// digestIn is digestOf with the buffer the result is written to.
func digestIn(buf []byte, s string, h uint64, keep bool) uint64 {
	d := digester{sum: h}
	n := normalizer{buf: buf, limit: math.MaxInt32, digest: &d, keepNumbers: keep}
	d.write(n.run(s), true)
	return d.sum
}

// digester hashes a normalizer's result as it is written.
type digester struct {
	sum     uint64
	started bool // the hash has taken a byte: leading white space is done
}

// digestTail is what spill leaves in the buffer: the rules look back at
// the end of the result (a file name before "(", the byte before a slash).
const digestTail = 512

// spill hashes the result but for its last digestTail bytes, and for the
// line being copied as text, which a rule may take back (lineToStack),
// unless that line is too long to be the Go call it would have to be.
func (n *normalizer) spill() {
	keep := max(n.size-digestTail, 0)
	if n.lineText && n.lineSize < keep {
		if n.size-n.lineSize > len(n.buf)/2 {
			n.lineText = false
		} else {
			keep = n.lineSize
		}
	}
	n.digest.write(n.buf[:keep], false)
	n.size = copy(n.buf, n.buf[keep:n.size])
	if n.lineText {
		n.lineSize -= keep
	}
}

// write hashes p, the result's next bytes; last: they are its end, whose
// trailing white space is dropped, as Normalize drops it. White space
// before the first byte hashed is dropped too.
func (d *digester) write(p []byte, last bool) {
	if !d.started {
		p = trimLeftSpace(p)
	}
	if last {
		p = trimRightSpace(p)
	}
	if len(p) > 0 {
		d.started = true
		d.sum = fnvWrite(d.sum, p)
	}
}

func trimLeftSpace(p []byte) []byte {
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if !unicode.IsSpace(r) {
			break
		}
		p = p[size:]
	}
	return p
}

func trimRightSpace(p []byte) []byte {
	for len(p) > 0 {
		r, size := utf8.DecodeLastRune(p)
		if !unicode.IsSpace(r) {
			break
		}
		p = p[:len(p)-size]
	}
	return p
}

// FNV-1a, 64 bits: stable across processes and versions, as a snapshot
// keeps digests.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvWrite(h uint64, p []byte) uint64 {
	for _, c := range p {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// fold returns the 64-bit hash as 32 bits.
func fold(h uint64) uint32 { return uint32(h>>32) ^ uint32(h) }
