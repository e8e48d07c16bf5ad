package cmdcheck

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// expandString expands the single word in s and renders the fields as
// patterns; unknown fields show as <why>.
func expandString(t *testing.T, s string, st *state) []string {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(": "+s), "")
	require.NoError(t, err)
	call := f.Stmts[0].Cmd.(*syntax.CallExpr)
	require.Len(t, call.Args, 2, s)
	c := &checker{src: ": " + s}
	var out []string
	for _, f := range c.expand(call.Args[1], st) {
		if p, ok := f.pattern(); ok {
			out = append(out, p)
		} else {
			out = append(out, "<"+f.unknown()+">")
		}
	}
	return out
}

func TestExpandDoesBracesTildeVariablesAndSplitting(t *testing.T) {
	st := &state{vars: (&vars{}).
		with("HOME", textField("/home/agent")).
		with("TWO", textField(" a  b ")).
		with("ONE", textField("a b")).
		with("GLOB", textField("*.md")).
		with("EMPTY", textField(""))}
	tests := []struct {
		in   string
		want []string
	}{
		{"{build,dist}", []string{"build", "dist"}},
		{"src/{a,b{1,2}}.go", []string{"src/a.go", "src/b1.go", "src/b2.go"}},
		{"x{1..3}", []string{"x1", "x2", "x3"}},
		{"{01..03}", []string{"01", "02", "03"}},
		{"{c..a}", []string{"c", "b", "a"}},
		{"{1..9..4}", []string{"1", "5", "9"}},
		{"'{a,b}'", []string{"{a,b}"}},
		{"{}", []string{"{}"}},
		{"{a}", []string{"{a}"}},
		{"~/x", []string{"/home/agent/x"}},
		{"~bob/x", []string{"<what ~bob stands for>"}},
		{"$TWO", []string{"a", "b"}},
		{`"$TWO"`, []string{` a  b `}},
		{"x$TWO", []string{"x", "a", "b"}}, // the leading blank separates
		{"x$ONE", []string{"xa", "b"}},
		{"$GLOB", []string{"*.md"}},
		{`"$GLOB"`, []string{`\*.md`}},
		{"$EMPTY", nil},
		{`"$EMPTY"`, []string{""}},
		{"$NOPE/x", []string{"<what $NOPE holds>"}},
		{"'*'.md", []string{`\*.md`}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, expandString(t, tt.in, st), tt.in)
	}
}

func TestBraceExpansionIsBounded(t *testing.T) {
	got := expandString(t, strings.Repeat("{a,b}", 12), &state{})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "too many words")
	got = expandString(t, "{1..100000}", &state{})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "too many words")
}
