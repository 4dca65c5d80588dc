// Package anthropic is the [model.LLM] for Anthropic's Messages API, on
// the official SDK github.com/anthropics/anthropic-sdk-go (v2), always
// streaming.
//
// # Configuration
//
// The API key comes from [Options].APIKey or ANTHROPIC_API_KEY; a missing key
// is an error naming the variable. The base URL comes from [Options].BaseURL
// or ANTHROPIC_BASE_URL, else the SDK's default. The Messages API requires a
// token limit: [model.Settings].MaxOutputTokens, or
// [DefaultMaxTokens].
//
// # Guarantees
//
//   - Streamed content blocks are assembled by the SDK's accumulator: text,
//     and any number of tool_use blocks whose JSON input arrives in pieces.
//   - Requests answered with 408, 409, 429 or 5xx (and 529 overloaded), and
//     connection failures, are retried with exponential backoff (default 2
//     retries), waiting as long as Retry-After-Ms or Retry-After asks.
//   - Cancelling the context aborts the request and the stream.
//   - Tool schemas are sent as they are (Anthropic accepts JSON Schema
//     without a strict subset); tool results go back as tool_result blocks
//     with is_error set for failures.
//
// # Not guaranteed
//
// Extended thinking blocks are not requested and, if a server sends them,
// not kept in the conversation. A stream that was already delivering deltas
// is not retried.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/internal/sdkoption"
)

// DefaultMaxTokens is the output-token limit sent when the settings give
// none: the Messages API requires one, and this is enough for long answers
// without inviting runaway generation.
const DefaultMaxTokens = 8192

// ErrMissingAPIKey is wrapped by the error of [New] when no key is configured.
var ErrMissingAPIKey = errors.New("no Anthropic API key")

// Options configures a model. The zero value (or nil) means the defaults.
type Options struct {
	// APIKey is the key; "" reads ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL is the API's base URL; "" reads ANTHROPIC_BASE_URL, and
	// without it the SDK's default is used.
	BaseURL string
	// MaxRetries is how many times a failed request is retried (0: 2;
	// negative: never).
	MaxRetries int
	// HTTPClient replaces the SDK's HTTP client.
	HTTPClient *http.Client
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

// Model is an Anthropic model. It is safe for concurrent use.
type Model struct {
	client sdk.Client
	opts   Options
	id     string // the model id sent with every request
	name   string
}

var _ model.LLM = (*Model)(nil)

// New returns the model with id modelID, such as "claude-sonnet-4-5".
func New(modelID string, opts *Options) (*Model, error) {
	if opts == nil {
		opts = &Options{}
	}
	if modelID == "" {
		return nil, errors.New("anthropic: no model id")
	}
	ropts, key := sdkoption.Build(sdkoption.Settings{
		APIKey: opts.APIKey, KeyEnv: "ANTHROPIC_API_KEY",
		BaseURL: opts.BaseURL, BaseURLEnv: "ANTHROPIC_BASE_URL",
		MaxRetries: opts.MaxRetries, HTTPClient: opts.HTTPClient, Getenv: opts.Getenv,
	}, sdkOptions)
	if key == "" {
		return nil, fmt.Errorf("anthropic: %w: set ANTHROPIC_API_KEY", ErrMissingAPIKey)
	}
	return &Model{client: sdk.NewClient(ropts...), opts: *opts, id: modelID, name: "anthropic:" + modelID}, nil
}

// sdkOptions are the SDK's constructors for the options sdkoption builds.
var sdkOptions = sdkoption.Constructors[option.RequestOption]{
	APIKey: option.WithAPIKey, BaseURL: option.WithBaseURL, MaxRetries: option.WithMaxRetries,
	HTTPClient: func(c *http.Client) option.RequestOption { return option.WithHTTPClient(c) },
}

// Name returns "anthropic:" followed by the model id.
func (m *Model) Name() string { return m.name }

// Stream implements [model.LLM].
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(nil, err)
			return
		}
		stream := m.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var msg sdk.Message
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				yield(nil, fmt.Errorf("anthropic: malformed stream: %w", err))
				return
			}
			switch ev.Type {
			case "content_block_start":
				if ev.ContentBlock.Type == "tool_use" {
					if !yield(&model.Chunk{ToolCall: &model.ToolCallDelta{Index: int(ev.Index), ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}}, nil) {
						return
					}
				}
			case "content_block_delta":
				switch ev.Delta.Type {
				case "text_delta":
					if !yield(&model.Chunk{Text: ev.Delta.Text}, nil) {
						return
					}
				case "input_json_delta":
					if !yield(&model.Chunk{ToolCall: &model.ToolCallDelta{Index: int(ev.Index), ArgsFragment: ev.Delta.PartialJSON}}, nil) {
						return
					}
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(nil, fmt.Errorf("anthropic: %w", redactAPIError(err)))
			return
		}
		if msg.ID == "" && len(msg.Content) == 0 {
			yield(nil, fmt.Errorf("anthropic: %w (no message_start event)", model.ErrNoResponse))
			return
		}
		out := model.Message{Role: model.RoleAssistant}
		for _, b := range msg.Content {
			switch b.Type {
			case "text":
				out.Text += b.Text
			case "tool_use":
				args := b.Input
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Args: append(json.RawMessage(nil), args...)})
			}
		}
		u := msg.Usage
		yield(&model.Chunk{Response: &model.Response{
			Message: out,
			Usage: model.Usage{
				InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
				OutputTokens:      u.OutputTokens,
				CachedInputTokens: u.CacheReadInputTokens,
				Requests:          1,
			},
			StopReason: stopReason(string(msg.StopReason), len(out.ToolCalls) > 0),
			Model:      string(msg.Model),
		}}, nil)
	}
}

