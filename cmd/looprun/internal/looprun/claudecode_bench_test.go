package looprun

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/fakemodel"
	"github.com/stretchr/testify/require"
)

// BenchmarkClaudeCodeIteration measures what looprun adds to an iteration
// of Claude Code: the same session (the model runs a failing test, then
// reports), run directly as a shell loop would and as looprun's
// iteration, in a git repository (looprun reads its changes before and
// after), with the real binary against the fake model. Claude Code's own
// time varies by tens of milliseconds from run to run, more than what
// looprun adds: the replay pair measures that alone, on the output a real
// session printed, replayed by cat. ns/op is one iteration;
// looprun's includes its start, spread over b.N iterations.
//
//	go test -run '^$' -bench ClaudeCodeIteration -benchtime 20x ./internal/looprun
func BenchmarkClaudeCodeIteration(b *testing.B) {
	session := func(b *testing.B) (*claudeProject, []string) {
		p := newClaudeProject(b, fakemodel.AfterToolResult(fakemodel.Bash("sh login_test.sh"), fakemodel.Say("The login test still fails.")),
			map[string]string{"login_test.sh": loginTest})
		return p, append([]string{p.env.Bin, "-p", "fix the tests"}, claudeFlags...)
	}
	loop := func(b *testing.B, p *claudeProject, argv []string) {
		p.env.Bin = argv[0]
		b.ResetTimer()
		out, code := p.looprun(b, []string{"-max-iterations", strconv.Itoa(b.N), "-no-progress", "-1", "-failures", "-1", "-same-errors", "-1"}, argv[1:]...)
		b.StopTimer()
		require.Equal(b, exitLimit, code, out)
	}
	// once runs argv in dir as a shell loop would, with an empty stdin
	// (as looprun gives it without a PROMPT.md), its output to out.
	once := func(dir string, argv []string, out io.Writer) error {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader("")
		cmd.Stdout, cmd.Stderr = out, io.Discard
		return cmd.Run()
	}
	direct := func(b *testing.B, dir string, argv []string) {
		b.ResetTimer()
		for range b.N {
			_ = once(dir, argv, io.Discard)
		}
	}
	b.Run("claude/direct", func(b *testing.B) {
		p, argv := session(b)
		direct(b, p.dir, argv)
	})
	b.Run("claude/looprun", func(b *testing.B) {
		p, argv := session(b)
		loop(b, p, argv)
	})
	// replay is a real session's output, and the command that prints it.
	replay := func(b *testing.B) (*claudeProject, []string) {
		p, argv := session(b)
		var out strings.Builder
		require.NoError(b, once(p.dir, argv, &out))
		path := filepath.Join(b.TempDir(), "session.jsonl")
		require.NoError(b, os.WriteFile(path, []byte(out.String()), 0o644))
		cat, err := exec.LookPath("cat")
		require.NoError(b, err)
		return p, []string{cat, path}
	}
	b.Run("replay/direct", func(b *testing.B) {
		p, argv := replay(b)
		direct(b, p.dir, argv)
	})
	b.Run("replay/looprun", func(b *testing.B) {
		p, argv := replay(b)
		loop(b, p, argv)
	})
	b.Run("replay/looprun-outside-git", func(b *testing.B) {
		p, argv := replay(b)
		require.NoError(b, os.RemoveAll(filepath.Join(p.dir, ".git")))
		loop(b, p, argv)
	})
}
