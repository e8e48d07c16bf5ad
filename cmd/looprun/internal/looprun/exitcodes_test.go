package looprun

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exit codes are told in one table: the guide's table and the
// command's package comment say each code's name and meaning as it says
// them, and -json names each code by its name.
func TestTheExitCodesAreToldAsTheTableSaysThem(t *testing.T) {
	want := map[int]string{}
	for _, e := range exitCodes {
		want[e.code] = e.name + ": " + e.meaning
		assert.Equal(t, e.name, exitNames[e.code])
	}

	guide, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "looprun.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(guide), "\n## Exit codes\n")
	require.True(t, ok, "docs/looprun.md has its Exit codes section")
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`)
	inGuide := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		code, _ := strconv.Atoi(m[1])
		inGuide[code] = m[2]
	}
	assert.Equal(t, want, inGuide, "docs/looprun.md's table")

	main, err := os.ReadFile(filepath.Join("..", "..", "main.go"))
	require.NoError(t, err)
	_, list, ok := strings.Cut(string(main), "// Exit codes:\n//\n")
	require.True(t, ok, "cmd/looprun/main.go's comment lists the exit codes")
	list, _, _ = strings.Cut(list, "\npackage main")
	entry := regexp.MustCompile(`^//\t(\d+)\s+(.*)$`)
	inComment := map[int]string{}
	code := -1
	for _, line := range strings.Split(list, "\n") {
		if m := entry.FindStringSubmatch(line); m != nil {
			code, _ = strconv.Atoi(m[1])
			inComment[code] = m[2]
		} else if more := strings.TrimSpace(strings.TrimPrefix(line, "//")); code >= 0 && more != "" {
			inComment[code] += " " + more
		}
	}
	for c, text := range want {
		want[c] = strings.ReplaceAll(text, "`", "") // the comment quotes no code
	}
	assert.Equal(t, want, inComment, "cmd/looprun/main.go's package comment")
}
