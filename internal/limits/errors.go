package limits

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxErrors bounds the walk of an error tree.
const maxErrors = 64

// FromError recognises a provider limit in an error.
//
// A timeout is never a limit: when the tree holds context.DeadlineExceeded
// or an error whose Timeout method reports true (a *url.Error or net.Error
// that timed out), FromError returns None, whatever the texts say. An agent
// run that timed out may have printed a file that mentions a limit
// (ralph-claude-code's bug #183); the timeout is what happened.
//
// Otherwise FromError walks the tree (Unwrap() error and Unwrap() []error,
// as errors.Is does) for an error that exposes an HTTP status, and reads it
// with FromHTTP. An error exposes its status by any of:
//
//   - a method StatusCode() int or HTTPResponse() *http.Response;
//   - exported fields StatusCode int and Response or RawResponse
//     *http.Response, on the error or the struct it points to: the shape of
//     the Stainless-generated SDKs' *apierror.Error (openai-go,
//     anthropic-sdk-go) and of Azure's *azcore.ResponseError. Their
//     RawJSON() string method, when there is one, gives the body.
//
// A response to a request for a service that is no model provider (GitHub,
// a package registry, Docker Hub: go-github's *ErrorResponse has the shape
// too) exposes no status here: its 429 is that service's.
//
// When no such error is a limit, FromError reads the text of err with
// FromText, and when that is no limit either, the texts of the errors err
// wraps, in the same order: a host that wraps an agent's error puts words
// before its text on the same line ("claude: exit status 1: You've hit
// your limit"), where a limit message no longer begins its line, but the
// wrapped error's own text begins with it. The Gemini Go SDK's APIError
// ("Error 429, Message: ..., Status: RESOURCE_EXHAUSTED, ...") is
// recognised by its text.
//
// A panic in an error's methods is recovered and taken as no answer.
func FromError(err error, now time.Time, patterns ...Pattern) Limit {
	if err == nil || timedOut(err) {
		return Limit{}
	}
	var found finding
	walk(err, func(e error) bool {
		status, h, body, ok := httpParts(e)
		if !ok {
			return false
		}
		found = fromHTTP(status, h, body, now, patterns)
		return found.kind != None
	})
	if found.kind != None {
		return found.limit()
	}
	top := errorText(err)
	if found = scan(top, now, patterns); found.kind != None {
		return found.limit()
	}
	walk(err, func(e error) bool {
		if text := errorText(e); text != top {
			found = scan(text, now, patterns)
		}
		return found.kind != None
	})
	return found.limit()
}

// walk visits err and the errors it wraps, depth first, until visit
// returns true or maxErrors errors were visited.
func walk(err error, visit func(error) bool) {
	stack := []error{err}
	for n := 0; len(stack) > 0 && n < maxErrors; n++ {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e == nil {
			continue
		}
		if visit(e) {
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			stack = append(stack, safely(u.Unwrap))
		case interface{ Unwrap() []error }:
			wrapped := safely(u.Unwrap)
			for i := len(wrapped) - 1; i >= 0; i-- {
				stack = append(stack, wrapped[i])
			}
		}
	}
}

// timedOut reports whether err's tree holds a timeout: an error whose
// Timeout method reports true (context.DeadlineExceeded has one), or
// that says it Is context.DeadlineExceeded. It walks the tree itself,
// within maxErrors, where errors.Is would follow an error that wraps
// itself forever.
func timedOut(err error) bool {
	timeout := false
	walk(err, func(e error) bool {
		switch x := e.(type) {
		case interface{ Timeout() bool }:
			timeout = safely(x.Timeout)
		case interface{ Is(error) bool }:
			timeout = safely(func() bool { return x.Is(context.DeadlineExceeded) })
		}
		return timeout
	})
	return timeout
}

var responseType = reflect.TypeOf((*http.Response)(nil))

