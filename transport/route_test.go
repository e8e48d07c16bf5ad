package transport_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/loopbreaker/loopbreaker/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Route sends each request to the meter its route header names: a 429 is
// reported to that meter alone, and the success of the SDK's retry lifts
// it from that meter alone; a request routed to no meter is sent all the
// same. The header is never sent.
func TestRouteReportsEachRequestToItsMeter(t *testing.T) {
	var served atomic.Int32
	var header atomic.Value
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header.Store(r.Header.Get(transport.RouteHeader))
		if served.Add(1) == 1 {
			w.Header().Set("Retry-After", "20")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":{"type":"rate_limit_error","message":"slow down"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"model":"gpt-4o","usage":{"prompt_tokens":10,"completion_tokens":2}}`)
	}))
	defer server.Close()
	a, b := &meterLog{}, &meterLog{}
	meters := map[string]transport.Meter{"a": a, "b": b}
	client := &http.Client{Transport: transport.Route(func(_ context.Context, key string) transport.Meter { return meters[key] }, nil)}
	send := func(key string) {
		req, err := http.NewRequest(http.MethodPost, server.URL, nil)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set(transport.RouteHeader, key)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		assert.Empty(t, header.Load(), "the route header is never sent")
	}
	send("a") // 429
	send("b")
	assert.Len(t, a.limits, 1)
	assert.Empty(t, a.lifts, "b's success is not a's retry")
	send("a")
	assert.Len(t, a.lifts, 1, "a's retry got past it")
	send("")
	send("nobody")
	assert.Equal(t, 2, a.calls)
	assert.Equal(t, 1, b.calls)
	assert.Empty(t, b.limits)
	assert.Len(t, b.usage, 1)
	assert.Equal(t, int32(5), served.Load(), "unrouted requests are sent too")
}
