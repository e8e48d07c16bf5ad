package cmdcheck

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzCheck feeds Check any bytes: it must not panic, must give the same
// answer twice, must explain every refusal, and must refuse a line that
// starts by removing a protected directory whatever follows.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"rm -rf node_modules dist && npm ci",
		"git clean -fdx",
		"git checkout -- .",
		"find . -name '*.pyc' -delete",
		"find / \\( -path ./.claude -o -name '*.md' \\) -prune -o -type f,d -mindepth 2 -iname 'x*' -exec rm -rf {} + , -print | xargs -0 rm",
		"sudo rm -rf /tmp/build",
		"ls | xargs rm",
		"cat > CLAUDE.md <<EOF\n# Notes\nEOF",
		`echo "" > IMPLEMENTATION_PLAN.md`,
		"mv AGENTS.md AGENTS.md.bak",
		"git stash -u",
		"git reset --hard HEAD~1",
		"rm -r specs/old",
		"cd build; rm -rf *",
		"set -e; cd build && rm -rf {a,b{1..3}}",
		"for f in *.md; do rm \"$f\"; done",
		"f() { rm -rf \"$1\"; }; f specs",
		"bash -c 'eval \"rm -rf $(pwd)/specs\"'",
		"case $x in a|b) rm a;; (*) ls;; esac",
		"if [[ $a > b ]]; then (( i++ )); elif true; then :; else false; fi",
		"find . -name '*.tmp' -exec sh -c 'rm \"$1\"' _ {} \\;",
		"git commit -m \"$(cat <<'EOF'\nfix (really)\nEOF\n)\"",
		"echo $'a\\tb' ${x:-$(rm y)} `ls` <(cat) ~bob",
		"arr=(a b); echo !(keep).md",
		"sed -i -e '/^#/!{s/a/b/w out;d}' -e '$q' -n IMPLEMENTATION_PLAN.md",
		`sed -i '\,x,I,+3d;y/abc/xyz/;a\
text' CLAUDE.md`,
		"rename 's/md/bak/' *.md",
		"printf 'rm -rf %s\\n' specs | bash -s",
		"echo -e 'ls\\nrm x' | cat | sh",
		"echo 'unterminated",
		"\x00\xff\xfe rm -rf \xc3\x28",
	} {
		f.Add(s)
	}
	g, err := New(defaultProtected, Options{
		ReadOnly: []string{project + "/AGENTS.md"},
		Env:      map[string]string{"HOME": "/home/agent"},
		Stat:     fakeStat([]string{"specs", "docs"}, []string{"AGENTS.md", "CLAUDE.md"}),
		Git:      gitStates(map[string]GitState{".loopbreaker": Ignored, "IMPLEMENTATION_PLAN.md": Tracked | Modified}),
		Files:    projectFiles,
	})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, cmdline string) {
		r := g.Check(cmdline, project)
		require.Equal(t, r, g.Check(cmdline, project), "the same line, another answer")
		if r != nil {
			require.NotEmpty(t, r.Why)
			if r.Path != "" {
				require.True(t, slices.ContainsFunc(g.paths, func(p protPath) bool { return p.path == r.Path }), "refused for %q, which is not protected", r.Path)
			}
		}
		require.NotNil(t, g.Check("rm -rf specs\n"+cmdline, project), "a removed protected directory went unnoticed")
	})
}
