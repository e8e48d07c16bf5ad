package cmdcheck

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSegmentsOverlapWhenSomeNameMatchesBoth(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"specs", "specs", true},
		{"specs", "spec", false},
		{"spec*", "specs", true},
		{"*.md", "AGENTS.md", true},
		{"*.md", "specs", false},
		{"*", ".claude", true}, // dotglob may be on: * is taken to match dot files
		{"?", "ab", false},
		{"??", "ab", true},
		{"[!.]*", ".claude", false},
		{"[a-c]*", "CLAUDE.md", false},
		{"[A-C]*", "CLAUDE.md", true},
		{"[[:upper:]]*", "CLAUDE.md", true},
		{`\*`, "*", true},
		{`\*`, "x", false},
		{"*.md", "*.txt", false},
		{"*.md", "AGENTS*", true},
		{"a*b*c", "*x*", true},
		{"[ab]x", "[bc]*", true},
		{"[ab]x", "[cd]*", false},
		{"[!a]", "[a]", false},
		{"[^a]", "[!b]", true},
		{"*", "*", true},
		{"x[", "x[", true}, // an unclosed bracket is literal
	}
	for _, tt := range tests {
		a, b := compileSegment(tt.a), compileSegment(tt.b)
		assert.Equal(t, tt.want, a.overlaps(&b), "%s ~ %s", tt.a, tt.b)
		assert.Equal(t, tt.want, b.overlaps(&a), "%s ~ %s", tt.b, tt.a)
	}
}

// Against literal names, a pattern matches as path.Match does.
func TestSegmentsMatchLiteralNamesLikePathMatch(t *testing.T) {
	patterns := []string{"*", "*.md", "a?c", "[a-c]x", "[^a]*", "*a*b", `x\*`, "[]a]", "[a-]"}
	names := []string{"abc", "a.md", "bx", "ax", "xa", "aab", "x*", "]", "-", "", "AGENTS.md"}
	for _, p := range patterns {
		for _, n := range names {
			want, err := path.Match(p, n)
			if err != nil {
				continue
			}
			seg, name := compileSegment(p), compileSegment(escapeGlob(n))
			assert.Equal(t, want, seg.overlaps(&name), "%s ~ %s", p, n)
		}
	}
}

func TestOverlapOfVeryLongPatternsIsAssumed(t *testing.T) {
	long, other := compileSegment(strings.Repeat("a?", 300)), compileSegment(strings.Repeat("?b", 300))
	assert.True(t, long.overlaps(&other))
}

func TestSplitPathCleansDotsAndKeepsPatterns(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/repo/./specs/", "/repo/specs"},
		{"/repo/build/../specs", "/repo/specs"},
		{"/repo/..", "/"},
		{"/..", "/"},
		{"/repo/spec*/*.md", "/repo/spec*/*.md"},
		{`/repo/\*`, "/repo/*"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, display(splitPath(tt.in, false)), tt.in)
	}
	assert.Equal(t, "/repo/agents.md", display(splitPath("/Repo/AGENTS.md", true)))
	assert.True(t, isPatternPath(splitPath("/repo/*.md", false)))
	assert.False(t, isPatternPath(splitPath(`/repo/\*.md`, false)))
}
