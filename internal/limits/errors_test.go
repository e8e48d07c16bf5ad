package limits

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stainlessError has the shape of the Stainless-generated SDKs' error
// (openai-go's and anthropic-sdk-go's *apierror.Error): exported fields
// StatusCode, Request and Response, the body behind RawJSON, and an Error
// method that dereferences the request and the response.
type stainlessError struct {
	StatusCode int
	Request    *http.Request
	Response   *http.Response
	raw        string
}

func (e stainlessError) RawJSON() string { return e.raw }

func (e *stainlessError) Error() string {
	return fmt.Sprintf("%s %q: %d %s %s", e.Request.Method, e.Request.URL, e.Response.StatusCode,
		http.StatusText(e.Response.StatusCode), e.raw)
}

func newStainlessError(status int, h http.Header, raw string) *stainlessError {
	req, _ := http.NewRequest(http.MethodPost, "https://api.example.com/v1/messages", nil)
	return &stainlessError{
		StatusCode: status,
		Request:    req,
		Response:   &http.Response{StatusCode: status, Header: h},
		raw:        raw,
	}
}

// githubError has the shape of go-github's *ErrorResponse: the response,
// whose request names the service, and a message.
type githubError struct {
	Response *http.Response
	Message  string
}

func (e *githubError) Error() string { return e.Message }

func mustRequest(url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// azureError has the shape of Azure's *azcore.ResponseError.
type azureError struct {
	ErrorCode   string
	StatusCode  int
	RawResponse *http.Response
}

func (e *azureError) Error() string { return "azure: " + e.ErrorCode }

// geminiError has the shape of the Gemini Go SDK's APIError: a value
// type, with Code and Status but no response.
type geminiError struct {
	Code    int
	Message string
	Status  string
	Details []map[string]any
}

func (e geminiError) Error() string {
	return fmt.Sprintf("Error %d, Message: %s, Status: %s, Details: %v", e.Code, e.Message, e.Status, e.Details)
}

// statusError exposes its status by a method.
type statusError struct{ status int }

func (e statusError) Error() string   { return "upstream said " + http.StatusText(e.status) }
func (e statusError) StatusCode() int { return e.status }

// responseError exposes its response by a method.
type responseError struct{ resp *http.Response }

func (e responseError) Error() string                { return "request failed" }
func (e responseError) HTTPResponse() *http.Response { return e.resp }

// panicky panics in every method FromError may call.
type panicky struct{}

func (panicky) Error() string    { panic("Error") }
func (panicky) StatusCode() int  { panic("StatusCode") }
func (panicky) RawJSON() string  { panic("RawJSON") }
func (panicky) Timeout() bool    { panic("Timeout") }
func (panicky) Is(error) bool    { panic("Is") }
func (panicky) Unwrap() []error  { panic("Unwrap") }
func (panicky) Temporary() bool  { panic("Temporary") }
func (panicky) Something() error { panic("Something") }

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestFromErrorReadsSDKErrorsThatExposeTheirStatus(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		kind  Kind
		reset string
	}{
		{"Stainless 429 with Retry-After", newStainlessError(429, header("Retry-After", "30"), anthropicRateLimit),
			Wait, "2026-01-29T16:30:03+02:00"},
		{"Stainless 429 insufficient_quota", newStainlessError(429, nil, openAIQuota), Stop, ""},
		{"Stainless 529", newStainlessError(529, nil, anthropicOverload), Wait, ""},
		{"Stainless 400 credit balance", newStainlessError(400, nil, anthropicCredit), Stop, ""},
		{"Stainless 500", newStainlessError(500, header("Retry-After", "5"), `{"type":"error","error":{"type":"api_error"}}`), None, ""},
		{"Stainless error wrapped twice", fmt.Errorf("iteration 3: %w", fmt.Errorf("agent: %w",
			newStainlessError(429, header("Retry-After", "30"), anthropicRateLimit))), Wait, "2026-01-29T16:30:03+02:00"},
		{"Stainless error in a join", errors.Join(errors.New("cleanup failed"),
			newStainlessError(429, header("Retry-After", "30"), "")), Wait, "2026-01-29T16:30:03+02:00"},
		{"Stainless shape with only a Response", &stainlessError{Response: &http.Response{StatusCode: 429}}, Wait, ""},
		{"Azure shape", &azureError{ErrorCode: "429", StatusCode: 429, RawResponse: &http.Response{StatusCode: 429, Header: header("Retry-After", "60")}},
			Wait, "2026-01-29T16:30:33+02:00"},
		{"StatusCode method", statusError{429}, Wait, ""},
		{"StatusCode method, 503: the server busy", statusError{503}, Wait, ""},
		{"Stainless 502", newStainlessError(502, nil, "<html>Bad Gateway</html>"), Wait, ""},
		{"Stainless 500 refusing repeated tool calls", newStainlessError(500, nil, dashScopeLoop), Loop, ""},
		{"a GitHub client's 429 (go-github's shape)", &githubError{Response: &http.Response{StatusCode: 429,
			Header: header("Retry-After", "60"), Request: mustRequest("https://api.github.com/repos/o/r/pulls")}, Message: "secondary rate limit"}, None, ""},
		{"a registry's 503", &githubError{Response: &http.Response{StatusCode: 503,
			Request: mustRequest("https://registry.npmjs.org/left-pad")}, Message: "Service Unavailable"}, None, ""},
		{"HTTPResponse method", responseError{&http.Response{StatusCode: 529, Header: header("Retry-After", "10")}}, Wait, "2026-01-29T16:29:43+02:00"},
		{"Gemini APIError, by its text", geminiError{Code: 429, Message: "Resource has been exhausted (e.g. check quota).", Status: "RESOURCE_EXHAUSTED",
			Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}}}, Wait, "2026-01-29T16:30:10+02:00"},
		{"Gemini APIError, 500", geminiError{Code: 500, Message: "Internal error", Status: "INTERNAL"}, None, ""},
		{"a plain error with Claude Code's text", fmt.Errorf("claude exited 1: %s", "\nYou've hit your limit · resets 5pm (Europe/Vilnius)"),
			Wait, "2026-01-29T17:00:00+02:00"},
		{"a plain error", errors.New("exit status 1"), None, ""},
		{"nil", nil, None, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := FromError(tc.err, now)
			assert.Equal(t, tc.kind, l.Kind, l.Why)
			got := ""
			if !l.Reset.IsZero() {
				got = l.Reset.Format("2006-01-02T15:04:05Z07:00")
			}
			assert.Equal(t, tc.reset, got, "reset")
		})
	}
}