// redactedError is an SDK API error whose message has the credentials of
// the request URL masked. The SDK's own message quotes the URL whole, so a
// base URL such as https://user:password@proxy/ would otherwise put the
// password in run_failed events, logs and spans. errors.As still finds the
// *sdk.Error with every field.
type redactedError struct {
	msg string
	err *sdk.Error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactAPIError masks the user information (user name and password, or a
// token in their place) of the request URL in err's message when err is an
// API error.
func redactAPIError(err error) error {
	var ae *sdk.Error
	if !errors.As(err, &ae) || ae.Request == nil || ae.Request.URL == nil || ae.Request.URL.User == nil {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), ae.Request.URL.User.String()+"@", "***@")
	return &redactedError{msg: msg, err: ae}
}

func stopReason(r string, calls bool) model.StopReason {
	switch r {
	case "tool_use":
		return model.StopToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return model.StopMaxTokens
	case "refusal":
		return model.StopContentFilter
	case "end_turn", "stop_sequence", "":
		if calls {
			return model.StopToolCalls
		}
		return model.StopEndTurn
	}
	return model.StopReason(r)
}

func (m *Model) params(req *model.Request) (sdk.MessageNewParams, error) {
	s := req.Settings
	p := sdk.MessageNewParams{Model: sdk.Model(m.id), MaxTokens: DefaultMaxTokens}
	if s.MaxOutputTokens > 0 {
		p.MaxTokens = int64(s.MaxOutputTokens)
	}
	if req.Instructions != "" {
		p.System = []sdk.TextBlockParam{{Text: req.Instructions}}
	}
	// add appends blocks as a message of role user or assistant, merging
	// with the previous message of the same role: the API wants turns to
	// alternate, and tool results travel in a user turn.
	add := func(user bool, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(p.Messages); n > 0 {
			last := &p.Messages[n-1]
			if user && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
			if !user && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			}
		}
		if user {
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			add(true, sdk.NewTextBlock(msg.Text))
		case model.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if msg.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				var input any = json.RawMessage(c.Args)
				if !json.Valid(c.Args) {
					input = map[string]any{} // malformed arguments were reported to the model already
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, input, c.Name))
			}
			add(false, blocks...)
		case model.RoleTool:
			var blocks []sdk.ContentBlockParamUnion
			for _, r := range msg.ToolResults {
				blocks = append(blocks, sdk.NewToolResultBlock(r.CallID, r.Content, r.IsError))
			}
			add(true, blocks...)
		default:
			return p, fmt.Errorf("anthropic: message with unknown role %q", msg.Role)
		}
	}
	for _, d := range req.Tools {
		schema, err := inputSchema(d.Schema)
		if err != nil {
			return p, fmt.Errorf("anthropic: tool %s: schema: %w", d.Name, err)
		}
		t := &sdk.ToolParam{Name: d.Name, InputSchema: schema}
		if d.Description != "" {
			t.Description = sdk.String(d.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: t})
	}
	// This SDK version has no typed sampling parameters; the API still
	// accepts temperature and top_p on the models that support them.
	extra := map[string]any{}
	if s.Temperature != nil {
		extra["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		extra["top_p"] = *s.TopP
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	if len(p.Tools) > 0 {
		switch s.ToolChoice {
		case model.ToolChoiceNone:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		case model.ToolChoiceRequired:
			anyp := &sdk.ToolChoiceAnyParam{}
			if s.NoParallelToolCalls {
				anyp.DisableParallelToolUse = sdk.Bool(true)
			}
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: anyp}
		default:
			if s.NoParallelToolCalls {
				p.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{DisableParallelToolUse: sdk.Bool(true)}}
			}
		}
	}
	return p, nil
}

// inputSchema converts a tool schema to the SDK's input-schema parameter:
// properties and required in their fields, every other keyword kept as is.
func inputSchema(s *jsonschema.Schema) (sdk.ToolInputSchemaParam, error) {
	out := sdk.ToolInputSchemaParam{}
	if s == nil {
		out.Properties = map[string]any{}
		return out, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return out, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return out, err
	}
	out.Properties = m["properties"]
	if out.Properties == nil {
		out.Properties = map[string]any{}
	}
	if rs, ok := m["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				out.Required = append(out.Required, s)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required", "$schema":
		default:
			if out.ExtraFields == nil {
				out.ExtraFields = map[string]any{}
			}
			out.ExtraFields[k] = v
		}
	}
	return out, nil
}
