// Package model holds the provider-neutral model types: a conversation's
// messages, tool calls and results, the request and streamed response of one
// model call, usage, and the [LLM] interface that providers implement.
//
// Providers (the packages under provider/) translate these types to and from
// their wire formats; nothing here refers to a provider SDK. The agent
// runtime (package agent and the packages under it) drives an LLM through
// them.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"iter"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/paigasus/helikon"
)

// Role says who wrote a [Message].
type Role string

// The roles of a conversation.
const (
	// RoleUser messages come from the person (or program) driving the run.
	RoleUser Role = "user"
	// RoleAssistant messages come from the model: text, tool calls or both.
	RoleAssistant Role = "assistant"
	// RoleTool messages carry the results of the tool calls of the assistant
	// message before them, one result per call, in call order.
	RoleTool Role = "tool"
)

// Message is one entry of a conversation. Which fields are set depends on the
// role: user messages have Text; assistant messages have Text, ToolCalls or
// both; tool messages have ToolResults. Messages are plain data and encode to
// JSON, which is how session stores keep them.
type Message struct {
	Role        Role         `json:"role"`
	Text        string       `json:"text,omitempty"`         // user and assistant messages
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`   // assistant messages only
	ToolResults []ToolResult `json:"tool_results,omitempty"` // tool messages only, one per call answered
}

// UserMessage returns a user message with text.
func UserMessage(text string) Message { return Message{Role: RoleUser, Text: text} }

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	// ID identifies the call; its result carries the same ID. Providers
	// that do not issue IDs get one made up by the provider package.
	ID string `json:"id"`
	// Name is the tool's name as the model spelled it; it may name no tool.
	Name string `json:"name"`
	// Args are the arguments exactly as the model sent them. They are not
	// guaranteed to be valid JSON: the runner reports malformed arguments
	// back to the model as invalid arguments.
	Args json.RawMessage `json:"args"`
}

// MarshalJSON encodes c; arguments that are not valid JSON are kept as a
// JSON string so that a session can still be stored.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	p := plain(c)
	if len(p.Args) == 0 {
		p.Args = json.RawMessage("{}")
	} else if !json.Valid(p.Args) {
		s, _ := json.Marshal(string(p.Args))
		p.Args = s
	}
	return json.Marshal(p)
}

// ToolResult is the outcome of one tool call as the model sees it.
type ToolResult struct {
	// CallID is the ID of the ToolCall this answers.
	CallID string `json:"call_id"`
	// Name is the called tool's name (some providers require it).
	Name string `json:"name"`
	// Content is the tool's JSON output, or for an error a message telling
	// the model what went wrong and what to do next.
	Content string `json:"content"`
	// IsError marks a failed call; Kind says which of the three tool errors
	// it was.
	IsError bool              `json:"is_error,omitempty"`
	Kind    helikon.ErrorKind `json:"kind,omitempty"` // "" on success
}

// ToolDef describes a tool to a model.
type ToolDef struct {
	Name        string // the name the model calls the tool by
	Description string // tells the model what the tool does and when to use it
	// Schema is the JSON schema of the arguments, an object schema. Providers
	// adapt it to what their API accepts (see each provider's package doc).
	Schema *jsonschema.Schema
}

// ToolDefOf returns the definition of t.
func ToolDefOf[C any](t helikon.Tool[C]) ToolDef {
	return ToolDef{Name: t.Name(), Description: t.Description(), Schema: t.Schema()}
}

// ToolChoice constrains whether the model calls tools.
type ToolChoice string

// The tool choices. The zero value lets the provider decide (auto).
const (
	ToolChoiceAuto     ToolChoice = ""
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// Settings are the sampling and tool settings of a model call. The zero
// value means the provider's defaults.
type Settings struct {
	Temperature *float64 // nil: the provider's default
	TopP        *float64 // nil: the provider's default
	// MaxOutputTokens caps the tokens generated per call; 0 means the
	// provider package's default (Anthropic requires a value).
	MaxOutputTokens int
	// ToolChoice says whether the model may, must or must not call tools.
	ToolChoice ToolChoice
	// NoParallelToolCalls asks the model to request at most one tool call
	// per turn.
	NoParallelToolCalls bool
}

// Request is one call of a model.
type Request struct {
	// Instructions is the system prompt.
	Instructions string
	// Messages is the conversation so far, oldest first; it should end with
	// a user or tool message.
	Messages []Message
	// Tools are the tools the model may call (none: a plain completion).
	Tools    []ToolDef
	Settings Settings
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`  // prompt tokens, cached ones included
	OutputTokens int64 `json:"output_tokens"` // generated tokens
	// CachedInputTokens is the part of InputTokens served from a prompt
	// cache, where the provider reports it.
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
	// Requests is the number of model calls counted.
	Requests int64 `json:"requests"`
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CachedInputTokens += v.CachedInputTokens
	u.Requests += v.Requests
}

