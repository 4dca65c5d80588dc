package einoadapter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// call is one tool call of a scripted model's turn.
type call struct {
	tool, args string
}

// scripted is a chat model that asks for calls in its first turn and,
// once the conversation holds a result for each, answers with the
// results, one line per call ("id tool: result", in call order). It
// stands for a real model without a key.
type scripted struct{ calls []call }

var _ model.ToolCallingChatModel = (*scripted)(nil)

func (m *scripted) Generate(_ context.Context, msgs []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	var lines []string
	for _, msg := range msgs {
		if msg.Role == schema.Tool {
			lines = append(lines, fmt.Sprintf("%s %s: %s", msg.ToolCallID, msg.ToolName, msg.Content))
		}
	}
	if len(lines) > 0 {
		slices.Sort(lines)
		return schema.AssistantMessage(strings.Join(lines, "\n"), nil), nil
	}
	var tcs []schema.ToolCall
	for i, c := range m.calls {
		tcs = append(tcs, schema.ToolCall{ID: fmt.Sprint(i), Type: "function", Function: schema.FunctionCall{Name: c.tool, Arguments: c.args}})
	}
	return schema.AssistantMessage("", tcs), nil
}

func (m *scripted) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// store is an in-memory checkpoint store.
type store struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *store) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *store) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[id] = b
	return nil
}

// drain reads a run's events: the last message's text, and the root-cause
// interrupts.
func drain(it *adk.AsyncIterator[*adk.AgentEvent]) (text string, interrupts []*adk.InterruptCtx, err error) {
	for {
		ev, ok := it.Next()
		if !ok {
			return text, interrupts, err
		}
		if ev.Err != nil {
			err = errors.Join(err, ev.Err)
			continue
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, ic := range ev.Action.Interrupted.InterruptContexts {
				if ic.IsRootCause {
					interrupts = append(interrupts, ic)
				}
			}
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
			text = ev.Output.MessageOutput.Message.Content
		}
	}
}
