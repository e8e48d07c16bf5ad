package agent

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strings"
)

// Tools are the agent's tools, by name: each takes the model's JSON
// arguments and returns its result, or an error that the model is shown
// with whatever result there is.
type Tools map[string]func(args string) (string, error)

// OSTools are list_files, read_file and run_tests on the directory dir.
// read_file takes {"path": "..."} and reads only inside dir: a leading
// "/", "./" or "../" of the path cannot leave it. run_tests runs
// `go test ./...` in dir.
func OSTools(dir string) Tools {
	files := os.DirFS(dir)
	return Tools{
		"list_files": func(string) (string, error) {
			entries, err := fs.ReadDir(files, ".")
			if err != nil {
				return "", err
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return strings.Join(names, "\n"), nil
		},
		"read_file": func(args string) (string, error) {
			var p struct{ Path string }
			if err := jsonArgs(args, &p); err != nil {
				return "", err
			}
			data, err := fs.ReadFile(files, strings.TrimPrefix(path.Clean("/"+p.Path), "/"))
			return string(data), err
		},
		"run_tests": func(string) (string, error) {
			cmd := exec.Command("go", "test", "./...")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			return string(out), err
		},
	}
}

// A ToolSpec describes a tool to the model: its name, what it does, and
// the JSON Schema properties of its arguments (an object's).
type ToolSpec struct {
	Name        string
	Description string
	Properties  map[string]any
}

// specs describe the tools OSTools has, in the order they are offered.
var specs = []ToolSpec{
	{Name: "list_files", Description: "List the files of the working directory.", Properties: map[string]any{}},
	{Name: "read_file", Description: "Read a file of the working directory.", Properties: map[string]any{"path": map[string]any{"type": "string"}}},
	{Name: "run_tests", Description: "Run the tests and return their output.", Properties: map[string]any{}},
}

// Specs describes to the model those of list_files, read_file and
// run_tests that t has, in that order; a tool of another name is not
// offered.
func (t Tools) Specs() []ToolSpec {
	var offered []ToolSpec
	for _, spec := range specs {
		if _, ok := t[spec.Name]; ok {
			offered = append(offered, spec)
		}
	}
	return offered
}

// call runs the tool of that name, or says there is none.
func (t Tools) call(name, args string) (string, error) {
	tool, ok := t[name]
	if !ok {
		return "", fmt.Errorf("no tool %q", name)
	}
	return tool(args)
}

// jsonArgs decodes a tool call's JSON arguments into v.
func jsonArgs(args string, v any) error {
	if err := json.Unmarshal([]byte(args), v); err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	return nil
}
