// Command looprun is the Ralph loop with a circuit breaker: it runs a
// command again and again, as `while :; do cat PROMPT.md | agent; done`
// does, shows what it does, and stops when the loop is stuck, spent or
// done.
//
//	go install github.com/loopbreaker/loopbreaker/cmd/looprun@latest
//	go install ./cmd/looprun                 # in a clone of the repository
//	looprun                                  # the built-in simulated agent
//	looprun -- claude -p                     # a real agent, PROMPT.md on stdin
//	looprun -check 'go test ./...' -commit -- ./agent.sh
//
// Each iteration asks the breaker (Check), runs the command with a timeout,
// and tells the breaker what happened (Record): the outcome (the exit
// status, a timeout, a death by signal, Claude Code's is_error, and the
// -check command run after a command that passed), the error found in the
// output (loopbreaker.ExtractError), the files the iteration changed in
// the git working tree, the status block the agent printed
// (ralph-claude-code's RALPH_STATUS: tasks completed, kind of work, done,
// its task and approach), the done marker, and the task list of -plan,
// whose first open item names the iteration's task. The breaker's state
// lives in .loopbreaker/ in the working directory, which looprun adds to
// .git/info/exclude; a loop stopped during a cooldown resumes it when
// started again, and -reset starts afresh.
//
// The command's output shows as it runs (-quiet hides it) and goes to the
// iteration's log; on a terminal a status line under it says which
// iteration runs, for how long, the circuit and the budget or spend.
// Before the first iteration looprun says what it watches and the
// thresholds in force; -h (on stdout) explains the table it prints, a
// line per iteration (with the tests, the progress score and the risk),
// and lists the exit codes; -version says the version of the module it
// was installed at (looprun v0.1.0). -json prints the result as JSON on stdout,
// and everything else on stderr. -commit commits the changes of each
// successful iteration.
//
// The test counts of -check's output (go test, pytest, jest, vitest,
// cargo test, and the plain "N passed, N failed" line), else the status
// block's TESTS_STATUS, feed the breaker's progress score and its
// tests-declining and errors-rising warnings. An error in the output of a
// run that exits 0 counts toward the same error when no -check decides.
// When the circuit opens, the pause shows what the loop was stuck on and
// what to try (superkit's recovery strategies), and the next iteration's
// agent is told the same, and the tasks a person skipped: in place of
// {looprun_notes} in the prompt file, and in the file LOOPRUN_NOTES names.
//
// # Watching a loop
//
// looprun keeps a journal of the loop, .loopbreaker/<loop>.journal.jsonl:
// each iteration, each change of the circuit, each limit and warning.
// `looprun report` draws it, with the state and the logs, as one HTML
// page that opens in a browser and fetches nothing (the timeline of the
// iterations and of the circuit, the errors by fingerprint, the spend
// against its caps, the provider limits waited, the tasks, what the loop
// was stuck on, each iteration's log; with -redis, the fleet's shared
// circuit). -serve ADDR serves that page live, each log, and /metrics in
// Prometheus' text format, on 127.0.0.1 unless ADDR names a host.
// -notify URL posts each event a person wants (circuit_opened, gave_up,
// circuit_closed, provider_limit, spend_warning, spend_cap,
// protected_files, session_ended, loop_ended) as JSON whose text field
// Slack-compatible webhooks show, and -on-event COMMAND runs a command
// with it on its stdin; a slow or dead receiver never holds the loop, and
// one that fails is said once. The hooks inside a session send the same.
//
// `looprun hook EVENT` answers one of Claude Code's or Codex's hook
// events, the breaker inside the agent's session per tool call, and
// `looprun hooks install` adds those hooks to the agent's settings; see
// docs/agent-hooks.md.
//
// # Settings
//
// A flag given on the command line wins; else the environment
// (LOOPRUN_<FLAG>, such as LOOPRUN_CALLS_PER_HOUR, and ralph-claude-code's
// CB_* names); else .looprunrc in -dir ("name = value" lines); else
// ralph-claude-code's .ralphrc in -dir, read and never run; else the
// preset. The flags users of ralph-claude-code and ralph-starter know are
// aliases: --calls and --rate-limit (-calls-per-hour),
// --circuit-breaker-failures (-failures), --circuit-breaker-errors
// (-same-errors), --validate (-check), --auto-reset-circuit (-auto-reset).
// The guide, docs/looprun.md, has the whole table.
//
// # Protected files
//
// The loop's plan, configuration and memory are not the agent's to delete
// (superkit's hard gate). After every iteration looprun checks the paths
// of -protect (by default .loopbreaker/, .ralphrc, IMPLEMENTATION_PLAN.md,
// AGENTS.md, specs/, .claude/, CLAUDE.md, memory/ and .looprunrc; given, the flags
// replace that list, and .loopbreaker/ stays): one deleted or emptied is
// restored, from the copy looprun keeps (in memory, and in
// .loopbreaker/protected/) or from git, and the loop stops with exit code
// 7, the summary listing what was restored. The circuit stays held open
// until a person resumes or skips at a terminal, or -reset. Editing a
// protected file is no loss: plans are meant to be updated. Before the
// first iteration, looprun also checks its own command line as a shell
// would read it (sh -c 'rm -rf specs; agent'), and refuses to start (exit
// 2) a command that would delete a protected path.
//
// When the circuit opens and a person is at the terminal, looprun shows
// why, the last iteration's error and the path of its log, and offers the
// choices of GSD's exit.sh pause menu: resume, skip, wait for the probe,
// or abort. Without a terminal it stops with exit code 3, unless -wait
// tells it to wait out cooldowns (until the breaker gives up, after
// -max-opens openings in a row) and the call budget, with a countdown on a terminal. Ctrl+C stops cleanly,
// saving the state.
//
// # Provider limits, spend and sessions
//
// An iteration that failed on a provider's usage limit ("You've hit your
// limit · resets 5pm (Europe/Vilnius)", an API's 429, Claude Code's
// rejected rate_limit_event: loopbreaker.ProviderLimitInText) counts as
// neither an iteration nor a failure. looprun shows when the limit lifts
// and, as ralph-claude-code does, at a terminal offers to wait (with a
// countdown) or to terminate, terminating when nobody answers within 30
// seconds; without a terminal it waits, up to -limit-wait (24h; 0 never
// waits). After the wait the same iteration runs again. A limit no
// waiting ends (no credit, a quota or billing cap) stops it with exit code
// 8, as does a limit it does not wait out.
//
// When the command prints Claude Code's JSON output (claude -p
// --output-format json or stream-json), looprun reads its result event as
// it streams: is_error is the iteration's outcome, total_cost_usd and
// usage are its spend, which -max-cost and -max-tokens cap over the loop's
// life (exit code 5 at the cap; on --resume total_cost_usd is the
// session's running total, and a run counts what it adds to it),
// permission_denials its permission denials, session_id its session, and
// the done marker counts in its result text, not in the session's tool
// results. The last iteration's session is
// offered to the next, in the environment variable LOOPRUN_SESSION_ID and
// in place of {session} in the command's arguments (claude -p --resume
// {session}: without a session, the flag and the placeholder are left
// out). A session expires 24 hours after it started, and is dropped when
// the circuit opens, on Ctrl+C and when the loop completes; the last 50
// are kept in .loopbreaker/<loop>.sessions.jsonl.
//
// When the command prints Codex's JSON events (codex exec --json), which
// exits 0 whatever its commands did, looprun reads the outcome from them:
// a failed turn, or a last command that failed, fails the iteration, with
// the command's error (or the turn's message) as its error. The turns'
// usage is the spend, priced at the list price of the model Codex runs
// (-m, --model, -c model=..., else config.toml's model), the thread is the
// session (codex exec resume {session}), and the status block and the done
// marker count in the agent's last message, not in a command's output.
// Without -check, looprun warns at start that Codex and Claude Code can
// exit 0 with the work failing.
//
// # Output and logs
//
// The command's output (stdout and stderr) is not kept in memory: looprun
// reads it as it comes and keeps what the breaker needs, in bounded memory
// whatever the command prints (a few MiB): its length, a hash of it
// (outside git, to tell whether it changed), whether the done marker is in
// it, and its last 1 MiB, in which loopbreaker.ExtractError finds the
// error of a failed iteration. The output goes to the iteration's log,
// .loopbreaker/logs/<loop>-<iteration>.log, the partial output of a
// timed-out or interrupted iteration too, and the output of -check after
// it. A log keeps the first 4 MiB of each output and its last 1 MiB, with
// a line between them saying how much was cut. After each iteration looprun deletes the loop's oldest logs
// beyond the newest 100, and beyond the newest that hold 64 MiB together.
//
// # A fleet on Redis
//
// With -redis, the loop asks a breaker that many runners share on Redis
// instead of one of its own:
//
//	looprun -redis redis://10.0.0.5:6379/0 -fleet agents -- claude -p
//	looprun -redis unix:///run/redis/redis.sock -fleet agents -name w2 -- ./agent.sh
//
// Every looprun (and every other worker, see package redisstore) started
// with the same -fleet on the same Redis shares one circuit: the failures
// and the same errors of the whole fleet count together, one provider
// limit makes every runner wait, the call budget and the spend caps are
// the fleet's, and a person's abort at one runner's prompt stops them all
// (resume or skip at any runner releases them). Each runner keeps its own
// progress, stagnation, task and completion signals, saved in its state
// file between runs: give runners that share a working directory each a
// -name. -reset starts afresh the runner's state and the fleet's breaker
// (its circuit and counts; the calls and the spend stay, as they were
// made), and fails, changing nothing, when Redis is out of reach; every
// runner sees it at its next check. -auto-reset is not applied on a
// fleet: it would release every runner. A runner that finds another's
// probe running stops (exit code 3), or with -wait waits for its outcome.
// The probe's lease lasts twice -timeout and a minute (10 minutes at
// least), so that a slow probe is not taken for a dead one.
//
// When Redis is out of reach, each runner warns once on stderr and goes on
// under its own breaker, as a runner without -redis would, and rejoins the
// fleet when Redis answers again; -fail-closed makes it stop instead (it
// waits, with -wait). The fleet's flags but -worker may be set in the
// environment (LOOPRUN_REDIS, which keeps a password off the command line,
// LOOPRUN_FLEET, ...) and in .looprunrc, as looprun's own; -fleet, -worker,
// -redis-timeout and -fail-closed without -redis are a usage error.
//
// # Stopping what the command started
//
// The command runs in a process group of its own. Ctrl+C is passed on to
// the group as SIGINT, so the agent can stop cleanly; a timeout kills the
// group with SIGKILL. Once the command has ended, however it ended,
// whatever is left of its group is killed with SIGKILL: a server or a
// watcher it started in the background does not outlive the iteration.
//
// On Linux (3.4 and later), looprun is also a child subreaper (prctl
// PR_SET_CHILD_SUBREAPER): a process the command started whose parent
// ends becomes looprun's child, even one that left the process group
// (setsid, a daemon's double fork). Once the command has ended, looprun
// kills every process that has become its child with SIGKILL, and reaps
// it, so nothing the command started outlives the iteration, and no
// zombie is left. Out of reach are only processes that are not
// descendants of the command: one that another program started on its
// behalf (a service manager, a daemon the command asked over a socket).
// On other Unix systems only the process group is killed, and a process
// that left it outlives the command; on Windows only the command itself
// is killed, on a timeout or Ctrl+C.
//
// Exit codes:
//
//	0   done: the agent completed the work (done signals, a finished plan,
//	    test-only iterations)
//	1   error: the command could not run, or the state could not be read
//	    or saved (a failed save wins over every other code)
//	2   usage: bad flags or settings, a -dir that is not a directory, or a
//	    command line that would delete a protected path (nothing is
//	    created)
//	3   tripped: the circuit is open and nobody was asked, or the breaker
//	    gave up after -max-opens openings in a row
//	4   aborted: a person chose abort; the circuit stays held open across
//	    runs until a person resumes or skips, or -reset
//	5   budget: the call budget is spent (without -wait), or the spend cap
//	    (-max-cost, -max-tokens), the burn rate (-max-cost-per-minute,
//	    without -wait), or the window share (-window-share-stop)
//	6   limit: -max-iterations ran out, and the last iteration neither
//	    completed the loop nor opened the circuit
//	7   protected: the last iteration lost protected files; what could be
//	    was restored, and the circuit is held open until a person resumes
//	    or skips (a run that starts held so, with nobody to ask, stops
//	    with 7 too)
//	8   provider: stopped at a provider limit: one no waiting ends, one
//	    that lifts later than -limit-wait allows, or a person chose
//	    terminate (or did not answer within 30 seconds)
//	130 interrupted: Ctrl+C or SIGTERM; the state is saved
package main

import (
	"os"
	"runtime/debug"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/hook"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/looprun"
)

func main() {
	if versionRequested(os.Args[1:]) {
		info, ok := debug.ReadBuildInfo()
		writeVersion(os.Stdout, info, ok)
		return
	}
	// looprun hook EVENT, looprun hooks install: the breaker inside the
	// agent's session (docs/agent-hooks.md).
	if code, ok := hook.Run(hook.OS(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	// looprun report: the page of a loop, to open in a browser.
	if len(os.Args) > 1 && os.Args[1] == "report" {
		os.Exit(looprun.Report(fleetOptions(), os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(looprun.Main(withVersionFlag(fleetOptions())))
}
