package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example reads report.csv twice, the model is warned after the
// second failure, reads it a third time, and Generate is stopped with the
// reason.
func TestTheStubbornAgentIsStopped(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	read := "read_file report.csv" + "\n"
	assert.True(t, strings.HasPrefix(out.String(), read+read+"the model was warned: "), "two reads, then the warning: %s", out.String())
	assert.Contains(t, out.String(), "the model was warned: loopbreaker warning: this call has failed 2 times in a row")
	assert.Contains(t, out.String(), "the model was warned: "+`loopbreaker warning: this call has failed 2 times in a row (read_file {"path":"report.csv"}); if it fails once more, your tool calls are stopped. Try something different.`+"\n"+read)
	assert.Contains(t, out.String(), `the agent was stopped: Same action failed 3 times in a row`)
}
