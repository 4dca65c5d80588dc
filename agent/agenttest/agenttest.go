// Package agenttest provides an in-process scripted [model.LLM] for tests
// and benchmarks of agents, in the spirit of net/http/httptest: no network,
// deterministic answers, and a record of every request the model received.
//
// It is a test double for the model only; the runner, the permission pipeline
// and the tools under test are the real ones.
//
// What it guarantees: replies come in script order, one per call, however
// the calls interleave; every call whose context is live is counted and
// (unless NoRecord) recorded before it is answered, so a call that then fails
// is still visible to the test; a call after the last reply fails with
// [ErrScriptExhausted] rather than inventing an answer; a call whose context
// is already cancelled fails without using a reply.
//
// What it does not do: it does not check that a reply makes sense for the
// request (tool names, argument schemas, a tool result for every call), and it
// does not model a provider's limits, errors or retries; use the provider
// test servers (provider/openai/openaitest, provider/anthropic/anthropictest)
// for those.
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/paigasus/helikon/model"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the assistant's text, streamed in two fragments.
	Text string
	// ToolCalls are the calls the model asks for; any makes the stop reason
	// tool_calls instead of end_turn.
	ToolCalls []model.ToolCall
	// Usage is reported on the final chunk; Requests is always set to 1.
	Usage model.Usage
	// Err fails the model call instead.
	Err error
}

// Call returns a tool call with the given id, tool name and JSON arguments.
func Call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// ErrScriptExhausted is returned when the model is called more often than it
// has replies.
var ErrScriptExhausted = errors.New("agenttest: the scripted model has no reply left")

// Model is a scripted model. Either Replies are returned in order, or, when
// Func is set, Func computes each reply from the request. Text is streamed in
// two fragments and each tool call in three (name split in two), so that
// consumers see realistic deltas. Model is safe for concurrent use.
type Model struct {
	// ModelName is what Name returns ("": "scripted").
	ModelName string
	// Replies are the answers, in order, when Func is nil.
	Replies []Reply
	// Func, when set, computes every reply instead of Replies. It is called
	// without the model's lock held, so concurrent runs may call it
	// concurrently.
	Func func(req *model.Request) Reply
	// NoRecord stops the model from keeping a copy of each request (for
	// benchmarks).
	NoRecord bool

	mu       sync.Mutex
	next     int
	requests []*model.Request
}

// New returns a model that answers with replies in order.
func New(replies ...Reply) *Model { return &Model{Replies: replies} }

// Name returns ModelName, or "scripted".
func (m *Model) Name() string {
	if m.ModelName == "" {
		return "scripted"
	}
	return m.ModelName
}

// Requests returns the requests received so far, in arrival order. Each is a
// copy of the request whose Messages slice is copied too (the messages
// themselves are shared).
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.Request(nil), m.requests...)
}

// Calls returns the number of model calls so far.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

// Stream implements [model.LLM].
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		m.mu.Lock()
		var r Reply
		n := m.next
		m.next++
		if !m.NoRecord {
			cp := *req
			cp.Messages = append([]model.Message(nil), req.Messages...)
			m.requests = append(m.requests, &cp)
		}
		m.mu.Unlock()
		switch {
		case m.Func != nil:
			r = m.Func(req)
		case n < len(m.Replies):
			r = m.Replies[n]
		default:
			yield(nil, fmt.Errorf("%w (call %d, %d replies)", ErrScriptExhausted, n+1, len(m.Replies)))
			return
		}
		if r.Err != nil {
			yield(nil, r.Err)
			return
		}
		if r.Text != "" {
			h := len(r.Text) / 2
			if h > 0 && !yield(&model.Chunk{Text: r.Text[:h]}, nil) {
				return
			}
			if !yield(&model.Chunk{Text: r.Text[h:]}, nil) {
				return
			}
		}
		for i, c := range r.ToolCalls {
			h := len(c.Name) / 2
			parts := []model.ToolCallDelta{
				{Index: i, ID: c.ID, Name: c.Name[:h]},
				{Index: i, Name: c.Name[h:]},
				{Index: i, ArgsFragment: string(c.Args)},
			}
			for j := range parts {
				if !yield(&model.Chunk{ToolCall: &parts[j]}, nil) {
					return
				}
			}
		}
		stop := model.StopEndTurn
		if len(r.ToolCalls) > 0 {
			stop = model.StopToolCalls
		}
		u := r.Usage
		u.Requests = 1
		yield(&model.Chunk{Response: &model.Response{
			Message:    model.Message{Role: model.RoleAssistant, Text: r.Text, ToolCalls: r.ToolCalls},
			Usage:      u,
			StopReason: stop,
			Model:      m.Name(),
		}}, nil)
	}
}

// LastToolResults returns the tool results of the last tool message of req,
// for a Func that reacts to them.
func LastToolResults(req *model.Request) []model.ToolResult {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == model.RoleTool {
			return req.Messages[i].ToolResults
		}
		if req.Messages[i].Role == model.RoleUser {
			return nil
		}
	}
	return nil
}

// Contains reports whether any text or tool result in req contains s.
func Contains(req *model.Request, s string) bool {
	for _, m := range req.Messages {
		if strings.Contains(m.Text, s) {
			return true
		}
		for _, r := range m.ToolResults {
			if strings.Contains(r.Content, s) {
				return true
			}
		}
	}
	return false
}
