package hook

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker"
	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/agent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines of Claude Code 2.1.328's transcript: a model's message, a tool
// call of the same message, and a tool's result (see package agent).
var realAssistantLine, realToolUseLine, realToolResultLine = claudeTranscriptLine(0), claudeTranscriptLine(1), claudeTranscriptLine(2)

// claudeTranscriptLine returns line i of agent's testdata/claude-transcript.jsonl.
func claudeTranscriptLine(i int) string {
	data, err := os.ReadFile(filepath.Join("..", "agent", "testdata", "claude-transcript.jsonl"))
	if err != nil {
		panic(err)
	}
	return strings.Split(string(data), "\n")[i]
}

// assistantLine is a line of Claude Code's transcript for one content
// block of a model's message.
func assistantLine(id string, in, out int, text string) string {
	return `{"type":"assistant","message":{"id":"` + id + `","model":"claude-sonnet-4-5","content":[{"type":"text","text":"` + text + `"}],` +
		`"usage":{"input_tokens":` + strconv.Itoa(in) + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + strconv.Itoa(out) + `}}}` + "\n"
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func tokens(us []loopbreaker.Usage) (in, out int) {
	for _, u := range us {
		in += u.InputTokens
		out += u.OutputTokens
	}
	return in, out
}

// Each hook reads only what the transcript gained since the last, each
// message once though Claude Code writes it a line per content block, and
// a line not yet whole waits for the next hook.
func TestTheTranscriptIsReadAsItGrowsEachMessageOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	var mark transcriptMark
	read := func() (int, int) {
		t.Helper()
		us, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
		require.NoError(t, err)
		return tokens(us)
	}

	in, out := read()
	assert.Zero(t, in+out, "no transcript yet")

	appendTo(t, path, `{"type":"user","message":{"role":"user","content":"go"}}`+"\n")
	appendTo(t, path, assistantLine("msg_1", 1000, 100, "a")+assistantLine("msg_1", 1000, 100, "b"))
	in, out = read()
	assert.Equal(t, [2]int{1000, 100}, [2]int{in, out})

	appendTo(t, path, assistantLine("msg_1", 1000, 100, "c")) // the same message's third block
	whole := assistantLine("msg_2", 2000, 200, "d")
	appendTo(t, path, whole[:40])
	in, out = read()
	assert.Zero(t, in+out, "a block of a message counted, and half a line")

	appendTo(t, path, whole[40:])
	in, out = read()
	assert.Equal(t, [2]int{2000, 200}, [2]int{in, out})
	in, out = read()
	assert.Zero(t, in+out, "nothing new")
}

// A message whose later line reports more output than its first adds
// the difference.
func TestAMessageThatGrowsAddsWhatItGrew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	appendTo(t, path, assistantLine("msg_1", 1000, 1, "a")+assistantLine("msg_1", 1000, 100, "b"))
	var mark transcriptMark
	us, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
	require.NoError(t, err)
	in, out := tokens(us)
	assert.Equal(t, [2]int{1000, 100}, [2]int{in, out})
}

// A line longer than the reader's buffer (a tool's long result, or a
// model's message whose call writes a file) is read whole.
func TestALongLineIsReadWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	big := strings.Repeat("x", 300<<10)
	appendTo(t, path, `{"type":"user","message":{"content":"`+big+`"}}`+"\n")
	appendTo(t, path, assistantLine("msg_1", 5000, 500, big))
	appendTo(t, path, assistantLine("msg_2", 1000, 100, "short"))
	var mark transcriptMark
	us, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
	require.NoError(t, err)
	in, out := tokens(us)
	assert.Equal(t, [2]int{6000, 600}, [2]int{in, out})
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, info.Size(), mark.Offset)
}

// A transcript that shrank was replaced: it is read from its end on, so
// that nothing is counted twice; another transcript starts afresh.
func TestAReplacedTranscriptIsNotCountedTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	appendTo(t, path, assistantLine("msg_1", 1000, 100, "a")+assistantLine("msg_2", 1000, 100, "b"))
	var mark transcriptMark
	_, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(path, []byte(assistantLine("msg_1", 1000, 100, "a")), 0o644))
	us, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
	require.NoError(t, err)
	assert.Empty(t, us)

	other := filepath.Join(dir, "u.jsonl")
	appendTo(t, other, assistantLine("msg_9", 7, 3, "z"))
	us, _, err = readSpend(other, &mark, agent.ClaudeCode.Hooks.Message)
	require.NoError(t, err)
	in, out := tokens(us)
	assert.Equal(t, [2]int{7, 3}, [2]int{in, out})
}

// The tool calls read are kept until their hooks come, each taking its
// own: a hook knows whether the answer that asked for its call is in.
func TestTheToolCallsReadAreTakenByTheirHooks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	appendTo(t, path, realAssistantLine+"\n"+realToolUseLine+"\n")
	var mark transcriptMark
	_, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
	require.NoError(t, err)
	assert.False(t, mark.took("toolu_fake000001_0"), "a call that is not in it")
	assert.True(t, mark.took("toolu_fake000001_1"))
	assert.False(t, mark.took("toolu_fake000001_1"), "taken once")
}

func FuzzReadSpend(f *testing.F) {
	f.Add([]byte(assistantLine("m", 1, 2, "x")+"not json\n"+assistantLine("m", 1, 3, "y")), int64(0))
	f.Add([]byte(realAssistantLine+"\n"+realToolResultLine+"\n"), int64(7))
	f.Fuzz(func(t *testing.T, data []byte, offset int64) {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		mark := transcriptMark{Path: path, Offset: max(offset, 0)}
		before := mark.Offset
		_, _, err := readSpend(path, &mark, agent.ClaudeCode.Hooks.Message)
		require.NoError(t, err)
		require.LessOrEqual(t, mark.Offset, max(int64(len(data)), before))
		if mark.Offset > before {
			require.Equal(t, byte('\n'), data[mark.Offset-1], "the mark stops after a whole line")
		}
	})
}