// TotalTokens returns InputTokens + OutputTokens.
func (u Usage) TotalTokens() int64 { return u.InputTokens + u.OutputTokens }

// StopReason says why a model stopped generating.
type StopReason string

// The stop reasons providers map theirs to.
const (
	StopEndTurn       StopReason = "end_turn"
	StopToolCalls     StopReason = "tool_calls"
	StopMaxTokens     StopReason = "max_tokens"
	StopContentFilter StopReason = "content_filter"
)

// Response is the complete answer of one model call.
type Response struct {
	// Message is the assistant message, tool calls assembled.
	Message Message
	// Usage is this call's usage, with Requests set to 1.
	Usage Usage
	// StopReason is the provider's reason mapped to the StopReason values.
	StopReason StopReason
	// Model is the model that answered, as the provider reports it.
	Model string
}

// Chunk is one element of a model's stream. Exactly one field is set:
// Text or ToolCall for a delta as it arrives, Response on the last chunk.
type Chunk struct {
	// Text is a fragment of the answer's text.
	Text string
	// ToolCall is a fragment of a tool call.
	ToolCall *ToolCallDelta
	// Response is the complete response; it is set on the last chunk only.
	Response *Response
}

// ToolCallDelta is a fragment of a streamed tool call. Fragments with the same
// Index belong to the same call; ID and Name arrive in the first fragment of a
// call or split over several, Args in pieces to be concatenated.
type ToolCallDelta struct {
	Index        int    // position of the call within the response, from 0
	ID           string // the call's ID, or part of it; "" in later fragments
	Name         string // the tool name, or part of it; "" in later fragments
	ArgsFragment string // the next piece of the JSON arguments
}

// LLM is a language model that can call tools.
//
// Stream calls the model and yields its answer as it arrives: text and
// tool-call fragments, then one final chunk whose Response holds the complete
// message with the tool calls assembled, the usage and the stop reason. An
// error ends the stream. Cancelling ctx stops the request. A consumer that
// stops early (break) closes the request. Implementations must be safe for
// concurrent use: several runs may share one model.
type LLM interface {
	// Name identifies the model, such as "openai:gpt-4.1".
	Name() string
	// Stream calls the model with req; see the type's doc.
	Stream(ctx context.Context, req *Request) iter.Seq2[*Chunk, error]
}

// ErrNoResponse is returned when a model's stream ends without a final
// response.
var ErrNoResponse = errors.New("the model stream ended without a response")

// Generate calls m and returns the final response, discarding the deltas.
func Generate(ctx context.Context, m LLM, req *Request) (*Response, error) {
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if c.Response != nil {
			return c.Response, nil
		}
	}
	return nil, ErrNoResponse
}

// ToolResultFor returns the result a model sees for a call that returned out
// and err: the JSON output, or an error message that says what to do next.
func ToolResultFor(call ToolCall, out json.RawMessage, err error) ToolResult {
	res := ToolResult{CallID: call.ID, Name: call.Name}
	if err == nil {
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		res.Content = string(out)
		return res
	}
	res.IsError = true
	res.Kind = helikon.KindOf(err)
	switch res.Kind {
	case helikon.KindInvalidArgs:
		res.Content = err.Error() + ". Fix the arguments to match the tool's schema and call " + call.Name + " again."
	case helikon.KindDenied:
		res.Content = err.Error() + ". Do not retry the same call; choose another way or ask the user."
	default:
		res.Content = "error: " + err.Error()
	}
	return res
}
