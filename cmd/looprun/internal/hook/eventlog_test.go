package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hooks' log names the reason a session's run was ended: the last
// such line of that session counts, and no other line, nor another
// session's, nor one written before the run.
func TestHookLogTellsWhyTheHookEndedTheRun(t *testing.T) {
	const session = "01a218dd-62d8-7d72-aabc-84c89327f04e"
	// Lines as looprun hook writes them.
	tripped := "2026-11-26T17:19:07Z session " + session + " PostToolUse: tripped: Same action failed 3 times in a row (threshold: 3, error 5f0e11a2): Bash {\"command\":\"sh login_test.sh\"}\n"
	refused := "2026-11-26T17:19:08Z session " + session + " PreToolUse: refused Bash: Same action failed 3 times in a row (threshold: 3, error 5f0e11a2)\n"
	endedAfter := "2026-11-26T17:19:09Z session " + session + " PreToolUse: ended after 1 refused calls: Same action failed 3 times in a row (threshold: 3, error 5f0e11a2)\n"
	spend := "2026-11-26T17:19:10Z session " + session + " PreToolUse: ended: Spend cap reached: $1.35 over the loop's life (cap: $1.00)\n"
	other := "2026-11-26T17:19:11Z session 0199aaaa-0000-7000-8000-000000000000 PreToolUse: ended: Spend cap reached: $2.00 over the loop's life (cap: $2.00)\n"
	tests := []struct {
		name, log, want string
	}{
		{"after refused calls", tripped + refused + endedAfter, "looprun hook ended the run: Same action failed 3 times in a row (threshold: 3, error 5f0e11a2)"},
		{"at a spend cap", spend, "looprun hook ended the run: Spend cap reached: $1.35 over the loop's life (cap: $1.00)"},
		{"the last of two", endedAfter + spend, "looprun hook ended the run: Spend cap reached: $1.35 over the loop's life (cap: $1.00)"},
		{"a trip and a refusal end nothing", tripped + refused, ""},
		{"a refusal that quotes an end", "2026-11-26T17:19:08Z session " + session + " PreToolUse: refused Bash: the run ended: twice\n", ""},
		{"another session's end", other, ""},
		{"no log", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, endedInLog(tt.log, session))
		})
	}

	dir := t.TempDir()
	path := filepath.Join(dir, stateDirName, "hooks", eventLogName)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(spend), 0o644))
	mark := MarkLog(dir)
	assert.Empty(t, mark.EndedReason(session), "written before the run")
	appendTo(t, path, tripped+refused+endedAfter)
	assert.Equal(t, "looprun hook ended the run: Same action failed 3 times in a row (threshold: 3, error 5f0e11a2)", mark.EndedReason(session))
	assert.Empty(t, mark.EndedReason(""), "no session: no reason")

	// As the hook writes it.
	mark = MarkLog(dir)
	log := &eventLog{path: path, now: func() time.Time { return time.Date(2026, 11, 26, 17, 19, 12, 0, time.UTC) }}
	log.note(&Event{SessionID: session, Name: PreToolUse}, endedRefusedNote, 1, "Same action failed 3 times in a row")
	assert.Equal(t, "looprun hook ended the run: Same action failed 3 times in a row", mark.EndedReason(session))
	mark = MarkLog(dir)
	log.note(&Event{SessionID: session, Name: PostToolUse}, endedNote, "Spend cap reached: $1.35")
	assert.Equal(t, "looprun hook ended the run: Spend cap reached: $1.35", mark.EndedReason(session))

	// The log started anew during the run, as the hook keeps it to a
	// size: the new one is read whole.
	mark = MarkLog(dir)
	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, os.WriteFile(path, []byte(spend+spend+endedAfter), 0o644))
	assert.Equal(t, "looprun hook ended the run: Same action failed 3 times in a row (threshold: 3, error 5f0e11a2)", mark.EndedReason(session))
}

// Any log is read without a panic, and a reason found is never empty.
func FuzzEventLog(f *testing.F) {
	f.Add("2026-11-26T17:19:09Z session s1 PreToolUse: ended after 1 refused calls: Same action failed\n", "s1")
	f.Add("x session s1 PreToolUse: ended: \n session s1 : ended: y", "s1")
	f.Fuzz(func(t *testing.T, log, session string) {
		got := endedInLog(log, session)
		if got != "" && strings.TrimSpace(strings.TrimPrefix(got, "looprun hook ended the run: ")) == "" {
			t.Fatalf("an empty reason: %q", got)
		}
	})
}