// A timeout is never a limit, whatever the texts around it say: the run
// ran out of time (ralph-claude-code's bug #183 took exit code 124 for
// the 5-hour limit).
func TestATimeoutIsNeverALimit(t *testing.T) {
	quoted := "\nYou've hit your limit · resets 5pm (Europe/Vilnius)"
	cases := map[string]error{
		"deadline exceeded":         fmt.Errorf("claude run: %w; output: %s", context.DeadlineExceeded, quoted),
		"url.Error that timed out":  &url.Error{Op: "Post", URL: "https://api.anthropic.com/v1/messages", Err: timeoutError{}},
		"timeout joined with a 429": errors.Join(newStainlessError(429, nil, anthropicRateLimit), timeoutError{}),
		"timeout wrapping a text":   fmt.Errorf("%w: %s", timeoutError{}, quoted),
	}
	for name, err := range cases {
		assert.Equal(t, None, FromError(err, now).Kind, name)
	}
	assert.Equal(t, Wait, FromError(errors.New(quoted), now).Kind, "the same text without the timeout is a limit")
}

// The Stainless SDKs' Error method dereferences the request: a look-alike
// without one panics, and FromError reads its fields all the same.
func TestFromErrorSurvivesPanickingMethods(t *testing.T) {
	l := FromError(&stainlessError{StatusCode: 429, raw: anthropicRateLimit}, now)
	assert.Equal(t, Wait, l.Kind)
	assert.Equal(t, "HTTP 429: This request would exceed your account's rate limit", l.Why)

	require.NotPanics(t, func() { FromError(panicky{}, now) })
	assert.Equal(t, None, FromError(panicky{}, now).Kind)
	assert.Equal(t, None, FromError(fmt.Errorf("wrapped: %w", panicky{}), now).Kind)
}

// A nil pointer in the chain, an embedded nil struct pointer, an error
// that unwraps to itself: FromError reads what it can and stops.
func TestFromErrorOnOddChains(t *testing.T) {
	var nilStainless *stainlessError
	assert.Equal(t, None, FromError(fmt.Errorf("x: %w", error(nilStainless)), now).Kind)

	assert.NotPanics(t, func() { FromError(embeddingError{}, now) })

	assert.Equal(t, None, FromError(selfWrapping{}, now).Kind)
}

type embeddingError struct {
	*stainlessError
}

func (embeddingError) Error() string { return "embedding" }

type selfWrapping struct{}

func (selfWrapping) Error() string   { return "again" }
func (e selfWrapping) Unwrap() error { return e }

// Host patterns reach FromError's text and the bodies of SDK errors.
func TestFromErrorPassesHostPatterns(t *testing.T) {
	p := Pattern{Match: mustRE(`(?i)quota for project \S+ is spent`), Kind: Stop, Why: "project quota"}
	l := FromError(errors.New("call failed: quota for project alpha is spent"), now, p)
	assert.Equal(t, Stop, l.Kind)
	assert.Equal(t, "project quota", l.Why)

	l = FromError(newStainlessError(400, nil, `{"error":{"message":"quota for project alpha is spent"}}`), now, p)
	assert.Equal(t, Stop, l.Kind)
	assert.Equal(t, "HTTP 400: project quota", l.Why)
}

// A host that wraps the agent's error puts words before the limit message
// on its line; the wrapped error's own text is read too, through every
// kind of wrapping.
func TestFromErrorReadsTheTextsOfWrappedErrors(t *testing.T) {
	limit := errors.New("You've hit your limit · resets 5pm (Europe/Vilnius)")
	for name, err := range map[string]error{
		"%w":          fmt.Errorf("claude -p: exit status 1: %w", limit),
		"two levels":  fmt.Errorf("iteration 7: %w", fmt.Errorf("agent: %w", limit)),
		"errors.Join": fmt.Errorf("run: %w", errors.Join(errors.New("cleanup failed"), limit)),
	} {
		l := FromError(err, now)
		assert.Equal(t, Wait, l.Kind, name)
		assert.Equal(t, "2026-01-29T17:00:00+02:00", l.Reset.Format(time.RFC3339), name)
	}
	assert.Equal(t, None, FromError(fmt.Errorf("claude -p: exit status 1: %s", limit), now).Kind,
		"without wrapping, the words before it make it prose")
	assert.Equal(t, None, FromError(fmt.Errorf("timed out: %w", fmt.Errorf("%w: %w", context.DeadlineExceeded, limit)), now).Kind,
		"a timeout is never a limit, wrapped or not")
}
