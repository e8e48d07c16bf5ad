package looprun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// escapeScript is an agent script that, on its first run, starts a
// process in a session of its own (setsid), out of reach of its process
// group, writes that process's pid to $PIDFILE once it is there, and ends
// with end. On its second run it reports to $REPORT whether that process
// is still there, zombie or not, while looprun, which should have killed
// and reaped it, still runs.
func escapeScript(end string) string {
	return `if [ $n -eq 1 ]; then
	setsid sh -c 'echo $$ > "$PIDFILE.new"; mv "$PIDFILE.new" "$PIDFILE"; exec sleep 1000' &
	while [ ! -e "$PIDFILE" ]; do :; done
	` + end + `
fi
pid=$(cat "$PIDFILE")
if [ -e /proc/$pid ]; then echo "still there: $(cat /proc/$pid/stat)" > "$REPORT"; else echo gone > "$REPORT"; fi
`
}

// runEscape runs looprun for two iterations of escapeScript(end) with
// flags, and returns what the second iteration found, and the pid.
func runEscape(t *testing.T, end string, flags ...string) (report string, pid int) {
	t.Helper()
	tmp := t.TempDir()
	pidFile, reportFile := filepath.Join(tmp, "pid"), filepath.Join(tmp, "report")
	r := newRepo(t, escapeScript(end))
	cmd, out := r.startBin(t, []string{"PIDFILE=" + pidFile, "REPORT=" + reportFile},
		append([]string{"-interactive", "no", "-max-iterations", "2"}, flags...)...)
	code := exitCode(t, cmd)
	pid = grandchild(t, pidFile)
	require.Equal(t, exitLimit, code, out.String())
	data, err := os.ReadFile(reportFile)
	require.NoError(t, err, out.String())
	return strings.TrimSpace(string(data)), pid
}

// A process the command started in a session of its own (setsid) left the
// command's process group, but not looprun: once the command has exited,
// looprun kills it and reaps it, before the next iteration.
func TestProcessThatLeftTheGroupIsKilledWhenTheCommandExits(t *testing.T) {
	report, pid := runEscape(t, "exit 0")
	assert.Equal(t, "gone", report, "process %d", pid)
}

// The same when the command is killed at its timeout.
func TestProcessThatLeftTheGroupIsKilledAtTheTimeout(t *testing.T) {
	report, pid := runEscape(t, "wait", "-timeout", "1s")
	assert.Equal(t, "gone", report, "process %d", pid)
}

// The same when a person presses Ctrl+C: looprun ends the iteration and
// kills the process before it exits.
func TestProcessThatLeftTheGroupIsKilledOnInterrupt(t *testing.T) {
	started := fifo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := newRepo(t, `setsid sh -c 'echo $$ > "$PIDFILE.new"; mv "$PIDFILE.new" "$PIDFILE"; exec sleep 1000' &
while [ ! -e "$PIDFILE" ]; do :; done
echo started > "$FIFO"
wait
`)
	cmd, out := r.startBin(t, []string{"FIFO=" + started, "PIDFILE=" + pidFile}, "-interactive", "no")
	awaitStarted(t, started)
	pid := grandchild(t, pidFile)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	assert.Equal(t, exitInterrupted, exitCode(t, cmd), out.String())
	requireGone(t, pid)
}

// A process's parent is the fourth field of /proc/<pid>/stat, counted
// from the end of the command's name, which may hold anything.
func TestParentIsReadAfterTheCommandName(t *testing.T) {
	for _, comm := range []string{"sleep", "a b", "(x) ) S 99", ")", ""} {
		ppid, ok := parentFromStat([]byte(fmt.Sprintf("4242 (%s) S 17 4242 4242 0 -1", comm)))
		assert.True(t, ok, comm)
		assert.Equal(t, 17, ppid, comm)
	}
	for _, stat := range []string{"", "4242 sleep S 17", "4242 (sleep) S", "4242 (sleep) S x"} {
		_, ok := parentFromStat([]byte(stat))
		assert.False(t, ok, stat)
	}
}

func FuzzParentFromStat(f *testing.F) {
	f.Add("sleep", 17)
	f.Add("(x) ) S 99", 1)
	f.Fuzz(func(t *testing.T, comm string, ppid int) {
		if ppid < 0 {
			ppid = -ppid
		}
		if ppid < 0 { // the most negative int
			return
		}
		got, ok := parentFromStat([]byte(fmt.Sprintf("4242 (%s) S %d 4242 4242 0 -1", comm, ppid)))
		assert.True(t, ok)
		assert.Equal(t, ppid, got)
	})
}
