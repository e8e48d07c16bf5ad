package hook

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each file a Codex patch touches becomes the shell command that does the
// same to it, for the protected paths' check: a deletion rm, a move mv,
// an added file with no content a truncation, an edit an append.
func TestAPatchIsCheckedAsTheCommandsThatDoTheSame(t *testing.T) {
	tests := []struct {
		name, patch, want string
	}{
		{"a deletion", "*** Begin Patch\n*** Delete File: specs/login.md\n*** End Patch\n", "rm -- specs/login.md"},
		{"a move", "*** Begin Patch\n*** Update File: AGENTS.md\n*** Move to: old/AGENTS.md\n@@\n-a\n+b\n*** End Patch\n", "mv -- AGENTS.md old/AGENTS.md"},
		{"an edit", "*** Begin Patch\n*** Update File: fix_plan.md\n@@\n-- [ ] login\n+- [x] login\n*** End Patch\n", ": >> fix_plan.md"},
		{"a file added empty", "*** Begin Patch\n*** Add File: CLAUDE.md\n*** End Patch\n", ": > CLAUDE.md"},
		{"a file added with content", "*** Begin Patch\n*** Add File: notes.md\n+one line\n*** End Patch\n", ": >> notes.md"},
		{"a name with a space and a quote", "*** Begin Patch\n*** Delete File: it's mine.md\r\n*** End Patch\n", `rm -- 'it'\''s mine.md'`},
		{"a name with a semicolon", "*** Delete File: a; b\n", "rm -- 'a; b'"},
		{"several files", "*** Begin Patch\n*** Delete File: a.md\n*** Add File: b.md\n+x\n*** End Patch\n", "rm -- a.md; : >> b.md"},
		{"no file", "*** Begin Patch\n*** End Patch\n", ""},
		{"not a patch", "rm -rf specs", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := patchLine(tt.patch)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want != "", ok)
		})
	}
}

// Any text is read as a patch without a panic, and becomes only the
// commands a patch's files can: nothing else ever reaches the check.
func FuzzPatchLine(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.md\n*** Move to: b.md\n*** Delete File: c\n*** Add File: d\n+x\n*** End Patch\n")
	f.Add("*** Add File: \n*** Move to: x")
	f.Fuzz(func(t *testing.T, patch string) {
		line, ok := patchLine(patch)
		if ok != (line != "") {
			t.Fatalf("ok %v with %q", ok, line)
		}
		if !ok {
			return
		}
		for _, cmd := range splitCommands(line) {
			if !strings.HasPrefix(cmd, "rm -- ") && !strings.HasPrefix(cmd, "mv -- ") && !strings.HasPrefix(cmd, ": > ") && !strings.HasPrefix(cmd, ": >> ") {
				t.Fatalf("a command no patch makes: %q in %q", cmd, line)
			}
		}
	})
}

// splitCommands splits a line of commands joined by "; " where no single
// quote is open, as shellQuote quotes.
func splitCommands(line string) []string {
	var cmds []string
	quoted, start := false, 0
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\'':
			quoted = !quoted
		case !quoted && strings.HasPrefix(line[i:], "; "):
			cmds = append(cmds, line[start:i])
			start = i + 2
			i++
		}
	}
	return append(cmds, line[start:])
}
