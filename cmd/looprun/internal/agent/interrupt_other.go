//go:build !unix

package agent

import "errors"

// interruptAncestor does not end an agent's run where there is no signal
// to interrupt it with: the model's tool calls stay refused.
func interruptAncestor(func([]string) bool, error) error {
	return errors.New("no signal to interrupt the agent with on this system")
}
