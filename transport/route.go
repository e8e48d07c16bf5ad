package transport

import (
	"context"
	"net/http"
)

// RouteHeader is the request header that names a request's meter for
// [Route], for a framework that gives its model client no context of its
// own but lets a callback set the request's headers (Google ADK's
// LLMRequest.Config.HTTPOptions.Headers). The transport removes it: it is
// never sent.
const RouteHeader = "Loopbreaker-Route"

// Route returns an http.RoundTripper that does what [New]'s does, for many
// meters at once: each request goes to the meter route returns for it,
// given the request's context and the value of its [RouteHeader] ("" when
// it has none). So one model client, shared by a framework's sessions,
// feeds the breaker of each request's session
// (github.com/loopbreaker/loopbreaker/sessions implements route). A
// request route returns nil for is sent all the same, reported to no
// meter. The meters are told apart by ==: route returns the same meter
// (a pointer) for the same session, so that a limit the SDK retried away
// is lifted from the meter it was reported to.
func Route(route func(ctx context.Context, key string) Meter, base http.RoundTripper) http.RoundTripper {
	return newTransport(func(req *http.Request) Meter {
		return route(req.Context(), req.Header.Get(RouteHeader))
	}, base)
}
