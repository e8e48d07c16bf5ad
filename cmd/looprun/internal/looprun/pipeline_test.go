package looprun

import (
	"errors"
	"testing"
	"time"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What judge makes of what an iteration observed: the breaker's
// Iteration, where its error came from, and whether it was a provider's
// limit. Each case is one iteration.
func TestJudgeBuildsTheIterationOfWhatWasObserved(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	limit := "You've hit your limit · resets 5pm (Europe/Vilnius)"
	done := statusBlock{status: "COMPLETE", exitSignal: true, hasExitSignal: true, tasksCompleted: 2, hasTasks: true, task: "logout", approach: "rewrite"}
	notDone := statusBlock{exitSignal: false, hasExitSignal: true, filesModified: 4, hasFiles: true}
	codex := agent.Run{Seen: true, Told: true, Failed: true, Err: "--- FAIL: TestLogin", LimitText: ""}
	for _, tc := range []struct {
		name  string
		o     observed
		check func(t *testing.T, v verdict)
	}{
		{"a clean run in git", observed{command: true, inGit: true, filesChanged: 3}, func(t *testing.T, v verdict) {
			assert.NoError(t, v.it.Err)
			assert.Equal(t, 3, v.it.Progress.FilesChanged)
			assert.Equal(t, "command", v.from)
		}},
		{"a failing check", observed{command: true, checked: true, checkErr: errors.New("--- FAIL: TestLogout")}, func(t *testing.T, v verdict) {
			assert.EqualError(t, v.it.Err, "--- FAIL: TestLogout")
			assert.Equal(t, "check", v.from)
		}},
		{"an error in the output of a run that passed, no check", observed{command: true, out: outputSeen{outputErr: "Error: boom"}}, func(t *testing.T, v verdict) {
			assert.NoError(t, v.it.Err)
			assert.EqualError(t, v.it.Noticed, "Error: boom", "it counts toward the same error")
		}},
		{"an error in the output, and a check that passed", observed{command: true, checked: true, out: outputSeen{outputErr: "Error: boom"}}, func(t *testing.T, v verdict) {
			assert.NoError(t, v.it.Err)
			assert.Nil(t, v.it.Noticed, "the check decides")
		}},
		{"a failed run at a provider limit", observed{command: true, now: now, res: result{exitCode: 1}, out: outputSeen{sample: limit, limitText: limit}}, func(t *testing.T, v verdict) {
			assert.True(t, v.limited)
			var le *loopbreaker.LimitError
			require.ErrorAs(t, v.it.Err, &le)
			assert.Equal(t, 17, le.Limit.Reset.In(time.FixedZone("EET", 2*3600)).Hour())
		}},
		{"an API error the agent names a stop, whatever its text", observed{command: true, now: now, res: result{exitCode: 1},
			out: outputSeen{run: agent.Run{Seen: true, Failed: true, APIError: "authentication_failed", Words: "Invalid API key · Fix external API key"},
				sample: "Invalid API key · Fix external API key"}}, func(t *testing.T, v verdict) {
			assert.True(t, v.limited)
			var le *loopbreaker.LimitError
			require.ErrorAs(t, v.it.Err, &le)
			assert.Equal(t, loopbreaker.LimitStop, le.Limit.Kind)
			assert.Equal(t, "Invalid API key · Fix external API key (authentication_failed)", le.Limit.Why)
		}},
		{"a rate limit the agent names, whose text tells its reset", observed{command: true, now: now, res: result{exitCode: 1},
			out: outputSeen{run: agent.Run{Seen: true, Failed: true, APIError: "rate_limit"}, sample: limit, limitText: limit}}, func(t *testing.T, v verdict) {
			var le *loopbreaker.LimitError
			require.ErrorAs(t, v.it.Err, &le)
			assert.Equal(t, loopbreaker.LimitWait, le.Limit.Kind)
			assert.Equal(t, 17, le.Limit.Reset.In(time.FixedZone("EET", 2*3600)).Hour(), "the text's reset is kept")
		}},
		{"a rate limit the agent names, and no text of it", observed{command: true, now: now, res: result{exitCode: 1},
			out: outputSeen{run: agent.Run{Seen: true, Failed: true, APIError: "rate_limit", Words: "API Error: something"}, sample: "API Error: something"}}, func(t *testing.T, v verdict) {
			var le *loopbreaker.LimitError
			require.ErrorAs(t, v.it.Err, &le)
			assert.Equal(t, loopbreaker.LimitThrottle, le.Limit.Kind)
		}},
		{"an API error that is no limit is a failure", observed{command: true, now: now, res: result{exitCode: 1},
			out: outputSeen{run: agent.Run{Seen: true, Failed: true, APIError: "invalid_request", Err: "API Error: 400 bad request"}, sample: "API Error: 400 bad request"}}, func(t *testing.T, v verdict) {
			assert.False(t, v.limited)
			assert.EqualError(t, v.it.Err, "API Error: 400 bad request")
		}},
		{"a limit quoted by a session a hook ended", observed{command: true, now: now,
			out: outputSeen{run: agent.Run{Seen: true, Failed: true, HookEnded: true, Err: "looprun ended the run"}, limitText: limit}}, func(t *testing.T, v verdict) {
			assert.False(t, v.limited)
			assert.EqualError(t, v.it.Err, "looprun ended the run")
		}},
		{"an agent whose events tell: a command's failure is no limit", observed{command: true, now: now, res: result{exitCode: 0},
			out: outputSeen{run: codex, sample: limit}}, func(t *testing.T, v verdict) {
			assert.False(t, v.limited)
			assert.EqualError(t, v.it.Err, "--- FAIL: TestLogin")
		}},
		{"outside git, the block's count", observed{command: true, out: outputSeen{block: notDone, hasBlock: true, changed: true}}, func(t *testing.T, v verdict) {
			assert.Equal(t, 4, v.it.Progress.FilesChanged)
			assert.False(t, v.outputCounted)
		}},
		{"outside git, new output is a change", observed{command: true, out: outputSeen{changed: true}}, func(t *testing.T, v verdict) {
			assert.Equal(t, 1, v.it.Progress.FilesChanged)
			assert.True(t, v.outputCounted)
		}},
		{"outside git, the same output is none", observed{command: true}, func(t *testing.T, v verdict) {
			assert.Equal(t, 0, v.it.Progress.FilesChanged)
		}},
		{"the simulated agent counts its own", observed{res: result{files: 2}}, func(t *testing.T, v verdict) {
			assert.Equal(t, 2, v.it.Progress.FilesChanged)
		}},
		{"the plan: done items are tasks completed", observed{command: true, hasPlan: true, hadPlan: true, doneBefore: 1, plan: plan{done: 3, remaining: 2}, next: "login"}, func(t *testing.T, v verdict) {
			assert.Equal(t, &loopbreaker.Plan{Done: 3, Remaining: 2}, v.it.Plan)
			assert.Equal(t, 2, v.it.Progress.TasksCompleted)
			assert.Equal(t, "login", v.it.Task, "the plan's first open item")
		}},
		{"the status block says done, its task and approach", observed{command: true, out: outputSeen{block: done, hasBlock: true}, next: "login"}, func(t *testing.T, v verdict) {
			assert.True(t, v.it.Done)
			assert.Equal(t, 2, v.it.Progress.TasksCompleted)
			assert.Equal(t, "logout", v.it.Task)
			assert.Equal(t, "rewrite", v.it.Approach)
			assert.Empty(t, v.tests.last.from, "no tests told")
		}},
		{"EXIT_SIGNAL: false wins over the default marker", observed{command: true, out: outputSeen{block: notDone, hasBlock: true, done: true}}, func(t *testing.T, v verdict) {
			assert.False(t, v.it.Done)
		}},
		{"a marker the person chose still counts", observed{command: true, markerGiven: true, out: outputSeen{block: notDone, hasBlock: true, done: true}}, func(t *testing.T, v verdict) {
			assert.True(t, v.it.Done)
		}},
		{"the default marker in a quoted example", observed{command: true, out: outputSeen{done: true, example: true}}, func(t *testing.T, v verdict) {
			assert.False(t, v.it.Done)
		}},
		{"a claim of done without the signal", observed{command: true, out: outputSeen{claimText: "All tasks complete."}}, func(t *testing.T, v verdict) {
			assert.True(t, v.it.Claimed)
		}},
		{"a claim with the signal is no false claim", observed{command: true, out: outputSeen{claimText: "All tasks complete.", done: true}}, func(t *testing.T, v verdict) {
			assert.True(t, v.it.Done)
			assert.False(t, v.it.Claimed)
		}},
		{"an agent's denials and usage", observed{command: true, usage: loopbreaker.Usage{InputTokens: 10, CostUSD: 0.5},
			out: outputSeen{run: agent.Run{Seen: true, Denials: 2}}}, func(t *testing.T, v verdict) {
			assert.Equal(t, 2, v.it.Progress.PermissionDenials)
			assert.Equal(t, loopbreaker.Usage{InputTokens: 10, CostUSD: 0.5}, v.it.Usage)
		}},
		{"a revert in git", observed{command: true, inGit: true, reverted: true}, func(t *testing.T, v verdict) {
			assert.True(t, v.it.Progress.Reverted)
		}},
		{"the block's tests", observed{command: true, out: outputSeen{block: statusBlock{testsStatus: "FAILING (40 passed, 2 failed)"}, hasBlock: true}}, func(t *testing.T, v verdict) {
			assert.Equal(t, 40, v.it.Progress.TestsPassing)
			assert.Equal(t, 2, v.it.Progress.Errors)
			assert.Equal(t, "status block", v.tests.last.from)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.timeout = time.Minute
			tc.check(t, judge(&o))
		})
	}
}
