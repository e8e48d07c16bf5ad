package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// QuotaPerMinute is the Gemini API's 429 RESOURCE_EXHAUSTED at a quota of
// requests per minute, in the API's words ("You exceeded your current
// quota, ... Quota exceeded for metric: ..., limit: 10, model: ...
// Please retry in 29.5s."), with its details: a QuotaFailure whose
// violation is GenerateRequestsPerMinutePerProjectPerModel-FreeTier, a
// Help link, and a RetryInfo whose retryDelay is retryIn in whole
// seconds (none, and no sentence to retry, when retryIn is 0). Gemini CLI 0.61.0 waits the retryDelay and tries again, up to
// general.maxAttempts times (10), then gives up and exits 173.
func QuotaPerMinute(model string, retryIn time.Duration) Reply {
	return quotaExceeded(model, "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", 10, retryIn)
}

// QuotaPerDay is the Gemini API's 429 RESOURCE_EXHAUSTED at a quota of
// requests per day: as QuotaPerMinute, its violation
// GenerateRequestsPerDayPerProjectPerModel-FreeTier and its limit 250
// (the API gives a retryIn even so; 0 leaves it out).
// Gemini CLI 0.61.0 does not retry it: a daily quota is terminal.
func QuotaPerDay(model string, retryIn time.Duration) Reply {
	return quotaExceeded(model, "GenerateRequestsPerDayPerProjectPerModel-FreeTier", 250, retryIn)
}

// quotaExceeded is a 429 RESOURCE_EXHAUSTED of the free tier's requests
// quota quotaID, of limit requests; a retryIn of 0 or less says no time
// to retry in (no sentence, no RetryInfo).
func quotaExceeded(model, quotaID string, limit int, retryIn time.Duration) Reply {
	const metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
	message := "You exceeded your current quota, please check your plan and billing details. " +
		"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. " +
		"To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n" +
		fmt.Sprintf("* Quota exceeded for metric: %s, limit: %d, model: %s", metric, limit, model)
	if retryIn > 0 {
		message += fmt.Sprintf("\nPlease retry in %s.", retryIn)
	}
	details := []any{
		map[string]any{"@type": "type.googleapis.com/google.rpc.Help", "links": []any{
			map[string]any{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
			"quotaMetric": metric, "quotaId": quotaID,
			"quotaDimensions": map[string]any{"location": "global", "model": model},
			"quotaValue":      fmt.Sprint(limit)}}},
	}
	if retryIn > 0 {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", int(retryIn/time.Second))})
	}
	return Reply{Err: &APIError{Status: http.StatusTooManyRequests, Type: "RESOURCE_EXHAUSTED", Message: message,
		Fields: map[string]any{"details": details}}}
}

// APIKeyInvalid is the Gemini API's 400 INVALID_ARGUMENT for a key it
// does not know, with its ErrorInfo (reason API_KEY_INVALID).
func APIKeyInvalid() Reply {
	return Reply{Err: &APIError{Status: http.StatusBadRequest, Type: "INVALID_ARGUMENT",
		Message: "API key not valid. Please pass a valid API key.",
		Fields: map[string]any{"details": []any{map[string]any{
			"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
			"metadata": map[string]any{"service": "generativelanguage.googleapis.com"}}}}}}
}

// googleStatus is the status of the Google APIs' errors that an HTTP
// code stands for.
var googleStatus = map[int]string{
	http.StatusBadRequest:          "INVALID_ARGUMENT",
	http.StatusUnauthorized:        "UNAUTHENTICATED",
	http.StatusForbidden:           "PERMISSION_DENIED",
	http.StatusNotFound:            "NOT_FOUND",
	http.StatusConflict:            "ABORTED",
	http.StatusTooManyRequests:     "RESOURCE_EXHAUSTED",
	499:                            "CANCELLED",
	http.StatusInternalServerError: "INTERNAL",
	http.StatusNotImplemented:      "UNIMPLEMENTED",
	http.StatusServiceUnavailable:  "UNAVAILABLE",
	http.StatusGatewayTimeout:      "DEADLINE_EXCEEDED",
}

// isGoogleStatus reports whether s is written as a Google status is:
// upper-case words joined by underscores.
func isGoogleStatus(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
}

// writeGeminiError writes e as the Gemini API does: its HTTP status, and
// a JSON body {"error":{"code","message","status"}} with e's Fields
// (details) in the error object. The status is e's Type when it is a
// Google status, else the one its code stands for, else its Type.
func writeGeminiError(w http.ResponseWriter, e *APIError) {
	status := e.Type
	if !isGoogleStatus(status) {
		if s, ok := googleStatus[e.Status]; ok {
			status = s
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Status)
	obj := map[string]any{"code": e.Status, "message": e.Message, "status": status}
	for k, v := range e.Fields {
		obj[k] = v
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": obj})
}
