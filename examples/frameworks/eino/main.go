// Command eino runs a CloudWeGo Eino ChatModelAgent whose model (a
// scripted stand-in, so that it runs offline) goes on reading a file that
// is not there. The breaker's middleware warns the model after the second
// failure, and after the third the run ends with the reason:
//
//	go run ./examples/frameworks/eino
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/loopbreaker/loopbreaker"
	einobreaker "github.com/loopbreaker/loopbreaker/frameworks/eino"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eino:", err)
		os.Exit(1)
	}
}

// run runs the agent on one message and prints what happened.
func run(w io.Writer) error {
	w = &syncWriter{w: w} // the tool writes on Eino's goroutine, the events are printed on this one
	ctx := context.Background()
	cfg, _ := loopbreaker.Preset("tool-steps") // OpenHands' thresholds for a tool-calling agent; a known name: no error
	lb, err := einobreaker.New(cfg, nil)       // a breaker per session; a Store keeps them across restarts
	if err != nil {
		return err
	}
	coder, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "coder", Description: "reads files", Model: &stubbornModel{},
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{readFile{w: w}}}},
		Handlers:    []adk.ChatModelAgentMiddleware{lb.Middleware()},
	})
	if err != nil {
		return err
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: coder}).Query(einobreaker.WithSession(ctx, "ada/chat-1"), "Summarise report.csv.")
	for {
		ev, ok := events.Next()
		switch {
		case !ok:
			fmt.Fprintln(w, "the agent answered")
			return nil
		case errors.Is(ev.Err, loopbreaker.ErrOpen):
			fmt.Fprintln(w, "the agent was stopped:", why(ev.Err))
			return nil
		case ev.Err != nil:
			return ev.Err
		case ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Role == schema.Tool:
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err == nil {
				if _, warning, ok := strings.Cut(msg.Content, "loopbreaker warning: "); ok {
					fmt.Fprintln(w, "the model was warned: loopbreaker warning:", warning)
				}
			}
		}
	}
}

// syncWriter lets two goroutines write lines to one writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// readFile is a read_file tool on a directory without report.csv.
type readFile struct{ w io.Writer }

func (readFile) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "read_file", Desc: "Read a file."}, nil
}

func (t readFile) InvokableRun(_ context.Context, args string, _ ...tool.Option) (string, error) {
	fmt.Fprintf(t.w, "read_file %s\n", args)
	return "", errors.New("open report.csv: no such file or directory")
}

// stubbornModel stands in for a model stuck on one idea: it reads
// report.csv, whatever the result says.
type stubbornModel struct{ calls int }

func (m *stubbornModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	m.calls++
	return &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{
		ID: fmt.Sprint("call-", m.calls), Type: "function",
		Function: schema.FunctionCall{Name: "read_file", Arguments: `{"path":"report.csv"}`},
	}}}, nil
}

func (m *stubbornModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *stubbornModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

// why is the breaker's reason for a stop.
func why(err error) string {
	var refused *loopbreaker.RefusedError
	if errors.As(err, &refused) {
		return refused.Reason.String()
	}
	return err.Error()
}
