package hook

import "strings"

// patchLine returns the shell line that does to the files what a Codex
// apply_patch patch would, for protect's command check, and whether the
// patch names any file. A patch is
//
//	*** Begin Patch
//	*** Add File: PATH        (+ lines: the new file's content)
//	*** Delete File: PATH
//	*** Update File: PATH     (@@ hunks; *** Move to: NEW renames it)
//	*** End Patch
//
// and each file becomes: a deletion, rm; a move, mv; an update, an append
// (an edit, which only a read-only file refuses); an added file, an
// append, or a truncation when it has no content (which empties a file
// that was there).
func patchLine(patch string) (string, bool) {
	var cmds []string
	kind, file := "", ""
	lines := 0 // of the added file's content
	flush := func() {
		switch kind {
		case "add":
			if lines == 0 {
				cmds = append(cmds, ": > "+shellQuote(file))
			} else {
				cmds = append(cmds, ": >> "+shellQuote(file))
			}
		case "update":
			cmds = append(cmds, ": >> "+shellQuote(file))
		}
		kind, file, lines = "", "", 0
	}
	for _, l := range strings.Split(patch, "\n") {
		l = strings.TrimSuffix(l, "\r")
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			flush()
			kind, file = "add", strings.TrimSpace(strings.TrimPrefix(l, "*** Add File: "))
		case strings.HasPrefix(l, "*** Update File: "):
			flush()
			kind, file = "update", strings.TrimSpace(strings.TrimPrefix(l, "*** Update File: "))
		case strings.HasPrefix(l, "*** Delete File: "):
			flush()
			cmds = append(cmds, "rm -- "+shellQuote(strings.TrimSpace(strings.TrimPrefix(l, "*** Delete File: "))))
		case strings.HasPrefix(l, "*** Move to: ") && kind == "update":
			cmds = append(cmds, "mv -- "+shellQuote(file)+" "+shellQuote(strings.TrimSpace(strings.TrimPrefix(l, "*** Move to: "))))
			kind = "" // moved: the move is what the check looks at
		case strings.HasPrefix(l, "+") && kind == "add":
			lines++
		case strings.HasPrefix(l, "*** "):
			flush()
		}
	}
	flush()
	return strings.Join(cmds, "; "), len(cmds) > 0
}
