package fakemodel

import (
	"net/http"
	"sync"
)

// book is what a fake API keeps of its requests: every request, in the
// order it came, and the answerer that replies to the turns, one at a
// time. It is safe for concurrent use.
type book struct {
	answer Answerer

	mu       sync.Mutex // guards requests
	requests []*Request

	answering sync.Mutex // held while the answerer answers; guards turns
	turns     int        // the turns answered so far
}

// add records a request, already decoded (it is not changed after), and
// returns how many the book holds with it.
func (b *book) add(r *Request) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, r)
	return len(b.requests)
}

// all returns the requests so far, in order.
func (b *book) all() []*Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*Request(nil), b.requests...)
}

// turnsSoFar returns the requests so far that asked the model for a turn.
func (b *book) turnsSoFar() []*Request {
	var turns []*Request
	for _, r := range b.all() {
		if r.IsTurn() {
			turns = append(turns, r)
		}
	}
	return turns
}

// reply asks the answerer for the reply to a turn, and returns it with the
// turn's number (1 for the first). One answer at a time: a script is a
// sequence. The answerer may read the requests so far.
func (b *book) reply(r *Request) (Reply, int) {
	b.answering.Lock()
	defer b.answering.Unlock()
	b.turns++
	return b.answer(r), b.turns
}

// addHeaders adds a reply's headers to the response's.
func addHeaders(w http.ResponseWriter, h http.Header) {
	for k, vs := range h {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
}
