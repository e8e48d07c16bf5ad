package fakemodel

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// APIError is an error answer of the API: an HTTP status and the error
// object of its JSON body. The Messages API's body is
// {"type":"error","error":{"type","message"},"request_id"}; the Responses
// API's is {"error":{"message","type","param","code"}} (see OpenAI). The
// response's headers are the Reply's.
type APIError struct {
	Status  int    // 400, 402, 403, 429, 500, 529, ...
	Type    string // invalid_request_error, billing_error, permission_error, rate_limit_error, api_error, overloaded_error, ...
	Message string
	// Code is the Responses API's error code (rate_limit_exceeded,
	// insufficient_quota, context_length_exceeded, ...); the Messages API
	// has none, and its fake leaves it out.
	Code string
	// Fields are more members of the Responses API's error object, as a
	// backend adds them (Codex's usage_limit_reached carries plan_type and
	// resets_at); the Messages API's fake leaves them out.
	Fields map[string]any
}

// Error is a reply that answers with an HTTP status and an error of type
// and message, as the API does: 400 invalid_request_error, 401
// authentication_error, 402 billing_error, 403 permission_error, 404
// not_found_error, 413 request_too_large, 429 rate_limit_error, 500
// api_error, 529 overloaded_error. Claude Code 2.1.328 retries a 529 (a
// few times, then "Repeated 529 Overloaded errors") and a 429 it may wait
// out (see RateLimited); it gave up on CreditTooLow and on a 402 at once,
// and sent the request of a 400 with another message six times over
// three seconds before it gave up.
func Error(status int, errType, message string) Reply {
	return Reply{Err: &APIError{Status: status, Type: errType, Message: message}}
}

// RateLimited is a 429 rate_limit_error as a spent usage limit answers
// it: retry-after in whole seconds, and Anthropic's unified rate-limit
// headers saying the five-hour window is spent until reset
// (anthropic-ratelimit-unified-status rejected, -reset in Unix seconds,
// -representative-claim five_hour, and the same for the 5h window
// itself). Claude Code 2.1.328 retries a 429 whose retry-after is short
// (it waited out 30 seconds) and gives up at once on one of an hour, or
// on any with x-should-retry: false (WithHeader), printing "API Error:
// Request rejected (429) · " and the message.
func RateLimited(retryAfter time.Duration, reset time.Time) Reply {
	r := Error(http.StatusTooManyRequests, "rate_limit_error",
		"This request would exceed your account's rate limit. Please try again later.")
	unix := strconv.FormatInt(reset.Unix(), 10)
	r.Header = http.Header{
		"Retry-After":                                      {strconv.Itoa(int(retryAfter.Round(time.Second) / time.Second))},
		"Anthropic-Ratelimit-Unified-Status":               {"rejected"},
		"Anthropic-Ratelimit-Unified-Reset":                {unix},
		"Anthropic-Ratelimit-Unified-Representative-Claim": {"five_hour"},
		"Anthropic-Ratelimit-Unified-5h-Status":            {"rejected"},
		"Anthropic-Ratelimit-Unified-5h-Reset":             {unix},
		"Anthropic-Ratelimit-Unified-5h-Utilization":       {"1.0"},
		"Anthropic-Ratelimit-Unified-Fallback-Percentage":  {"0.5"},
		"Anthropic-Ratelimit-Unified-Overage-Status":       {"rejected"},
	}
	return r
}

// Overloaded is a 529 overloaded_error, the API's answer when it is over
// capacity.
func Overloaded() Reply {
	return Error(529, "overloaded_error", "Overloaded")
}

// CreditTooLow is the 400 invalid_request_error the API answers an
// organisation without credit, its message as the API words it.
func CreditTooLow() Reply {
	return Error(http.StatusBadRequest, "invalid_request_error",
		"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
}

// writeError writes e as the API does: its status, and a JSON body of
// the error and the request id.
func writeError(w http.ResponseWriter, e *APIError, requestID string) {
	w.Header().Set("Content-Type", "application/json")
	if requestID != "" {
		w.Header().Set("request-id", requestID)
	}
	w.WriteHeader(e.Status)
	body := map[string]any{
		"type":  "error",
		"error": map[string]string{"type": e.Type, "message": e.Message},
	}
	if requestID != "" {
		body["request_id"] = requestID
	}
	_ = json.NewEncoder(w).Encode(body)
}
