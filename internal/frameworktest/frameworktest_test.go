package frameworktest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loopbreaker/loopbreaker/internal/frameworktest"
	"github.com/loopbreaker/loopbreaker/sessions"
	"github.com/stretchr/testify/require"
)

// The stories through a chat loop written by hand on package sessions:
// what each adapter does inside its framework, without one.
func TestStoriesThroughAHandWrittenChatLoop(t *testing.T) {
	frameworktest.Run(t, func(t *testing.T, s frameworktest.Setup) frameworktest.Result {
		set, err := sessions.New(s.Options)
		require.NoError(t, err)
		sess, err := set.Get(context.Background(), s.Session)
		require.NoError(t, err)
		var res frameworktest.Result
		var history []string
		for range max(s.Story.Runs, 1) {
			sess.UserMessage()
			history = append(history, "user: go on")
			res.Errs = append(res.Errs, chat(sess, s, &history))
		}
		res.Session = sess
		return res
	})
}

// chat is one run: model turns until an answer or a stop.
func chat(sess *sessions.Session, s frameworktest.Setup, history *[]string) error {
	ctx := context.Background()
	for id := 0; ; {
		if err := sess.BeforeModel(ctx); err != nil {
			return err
		}
		turn := s.Model.Next(strings.Join(*history, "\n"))
		if turn.Err != nil {
			sess.ModelFailed(turn.Err)
			return turn.Err
		}
		var calls []sessions.Call
		for _, c := range turn.Calls {
			id++
			calls = append(calls, sessions.Call{ID: string(rune('a' + id%26)), Tool: c.Tool, Args: c.Args})
		}
		sess.AfterModel(sessions.Turn{Calls: calls, Text: turn.Text, Usage: frameworktest.Usage})
		if len(calls) == 0 {
			*history = append(*history, "model: "+turn.Text)
			return nil
		}
		for _, c := range calls {
			if words, refused := sess.BeforeTool(c); refused {
				*history = append(*history, "tool: "+words)
				continue
			}
			out, err := s.Tools.Run(c.Tool, c.Args)
			warning := sess.AfterTool(c, out, err)
			if err != nil {
				out = "error: " + err.Error()
			}
			*history = append(*history, "tool: "+out+"\n"+warning)
		}
	}
}
