package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example reads report.csv twice, the model is warned after the
// second failure, reads it a third time, and the agent is stopped with the
// reason. (Eino delivers the tool's events after the reads: the warning
// comes after them in the output.)
func TestTheStubbornAgentIsStopped(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	reads := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if line == `read_file {"path":"report.csv"}` {
			reads++
		}
	}
	assert.Equal(t, 3, reads, out.String())
	assert.Contains(t, out.String(), "the model was warned: loopbreaker warning: this call has failed 2 times in a row")
	assert.Contains(t, out.String(), "the model was warned: "+`loopbreaker warning: this call has failed 2 times in a row (read_file {"path":"report.csv"}); if it fails once more, your tool calls are stopped. Try something different.`)
	assert.Contains(t, out.String(), `the agent was stopped: Same action failed 3 times in a row`)
}
