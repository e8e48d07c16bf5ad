package fakemodel

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// RateLimitExceeded is the Responses API's 429 at a rate limit: the error
// rate_limit_exceeded of type tokens, in the words the API uses ("Rate
// limit reached for gpt-5.5 in organization ... Please try again in
// 20s."), with retry-after in whole seconds (rounded up) and the
// x-ratelimit-* headers saying the tokens per minute are spent until
// retryAfter has passed. Codex 0.169.0 retries it five times, then gives
// up with "exceeded retry limit, last status: 429 Too Many Requests,
// request id: ..." and exits 1.
func RateLimitExceeded(model string, retryAfter time.Duration) Reply {
	r := openAIError(http.StatusTooManyRequests, "tokens", "rate_limit_exceeded",
		fmt.Sprintf("Rate limit reached for %s in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. "+
			"Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.", model, retryAfter))
	r.Header = http.Header{
		"Retry-After":                    {strconv.Itoa(int(math.Ceil(retryAfter.Seconds())))},
		"X-Ratelimit-Limit-Requests":     {"5000"},
		"X-Ratelimit-Remaining-Requests": {"4999"},
		"X-Ratelimit-Reset-Requests":     {"12ms"},
		"X-Ratelimit-Limit-Tokens":       {"30000"},
		"X-Ratelimit-Remaining-Tokens":   {"0"},
		"X-Ratelimit-Reset-Tokens":       {retryAfter.String()},
	}
	return r
}

// InsufficientQuota is the Responses API's 429 for an organisation whose
// quota or credit is spent: insufficient_quota, which no waiting ends.
// Codex 0.169.0 does not retry it: it says "Quota exceeded. Check your
// plan and billing details." and exits 1.
func InsufficientQuota() Reply {
	return openAIError(http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota",
		"You exceeded your current quota, please check your plan and billing details. "+
			"For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.")
}

// InvalidAPIKey is the Responses API's 401 for a key it does not take:
// invalid_api_key, in the API's words ("Incorrect API key provided: ...").
func InvalidAPIKey() Reply {
	return openAIError(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
		"Incorrect API key provided: sk-fake****0000. You can find your API key at https://platform.openai.com/account/api-keys.")
}

// UsageLimitReached is the 429 with which the ChatGPT backend Codex signs
// in to refuses a plan whose usage limit is spent: an error of type
// usage_limit_reached with the plan and the Unix time the limit resets at
// (plan_type, resets_at), as Codex reads it. Codex 0.169.0 does not retry
// it: it says "You’ve hit your usage limit. ... try again at 7:06 PM."
// (the reset in the local time) and exits 1.
func UsageLimitReached(plan string, resetsAt time.Time) Reply {
	r := openAIError(http.StatusTooManyRequests, "usage_limit_reached", "", "The usage limit has been reached")
	r.Err.Fields = map[string]any{"plan_type": plan, "resets_at": resetsAt.Unix()}
	return r
}

// ResponseFailed is a reply whose response fails midway: the stream
// starts, and ends with response.failed carrying code and message
// (context_length_exceeded, insufficient_quota, server_error, ...; see
// Reply.Failed).
func ResponseFailed(code, message string) Reply {
	return Reply{Failed: &APIError{Code: code, Message: message}}
}

// openAIError is a reply that answers with an HTTP status and an error
// of type and code.
func openAIError(status int, errType, code, message string) Reply {
	return Reply{Err: &APIError{Status: status, Type: errType, Code: code, Message: message}}
}

// writeOpenAIError writes e as the Responses API does: its status, and a
// JSON body {"error":{"message","type","param","code"}} (param and an
// empty code null), with e's Fields in the error object.
func writeOpenAIError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	obj := map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": nil}
	if e.Code != "" {
		obj["code"] = e.Code
	}
	for k, v := range e.Fields {
		obj[k] = v
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": obj})
}