// httpParts reads the HTTP status, headers and body e exposes (see
// FromError); ok is false when it exposes no status.
func httpParts(e error) (status int, h http.Header, body []byte, ok bool) {
	var resp *http.Response
	switch x := e.(type) {
	case interface{ HTTPResponse() *http.Response }:
		resp = safely(x.HTTPResponse)
	case interface{ StatusCode() int }:
		status = safely(x.StatusCode)
	default:
		status, resp = httpFields(e)
	}
	if status == 0 && resp != nil {
		status = resp.StatusCode
	}
	if resp != nil && resp.Request != nil && resp.Request.URL != nil && otherService(resp.Request.URL.Hostname()) {
		return 0, nil, nil, false // a package registry's or GitHub's status: no model's
	}
	if resp != nil {
		h = resp.Header
	}
	if r, isRaw := e.(interface{ RawJSON() string }); isRaw {
		body = []byte(safely(r.RawJSON))
	}
	return status, h, body, status != 0
}

// otherServices are the hosts, and the domains of hosts, of services an
// agent's build or tools call that are no model provider: package
// registries, GitHub, Docker Hub, the Hugging Face Hub's downloads (its
// inference router, router.huggingface.co, is a model provider). Their
// 429s and 503s are theirs, not a provider limit.
var otherServices = []string{
	"github.com", "githubusercontent.com", "npmjs.org", "yarnpkg.com", "pypi.org", "pythonhosted.org",
	"crates.io", "proxy.golang.org", "sum.golang.org", "docker.io", "docker.com",
}

// otherService reports whether host is one of otherServices or under one,
// or the Hugging Face Hub itself.
func otherService(host string) bool {
	host = strings.ToLower(host)
	if host == "huggingface.co" {
		return true
	}
	for _, d := range otherServices {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// httpFields reads the exported fields StatusCode int and Response or
// RawResponse *http.Response of the struct e is or points to.
func httpFields(e error) (status int, resp *http.Response) {
	v := reflect.ValueOf(e)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 0, nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || !mayExposeHTTP(v.Type()) {
		return 0, nil
	}
	field := func(name string) (reflect.Value, bool) {
		sf, ok := v.Type().FieldByName(name)
		if !ok || !sf.IsExported() {
			return reflect.Value{}, false
		}
		f, err := v.FieldByIndexErr(sf.Index) // err: through a nil embedded pointer
		return f, err == nil
	}
	if f, ok := field("StatusCode"); ok && f.Kind() == reflect.Int {
		status = int(f.Int())
	}
	for _, name := range []string{"Response", "RawResponse"} {
		if f, ok := field(name); ok && f.Type() == responseType && !f.IsNil() {
			resp = f.Interface().(*http.Response)
			break
		}
	}
	return status, resp
}

// typesExposingHTTP caches, for each struct type httpFields meets, whether
// it has a field StatusCode, Response or RawResponse at all (a
// *typeAnswer): most errors have none, and looking their fields up on
// every failed iteration would cost more than the rest of FromError. It
// holds one entry a type; lastAnswer is the last one used, as a loop's
// errors are mostly of one type.
var (
	typesExposingHTTP sync.Map
	lastAnswer        atomic.Pointer[typeAnswer]
)

type typeAnswer struct {
	t   reflect.Type
	has bool
}

// mayExposeHTTP reports whether the struct type t has a field httpFields
// reads.
func mayExposeHTTP(t reflect.Type) bool {
	if a := lastAnswer.Load(); a != nil && a.t == t {
		return a.has
	}
	a, ok := typesExposingHTTP.Load(t)
	if !ok {
		has := false
		for _, name := range []string{"StatusCode", "Response", "RawResponse"} {
			if _, ok := t.FieldByName(name); ok {
				has = true
			}
		}
		a, _ = typesExposingHTTP.LoadOrStore(t, &typeAnswer{t: t, has: has})
	}
	answer := a.(*typeAnswer)
	lastAnswer.Store(answer)
	return answer.has
}

// errorText is err.Error(), or "" when it panics: the Stainless SDKs'
// Error method dereferences the request and response it carries.
func errorText(err error) string {
	return safely(err.Error)
}

// safely calls f, and returns the zero value if it panics.
func safely[T any](f func() T) (v T) {
	defer func() {
		if recover() != nil {
			var zero T
			v = zero
		}
	}()
	return f()
}
