package cmdcheck

import (
	"fmt"
	"testing"
)

// benchChecker protects 100 paths: the default eight, a pattern, and 91
// files and directories spread over the project.
func benchChecker(b *testing.B) *Checker {
	paths := append([]string{project + "/docs/adr/*.md"}, defaultProtected...)
	for i := 0; len(paths) < 100; i++ {
		paths = append(paths, fmt.Sprintf("%s/pkg/module%02d/testdata/golden%02d.txt", project, i%10, i))
	}
	g, err := New(paths, Options{Env: map[string]string{"HOME": "/home/agent"}})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkCheck checks typical agent command lines against 100 protected
// paths.
func BenchmarkCheck(b *testing.B) {
	g := benchChecker(b)
	for _, bc := range []struct{ name, cmd string }{
		{"go-test", "go test ./... 2>&1 | tail -30"},
		{"commit", "git add -A && git commit -m 'Mark task 3 done in the plan'"},
		{"rm-build", "rm -rf node_modules dist && npm ci"},
		{"cd-rm-glob", "cd build && rm -rf *"},
		{"find-delete-refused", "find . -name '*.pyc' -delete"},
		{"heredoc-commit", "git commit -m \"$(cat <<'EOF'\nfeat: parser\n\nCo-Authored-By: agent\nEOF\n)\""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				g.Check(bc.cmd, project)
			}
		})
	}
}
