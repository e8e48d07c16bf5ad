package agent

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedModel answers from a script, one answer a turn, and keeps the
// results it is given. The stories in package agenttest run the agent
// through the real SDKs; this one is for what lies before them: flags,
// tools and the command's output.
type scriptedModel struct {
	answers []Answer
	results [][]Result
}

func (m *scriptedModel) Send(context.Context) (Answer, error) {
	a := m.answers[0]
	m.answers = m.answers[1:]
	return a, nil
}

func (m *scriptedModel) AddResults(results []Result) { m.results = append(m.results, results) }

// project is a directory with parse.go in it, beside a secret file.
func project(t *testing.T) string {
	parent := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(parent, "secret"), []byte("hunter2"), 0o644))
	dir := filepath.Join(parent, "project")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "parse.go"), []byte("package parse\n"), 0o644))
	return dir
}

// The command works in -dir with -model: the model lists the directory,
// calls a tool there is none of, and answers; the answer is printed.
func TestTheCommandPrintsTheAnswer(t *testing.T) {
	dir := project(t)
	model := &scriptedModel{answers: []Answer{
		{Calls: []Call{{ID: "1", Tool: "list_files", Args: `{}`}, {ID: "2", Tool: "delete_files", Args: `{}`}}},
		{Text: "One file: parse.go."},
	}}
	var connected string
	connect := func(_ *http.Client, name string, tools Tools, task string) Model {
		connected = name + ": " + task
		return model
	}
	var stdout, stderr bytes.Buffer
	code := run("agent", "default-model", connect, []string{"-dir", dir, "-model", "small", "What is here?"}, &stdout, &stderr)
	assert.Equal(t, 0, code, stderr.String())
	assert.Equal(t, "One file: parse.go.\n", stdout.String())
	assert.Equal(t, "small: What is here?", connected)
	require.Len(t, model.results, 1)
	require.Len(t, model.results[0], 2)
	listed, deleted := model.results[0][0], model.results[0][1]
	assert.Equal(t, Result{CallID: "1", Output: "parse.go"}, listed)
	assert.Equal(t, "2", deleted.CallID)
	assert.Equal(t, "error: no tool \"delete_files\"\n", deleted.Content(), "the model is told")
}

// Without exactly one task, or with a flag it does not know, the command
// says how it is used and exits 2; a dollar cap that is no number makes
// no breaker, and it exits 1.
func TestTheCommandsUsage(t *testing.T) {
	connect := func(*http.Client, string, Tools, string) Model {
		t.Fatal("no conversation starts")
		return nil
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2},
		{[]string{"one", "two"}, 2},
		{[]string{"-budget", "3", "task"}, 2},
		{[]string{"-max-cost", "NaN", "task"}, 1},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, tc.code, run("agent", "m", connect, tc.args, &stdout, &stderr), "%q", tc.args)
		assert.Empty(t, stdout.String())
		if tc.code == 2 {
			assert.Contains(t, stderr.String(), "usage: agent [-dir DIR] [-model MODEL] [-max-cost USD] TASK\n")
		} else {
			assert.Contains(t, stderr.String(), "agent: ")
		}
	}
}

// read_file reads the path the model gives inside the directory only,
// however the path starts.
func TestReadFileStaysInTheDirectory(t *testing.T) {
	read := OSTools(project(t))["read_file"]
	for _, path := range []string{"parse.go", "./parse.go", "/parse.go", "sub/../parse.go"} {
		got, err := read(`{"path": "` + path + `"}`)
		assert.NoError(t, err, path)
		assert.Equal(t, "package parse\n", got, path)
	}
	for _, path := range []string{"../secret", "/../secret", "../../secret"} {
		got, err := read(`{"path": "` + path + `"}`)
		assert.EqualError(t, err, "open secret: no such file or directory", path)
		assert.Empty(t, got, path)
	}
	_, err := read(`parse.go`)
	assert.ErrorContains(t, err, "arguments are not JSON")
}

// The model is offered the tools there are, in one order.
func TestOnlyTheToolsThereAreAreOffered(t *testing.T) {
	tools := OSTools(t.TempDir())
	delete(tools, "run_tests")
	tools["shell"] = func(string) (string, error) { return "", nil }
	var names []string
	for _, spec := range tools.Specs() {
		names = append(names, spec.Name)
	}
	assert.Equal(t, []string{"list_files", "read_file"}, names)
}
