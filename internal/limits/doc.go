// Package limits recognises a provider's usage limit in what an AI agent,
// its command-line tool or its SDK reports, so that a loop can wait the
// limit out instead of counting it as a failure.
//
// FromText reads text: Claude Code's plain output and its stream-json
// lines, API error bodies, SDK error strings. FromHTTP reads an HTTP
// status, its headers and its body. FromError reads an error: a timeout is
// never a limit; an SDK error that exposes its HTTP status and response is
// read like a response; anything else by its text.
//
// Each returns a Limit of one of four kinds: None (no limit: an ordinary
// failure), Wait (a limit that lifts at Limit.Reset, or after a default
// wait when the text names no time), Stop (a limit no waiting ends: no
// credit, a quota or billing cap, usage disabled by an admin, a refusal
// under the provider's usage or content policy) and Loop (no limit, but the
// provider's word that the agent loops: it refused the agent's repeated,
// identical tool calls). A Wait that is a short rate or capacity throttle
// (an HTTP 429 or 529, a 502, 503 or 504 from the model's API, a
// per-minute rate limit, an overloaded server) rather than a usage window
// of hours is marked Limit.Throttle, so that a caller waits it out for
// minutes when no reset time is known.
//
// # What is recognised
//
// The messages of Claude Code, claude.ai, Codex, Gemini CLI, GitHub
// Copilot, Cursor and the OpenAI, Anthropic, Gemini, Azure OpenAI,
// Bedrock, Vertex and OpenRouter APIs, as the rules in rules.go list them,
// with the reset each names: a time of day, a weekday or a date in a named
// IANA zone or in the location of the now passed in ("resets 5pm
// (Europe/Vilnius)", "try again at Jul 5th, 2026 8:19 PM"), a duration
// ("try again in 3 hours 2 minutes", "Please retry after 60 seconds",
// "Your quota will reset after 8h44m7s", Gemini's retryDelay), a Unix time
// ("Claude AI usage limit reached|1766502000", Codex's resets_at).
// testdata/corpus.txt holds the texts from the field they were written
// against, and corpus_test.go scores them.
//
// A limit message counts where it leads its line: after decoration, a
// timestamp, a label that ends in a colon ("API Error:", "[DEBUG]
// Output:") or the opening quote of a JSON "message" field, so that prose
// that quotes one does not count. Generic signs (an HTTP 429, "rate limit
// exceeded", an error code such as rate_limit_error) are overruled by the
// words of a look-alike in the same message: a request too large for the
// model's context or its per-minute budget, a test's failure. A throttle
// whose quota is a day's is a usage window; one whose quota is zero
// ("limit: 0") is a stop.
//
// Where no rule's wording stands in a message, the plain words of a limit
// ("usage limit reached", "rate limited", "out of credits", "stuck in a
// loop") count as a last resort (genericRules): in an error that names a
// model, a provider or an agent, or, for the words little else prints,
// where they lead their line; never in a quote, in inline code or beside
// a look-alike's words.
//
// Rate-limit headers dumped into a text (an SDK's error object, a log, curl
// -v) are read as FromHTTP reads a response's: a window they show spent
// is a throttle until its reset. Only the model providers' header names
// count, not GitHub's X-RateLimit-Remaining.
//
// Not a limit: a timeout; a 500; a 502 or 503 that does not say it is the
// model's (a package registry's, the code under test's); the limits of
// GitHub, package registries, Docker Hub, a model hub's downloads and a
// usage poller's endpoint; Claude Code's warnings
// ("You've used 90% of your session limit · resets 5pm", "Approaching
// weekly limit"); a tool result in stream-json that quotes a limit
// message; prose and documentation that mention one.
//
// # When a text holds several
//
// A Stop outranks a Loop, and a Loop a Wait; of several Waits, the one with the latest reset
// decides, as waiting until then outlasts them all, one with a reset
// outranks one without, and of two without a reset a usage limit outranks
// a throttle. Only the last 16 signs in the window count.
// Host patterns run before all of this, and the first that matches
// decides.
//
// # Cost
//
// Recognition runs on every failed iteration, so it reads a text once,
// front to back (see scanner in scan.go), and allocates nothing for a text
// that holds no word a limit is made of, which is most text. The rules
// run only on the few regions that do.
//
// # Bounds
//
// FromText reads the last MaxScan (64 KiB) of its text, so a call costs
// the same on any input. A reset more than MaxAhead (35 days) away, or
// already past, is not believed: the limit is still recognised, without a
// Reset.
//
// # Time zones
//
// A reset that names no zone is read in the location of the now passed in,
// except Zhipu's and Z.ai's (code 1308), which are China's time.
//
// The package embeds the time zone database (a blank import of
// time/tzdata), so that "resets 5pm (Europe/Vilnius)" resolves on a
// machine without one, as in a scratch container. This adds about 450 KB
// to a binary that links the package.
package limits

import _ "time/tzdata" // reset times name IANA zones; resolve them without a system zone database
