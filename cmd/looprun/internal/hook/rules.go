package hook

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Codex's rules (Starlark files in rules/ beside its hooks) decide on a
// command by its first words: prefix_rule(pattern = [...]) matches a
// command whose words begin with the pattern's, an element that is a list
// matching any of its words, and decision "forbidden" refuses it with the
// justification, which the model reads. Codex applies them with no trust
// step, to each command of a shell line it can read as plain commands
// (bash -lc "a && b" too). They are a weaker net than the hook: a word
// more before the path (rm -rf -v specs), another spelling of the path
// (specs/login.md, ../p/specs), a redirection (> AGENTS.md), a command
// they do not list (find specs -delete, python -c ...) or a patch pass.

// rulesHeader opens the rules file looprun writes, and tells it from
// another's of the same name.
const rulesHeader = "# looprun's rules: written by `looprun hooks install -agent codex -rules`"

// codexRulesFile is the rules file beside the hooks file hooksPath.
func codexRulesFile(hooksPath string) string {
	return filepath.Join(filepath.Dir(hooksPath), "rules", "looprun.rules")
}

// Words of the destructive commands the rules forbid on a protected path,
// as they come before it. Each list is a pattern element: any one of its
// words.
var (
	rmFlags    = []string{"-f", "-r", "-R", "-rf", "-fr", "-Rf", "-fR", "-rF", "-d", "-v", "--force", "--recursive", "--dir", "--verbose"}
	shredFlags = []string{"-u", "-uz", "-zu", "-fu", "-uf", "-fuz", "-z", "-f", "--remove"}
	mvFlags    = []string{"-f", "-n", "-v", "-i", "--force", "--"}
	gitRmFlags = []string{"-r", "-f", "-rf", "-fr", "-q", "--force", "--"}
)

// prefixes are the commands the rules forbid on a protected path, each
// the words before the path (a []string element: any of those words).
var prefixes = [][]any{
	{"rm"}, {"rm", rmFlags}, {"rm", rmFlags, rmFlags}, {"rm", "--"}, {"rm", rmFlags, "--"}, {"rm", rmFlags, rmFlags, "--"},
	{"rmdir"}, {"unlink"},
	{"shred"}, {"shred", shredFlags},
	{"mv"}, {"mv", mvFlags},
	{"truncate", []string{"-s", "--size"}, "0"}, {"truncate", []string{"-s0", "--size=0"}},
	{"cp", "/dev/null"},
	{"git", "rm"}, {"git", "rm", gitRmFlags}, {"git", "rm", gitRmFlags, gitRmFlags},
}

// codexRules returns the rules file that forbids, for each of paths
// (relative to the project at root; root "" for rules of every project),
// the commands of prefixes followed by the path as a command line may
// spell it: p, ./p, p/, ./p/, and root/p; and how many paths it covers.
// A glob pattern cannot be spelled so: it is listed as not covered.
func codexRules(paths []string, root string) (string, int) {
	covered := 0
	var b strings.Builder
	b.WriteString(rulesHeader + `, rewritten at each such
# install and removed by looprun hooks uninstall -agent codex: keep rules of your own in another file.
#
# They forbid the usual commands that delete, empty or move a protected path: a
# weaker net than looprun's hook, which reads the whole command line and the
# patches, but one Codex applies with no trust step. A rule matches the first
# words of a command only: see docs/agent-hooks.md.
`)
	seen := map[string]bool{}
	for _, p := range paths {
		rel := path.Clean(filepath.ToSlash(p))
		if rel == "." || rel == "/" || seen[rel] {
			continue
		}
		seen[rel] = true
		if strings.ContainsAny(rel, "*?[") {
			fmt.Fprintf(&b, "\n# Not covered: %s, a pattern (a rule matches words).\n", p)
			continue
		}
		forms := []string{rel, "./" + rel, rel + "/", "./" + rel + "/"}
		if path.IsAbs(rel) {
			forms = []string{rel, rel + "/"}
		} else if root != "" {
			abs := path.Join(filepath.ToSlash(root), rel)
			forms = append(forms, abs, abs+"/")
		}
		covered++
		why := fmt.Sprintf("looprun: %s is a protected path: the project's plan, configuration and memory are not yours to delete, empty or move. Leave it as it is and do your work around it.", rel)
		fmt.Fprintf(&b, "\n# %s\n", rel)
		for _, prefix := range prefixes {
			fmt.Fprintf(&b, "prefix_rule(pattern = %s, decision = \"forbidden\", justification = %s)\n",
				starlarkList(append(append([]any{}, prefix...), forms)), strconv.Quote(why))
		}
	}
	return b.String(), covered
}

// starlarkList writes a pattern: words, and lists of words.
func starlarkList(elems []any) string {
	parts := make([]string, len(elems))
	for i, e := range elems {
		switch e := e.(type) {
		case string:
			parts[i] = strconv.Quote(e)
		case []string:
			words := make([]any, len(e))
			for j, w := range e {
				words[j] = w
			}
			parts[i] = starlarkList(words)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// writeCodexRules writes the rules of set's protected and read-only paths
// to file, for the project at dir (user: for every project, with no
// absolute spelling), and says what it changed ("" for nothing).
func writeCodexRules(file string, set *settings, dir string, user bool) (string, error) {
	root := ""
	if !user {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		root = abs
	}
	text, covered := codexRules(append(append([]string{}, set.protect...), set.readOnly...), root)
	data := []byte(text)
	old, err := os.ReadFile(file)
	switch {
	case err == nil && bytes.Equal(old, data):
		return "", nil
	case err == nil && !bytes.HasPrefix(old, []byte(rulesHeader)):
		return "", errors.New("not looprun's rules file: left as it is")
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := replaceFile(file, data, 0o644, true); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote rules that forbid rm, mv, truncate, ... of %d protected paths", covered), nil
}

// removeCodexRules removes looprun's rules file, and says so ("" when
// there was none).
func removeCodexRules(file string) (string, error) {
	old, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case !bytes.HasPrefix(old, []byte(rulesHeader)):
		return "", errors.New("not looprun's rules file: left as it is")
	}
	if err := os.Remove(file); err != nil {
		return "", err
	}
	return "removed looprun's rules", nil
}
