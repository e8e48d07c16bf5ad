//go:build !unix

package hook

import "errors"

// endCodexExec does not end a Codex run where there is no signal to
// interrupt it with: the model's tool calls stay refused.
func endCodexExec() error { return errors.New("no signal to interrupt Codex with on this system") }
