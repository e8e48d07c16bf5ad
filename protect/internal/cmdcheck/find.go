package cmdcheck

import "strings"

// find deletes what it finds with -delete and runs commands on it with
// -exec. Its tests (-name, -type, -path, ...) are not read: whatever it
// could find under its starting points counts.
func (inv *invocation) find() {
	roots, expr := findParts(inv.args)
	for i := 0; i < len(expr); i++ {
		t, ok := expr[i].text()
		if !ok {
			continue
		}
		switch t {
		case "-delete":
			inv.label = "find -delete"
			for _, r := range roots {
				if inv.affect(action{verb: verbRemove, deep: true}, inv.found(r)) {
					return
				}
			}
			inv.label = ""
		case "-exec", "-execdir", "-ok", "-okdir":
			end := i + 1
			for ; end < len(expr); end++ {
				e, ok := expr[end].text()
				if ok && (e == ";" || e == "+" && end > i+1) {
					break
				}
			}
			cmd := expr[i+1 : min(end, len(expr))]
			i = end
			if len(cmd) == 0 {
				continue
			}
			for _, r := range roots {
				f := inv.found(r)
				args := make([]field, len(cmd))
				for k, a := range cmd {
					args[k] = a
					if s, ok := a.text(); ok && strings.Contains(s, "{}") {
						args[k] = f
					}
				}
				sub := inv.child()
				sub.stdin = nil
				if t == "-execdir" || t == "-okdir" {
					sub.dir, sub.dirWhy = "", "the directory of each path find finds"
				}
				sub.run(args)
				if inv.c.refusal != nil {
					return
				}
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(expr) && inv.affect(action{verb: verbTruncate, overwrite: true}, expr[i+1]) {
				return
			}
			i++
		}
	}
}

// findParts splits find's arguments into its starting points (default .)
// and its expression.
func findParts(args []field) (roots, expr []field) {
	i := 0
	for i < len(args) {
		t, ok := args[i].text()
		if !ok {
			break
		}
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") {
			i++
			continue
		}
		if t == "-D" {
			i += 2
			continue
		}
		break
	}
	for ; i < len(args); i++ {
		t, ok := args[i].text()
		if ok && (len(t) > 1 && t[0] == '-' || t == "(" || t == "!" || t == ")" || t == ",") {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []field{textField(".")}
	}
	return roots, args[min(i, len(args)):]
}

// found stands for the paths find finds under root.
func (inv *invocation) found(root field) field {
	pat, ok := root.pattern()
	if !ok {
		return root
	}
	if !strings.HasPrefix(pat, "/") {
		if inv.dir == "" {
			return unknownField(inv.dirWhy)
		}
		pat = escapeGlob(inv.dir) + "/" + pat
	}
	return field{segs: []seg{{unknown: "what find finds"}}, under: &scope{root: pat, deep: true}}
}

// findScope says where the paths lie that a find prints, for the xargs
// after it; nil when it cannot tell.
func (inv *invocation) findScope() *scope {
	roots, expr := findParts(inv.args)
	if len(roots) != 1 {
		return nil
	}
	for _, e := range expr {
		if t, ok := e.text(); ok && (t == "-printf" || t == "-fprintf" || strings.HasPrefix(t, "-exec") || strings.HasPrefix(t, "-ok")) {
			return nil
		}
	}
	return inv.found(roots[0]).under
}
