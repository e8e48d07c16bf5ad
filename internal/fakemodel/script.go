package fakemodel

import (
	"fmt"
	"net/http"
)

// Script answers the requests with replies, one each, in order. A request
// after the last is refused with a 400 invalid_request_error that says the
// script ran out (a status Claude Code does not retry), so that a test
// sees a conversation longer than it meant. Each Script keeps its own
// place: make a new one for each server.
func Script(replies ...Reply) Answerer {
	next := 0
	return func(*Request) Reply {
		if next >= len(replies) {
			next++
			return Error(http.StatusBadRequest, "invalid_request_error",
				fmt.Sprintf("fakemodel: the script has %d replies, and this is request %d", len(replies), next))
		}
		next++
		return replies[next-1]
	}
}

// Always answers every request with reply: a model stuck on one answer.
func Always(reply Reply) Answerer {
	return func(*Request) Reply { return reply }
}

// AfterToolResult answers a request whose last message carries a tool
// result with done, and any other with act: a model that takes one step
// (act, usually a tool use) per prompt and then reports (done). It is how
// one session of an agent's loop goes, again and again.
func AfterToolResult(act, done Reply) Answerer {
	return func(r *Request) Reply {
		for _, b := range r.Last().Content {
			if b.Type == "tool_result" {
				return done
			}
		}
		return act
	}
}
