// Package openai is the [model.LLM] for OpenAI and OpenAI-compatible
// servers (Ollama, vLLM, LiteLLM and the like), on the official SDK
// github.com/openai/openai-go/v3. It speaks either the Chat Completions API
// (the default, which compatible servers implement) or the Responses API,
// always streaming.
//
// # Configuration
//
// The API key comes from [Options].APIKey or OPENAI_API_KEY; a missing key is
// an error naming the variable (set [Options].NoAPIKey for local servers that
// need none). The base URL comes from [Options].BaseURL or OPENAI_BASE_URL
// (for example http://localhost:11434/v1 for Ollama); without either, the
// SDK's default (api.openai.com) is used.
//
// # Guarantees
//
//   - Streamed tool calls are assembled by index: several parallel calls,
//     names and arguments split across any number of chunks.
//   - Requests answered with 408, 409, 429 or 5xx, and connection failures,
//     are retried with exponential backoff (default 2 retries), waiting as
//     long as Retry-After-Ms or Retry-After asks (the SDK's retry loop).
//   - Cancelling the context aborts the request and the stream.
//   - Tool schemas are sent in strict mode when they can be: see the comment
//     on adaptStrict in strict.go. In short: optional properties become
//     required-and-nullable, and a null the model sends for one is removed
//     from the arguments before the tool sees them; schemas strict mode cannot
//     express are sent non-strict, unchanged.
//
// # Not guaranteed
//
// Compatible servers differ: some ignore stream_options (no usage is then
// reported), strict mode, or tool_choice. A stream that was already
// delivering deltas is not retried: the error ends the model call.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"weak"

	"github.com/google/jsonschema-go/jsonschema"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/internal/sdkoption"
)

// API selects the OpenAI API a model speaks.
type API int

const (
	// ChatCompletions is /chat/completions, which OpenAI-compatible servers
	// implement. It is the default.
	ChatCompletions API = iota
	// Responses is OpenAI's /responses API. Requests are sent with
	// store=false: the whole conversation travels with every call.
	Responses
)

// ErrMissingAPIKey is wrapped by the error of [New] when no key is configured.
var ErrMissingAPIKey = errors.New("no OpenAI API key")

// Options configures a model. The zero value (or nil) means the defaults.
type Options struct {
	// APIKey is the key; "" reads OPENAI_API_KEY.
	APIKey string
	// NoAPIKey allows running without a key (local compatible servers).
	NoAPIKey bool
	// BaseURL is the API's base URL; "" reads OPENAI_BASE_URL, and without
	// it the SDK's default is used.
	BaseURL string
	// API selects Chat Completions (the zero value) or Responses.
	API API
	// NoStrict sends every tool schema without strict mode.
	NoStrict bool
	// MaxRetries is how many times a failed request is retried (0: 2;
	// negative: never).
	MaxRetries int
	// HTTPClient replaces the SDK's HTTP client.
	HTTPClient *http.Client
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

// Model is an OpenAI model. It is safe for concurrent use.
type Model struct {
	client oai.Client
	opts   Options
	id     string // the model id sent with every request
	name   string

	// schemas caches the adaptation of each tool schema, by identity. The
	// keys are weak and an entry goes when its schema is collected: tool
	// sources such as MCP servers hand out new schemas whenever their
	// tool list changes, and a long-lived model must not keep them all.
	schemas sync.Map // weak.Pointer[jsonschema.Schema] -> *toolSchema
}

var _ model.LLM = (*Model)(nil)

type toolSchema struct {
	orig   map[string]any
	strict map[string]any // nil: not strict
}

// New returns the model with id modelID, such as "gpt-4.1".
func New(modelID string, opts *Options) (*Model, error) {
	if opts == nil {
		opts = &Options{}
	}
	if modelID == "" {
		return nil, errors.New("openai: no model id")
	}
	ropts, key := sdkoption.Build(sdkoption.Settings{
		APIKey: opts.APIKey, KeyEnv: "OPENAI_API_KEY",
		BaseURL: opts.BaseURL, BaseURLEnv: "OPENAI_BASE_URL",
		MaxRetries: opts.MaxRetries, HTTPClient: opts.HTTPClient, Getenv: opts.Getenv,
	}, sdkOptions)
	if key == "" && !opts.NoAPIKey {
		return nil, fmt.Errorf("openai: %w: set OPENAI_API_KEY (for a local server that needs no key, set any value)", ErrMissingAPIKey)
	}
	return &Model{client: oai.NewClient(ropts...), opts: *opts, id: modelID, name: "openai:" + modelID}, nil
}

// sdkOptions are the SDK's constructors for the options sdkoption builds.
var sdkOptions = sdkoption.Constructors[option.RequestOption]{
	APIKey: option.WithAPIKey, BaseURL: option.WithBaseURL, MaxRetries: option.WithMaxRetries,
	HTTPClient: func(c *http.Client) option.RequestOption { return option.WithHTTPClient(c) },
}

// Name returns "openai:" followed by the model id.
func (m *Model) Name() string { return m.name }

// Stream implements [model.LLM].
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	if m.opts.API == Responses {
		return m.streamResponses(ctx, req)
	}
	return m.streamChat(ctx, req)
}

// schemaFor returns the cached adaptation of a tool schema.
func (m *Model) schemaFor(s *jsonschema.Schema) (*toolSchema, error) {
	var key weak.Pointer[jsonschema.Schema]
	if s != nil {
		key = weak.Make(s)
		if ts, ok := m.schemas.Load(key); ok {
			return ts.(*toolSchema), nil
		}
	}
	orig, err := schemaMap(s)
	if err != nil {
		return nil, err
	}
	ts := &toolSchema{orig: orig}
	if !m.opts.NoStrict {
		fresh, _ := schemaMap(s)
		ts.strict, _ = adaptStrict(fresh)
	}
	if s != nil {
		if _, loaded := m.schemas.LoadOrStore(key, ts); !loaded {
			runtime.AddCleanup(s, func(k weak.Pointer[jsonschema.Schema]) { m.schemas.Delete(k) }, key)
		}
	}
	return ts, nil
}

// tools adapts the tool definitions and returns, by name, the original
// schemas of those sent strict (for stripNulls).
func (m *Model) tools(defs []model.ToolDef) (params []toolParam, strict map[string]map[string]any, err error) {
	for _, d := range defs {
		ts, err := m.schemaFor(d.Schema)
		if err != nil {
			return nil, nil, fmt.Errorf("openai: tool %s: schema: %w", d.Name, err)
		}
		p := toolParam{name: d.Name, description: d.Description, schema: ts.orig}
		if ts.strict != nil {
			p.schema, p.strict = ts.strict, true
			if strict == nil {
				strict = map[string]map[string]any{}
			}
			strict[d.Name] = ts.orig
		}
		params = append(params, p)
	}
	return params, strict, nil
}

type toolParam struct {
	name, description string
	schema            map[string]any
	strict            bool
}

// assembler assembles streamed tool calls by index.
type assembler struct {
	calls map[int]*callBuf
	order []int
}

type callBuf struct {
	id, name string
	args     strings.Builder
}

func (a *assembler) add(index int, id, name, args string) {
	if a.calls == nil {
		a.calls = map[int]*callBuf{}
	}
	c, ok := a.calls[index]
	if !ok {
		c = &callBuf{}
		a.calls[index] = c
		a.order = append(a.order, index)
	}
	if id != "" {
		c.id = id
	}
	c.name += name
	c.args.WriteString(args)
}

func (a *assembler) result(strict map[string]map[string]any) []model.ToolCall {
	if len(a.order) == 0 {
		return nil
	}
	idx := append([]int(nil), a.order...)
	sort.Ints(idx)
	out := make([]model.ToolCall, 0, len(idx))
	for _, i := range idx {
		c := a.calls[i]
		args := c.args.String()
		if s, ok := strict[c.name]; ok {
			args = stripNulls(args, s)
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out = append(out, model.ToolCall{ID: id, Name: c.name, Args: json.RawMessage(args)})
	}
	return out
}

func (m *Model) streamChat(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		params, strict, err := m.chatParams(req)
		if err != nil {
			yield(nil, err)
			return
		}
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		var (
			asm    assembler
			text   strings.Builder
			usage  model.Usage
			stop   model.StopReason
			served string
		)
		for stream.Next() {
			ch := stream.Current()
			if ch.Model != "" {
				served = ch.Model
			}
			if ch.JSON.Usage.Valid() {
				usage.InputTokens = ch.Usage.PromptTokens
				usage.OutputTokens = ch.Usage.CompletionTokens
				usage.CachedInputTokens = ch.Usage.PromptTokensDetails.CachedTokens
			}
			for _, choice := range ch.Choices {
				if choice.Index != 0 {
					continue
				}
				if d := choice.Delta.Content; d != "" {
					text.WriteString(d)
					if !yield(&model.Chunk{Text: d}, nil) {
						return
					}
				}
				for _, tc := range choice.Delta.ToolCalls {
					asm.add(int(tc.Index), tc.ID, tc.Function.Name, tc.Function.Arguments)
					if !yield(&model.Chunk{ToolCall: &model.ToolCallDelta{Index: int(tc.Index), ID: tc.ID, Name: tc.Function.Name, ArgsFragment: tc.Function.Arguments}}, nil) {
						return
					}
				}
				if choice.FinishReason != "" {
					stop = chatStop(choice.FinishReason)
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(nil, fmt.Errorf("openai: %w", err))
			return
		}
		calls := asm.result(strict)
		if stop == "" {
			stop = model.StopEndTurn
			if len(calls) > 0 {
				stop = model.StopToolCalls
			}
		}
		usage.Requests = 1
		yield(&model.Chunk{Response: &model.Response{
			Message:    model.Message{Role: model.RoleAssistant, Text: text.String(), ToolCalls: calls},
			Usage:      usage,
			StopReason: stop,
			Model:      served,
		}}, nil)
	}
}

func chatStop(r string) model.StopReason {
	switch r {
	case "stop":
		return model.StopEndTurn
	case "tool_calls", "function_call":
		return model.StopToolCalls
	case "length":
		return model.StopMaxTokens
	case "content_filter":
		return model.StopContentFilter
	}
	return model.StopReason(r)
}

func (m *Model) chatParams(req *model.Request) (oai.ChatCompletionNewParams, map[string]map[string]any, error) {
	p := oai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.id),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if req.Instructions != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.Instructions))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, oai.UserMessage(msg.Text))
		case model.RoleAssistant:
			a := &oai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" || len(msg.ToolCalls) == 0 { // an assistant message needs content or tool calls
				a.Content.OfString = oai.String(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Args)},
				}})
			}
			p.Messages = append(p.Messages, oai.ChatCompletionMessageParamUnion{OfAssistant: a})
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				p.Messages = append(p.Messages, oai.ToolMessage(r.Content, r.CallID))
			}
		default:
			return p, nil, fmt.Errorf("openai: message with unknown role %q", msg.Role)
		}
	}
	tools, strict, err := m.tools(req.Tools)
	if err != nil {
		return p, nil, err
	}
	for _, t := range tools {
		fd := shared.FunctionDefinitionParam{Name: t.name, Parameters: shared.FunctionParameters(t.schema)}
		if t.description != "" {
			fd.Description = oai.String(t.description)
		}
		if t.strict {
			fd.Strict = oai.Bool(true)
		}
		p.Tools = append(p.Tools, oai.ChatCompletionToolUnionParam{OfFunction: &oai.ChatCompletionFunctionToolParam{Function: fd}})
	}
	sp := settingsFor(req.Settings, len(p.Tools) > 0)
	p.Temperature, p.TopP, p.MaxCompletionTokens, p.ParallelToolCalls = sp.temperature, sp.topP, sp.maxTokens, sp.parallelToolCalls
	if sp.toolChoice != model.ToolChoiceAuto {
		p.ToolChoice = oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String(string(sp.toolChoice))}
	}
	return p, strict, nil
}

func (m *Model) responsesParams(req *model.Request) (responses.ResponseNewParams, map[string]map[string]any, error) {
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(m.id),
		Store: oai.Bool(false),
	}
	if req.Instructions != "" {
		p.Instructions = oai.String(req.Instructions)
	}
	var items responses.ResponseInputParam
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			items = append(items, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleUser))
		case model.RoleAssistant:
			if msg.Text != "" {
				items = append(items, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleAssistant))
			}
			for _, c := range msg.ToolCalls {
				items = append(items, responses.ResponseInputItemParamOfFunctionCall(string(c.Args), c.ID, c.Name))
			}
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				it := responses.ResponseInputItemParamOfFunctionCallOutput(r.Content)
				it.OfFunctionCallOutput.CallID = oai.String(r.CallID)
				items = append(items, it)
			}
		default:
			return p, nil, fmt.Errorf("openai: message with unknown role %q", msg.Role)
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	tools, strict, err := m.tools(req.Tools)
	if err != nil {
		return p, nil, err
	}
	for _, t := range tools {
		ft := &responses.FunctionToolParam{Name: t.name, Parameters: t.schema, Strict: oai.Bool(t.strict)}
		if t.description != "" {
			ft.Description = oai.String(t.description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
	}
	sp := settingsFor(req.Settings, len(p.Tools) > 0)
	p.Temperature, p.TopP, p.MaxOutputTokens, p.ParallelToolCalls = sp.temperature, sp.topP, sp.maxTokens, sp.parallelToolCalls
	if sp.toolChoice != model.ToolChoiceAuto {
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptions(sp.toolChoice))}
	}
	return p, strict, nil
}

// settingsParams are the request fields that both APIs take from
// [model.Settings] alike; only their field names and the tool choice's type
// differ. A zero field is omitted from the request.
type settingsParams struct {
	temperature, topP param.Opt[float64]
	maxTokens         param.Opt[int64]
	parallelToolCalls param.Opt[bool]
	toolChoice        model.ToolChoice // ToolChoiceAuto: not sent
}

// settingsFor maps s to its request fields. The tool choice and parallel
// tool calls are sent only with tools: OpenAI rejects them in a request
// without tools.
func settingsFor(s model.Settings, hasTools bool) settingsParams {
	var sp settingsParams
	if s.Temperature != nil {
		sp.temperature = oai.Float(*s.Temperature)
	}
	if s.TopP != nil {
		sp.topP = oai.Float(*s.TopP)
	}
	if s.MaxOutputTokens > 0 {
		sp.maxTokens = oai.Int(int64(s.MaxOutputTokens))
	}
	if hasTools {
		sp.toolChoice = s.ToolChoice
		if s.NoParallelToolCalls {
			sp.parallelToolCalls = oai.Bool(false)
		}
	}
	return sp
}

func (m *Model) streamResponses(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		params, strict, err := m.responsesParams(req)
		if err != nil {
			yield(nil, err)
			return
		}
		stream := m.client.Responses.NewStreaming(ctx, params)
		defer stream.Close()
		var (
			asm       assembler
			text      strings.Builder
			final     *responses.Response
			truncated bool
		)
		for stream.Next() {
			ev := stream.Current()
			switch ev.Type {
			case "response.output_text.delta":
				text.WriteString(ev.Delta)
				if !yield(&model.Chunk{Text: ev.Delta}, nil) {
					return
				}
			case "response.output_item.added":
				if ev.Item.Type == "function_call" {
					asm.add(int(ev.OutputIndex), ev.Item.CallID, ev.Item.Name, "")
					if !yield(&model.Chunk{ToolCall: &model.ToolCallDelta{Index: int(ev.OutputIndex), ID: ev.Item.CallID, Name: ev.Item.Name}}, nil) {
						return
					}
				}
			case "response.function_call_arguments.delta":
				asm.add(int(ev.OutputIndex), "", "", ev.Delta)
				if !yield(&model.Chunk{ToolCall: &model.ToolCallDelta{Index: int(ev.OutputIndex), ArgsFragment: ev.Delta}}, nil) {
					return
				}
			case "response.completed":
				r := ev.Response
				final = &r
			case "response.incomplete":
				r := ev.Response
				final, truncated = &r, true
			case "response.failed":
				msg := ev.Response.Error.Message
				if msg == "" {
					msg = "the response failed"
				}
				yield(nil, fmt.Errorf("openai: %s (%s)", msg, ev.Response.Error.Code))
				return
			case "error":
				yield(nil, fmt.Errorf("openai: stream error %s: %s", ev.Code, ev.Message))
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(nil, fmt.Errorf("openai: %w", err))
			return
		}
		if final == nil {
			yield(nil, fmt.Errorf("openai: %w (no response.completed event)", model.ErrNoResponse))
			return
		}
		// The completed response is authoritative: rebuild the message
		// from its output items rather than from the deltas.
		var fin assembler
		var ftext strings.Builder
		for i, item := range final.Output {
			switch item.Type {
			case "message":
				for _, c := range item.Content {
					if c.Type == "output_text" {
						ftext.WriteString(c.Text)
					}
				}
			case "function_call":
				fin.add(i, item.CallID, item.Name, item.Arguments.OfString)
			}
		}
		calls := fin.result(strict)
		if len(final.Output) == 0 {
			calls = asm.result(strict)
			ftext.WriteString(text.String())
		}
		stop := model.StopEndTurn
		switch {
		case truncated:
			stop = model.StopMaxTokens
		case len(calls) > 0:
			stop = model.StopToolCalls
		}
		u := final.Usage
		yield(&model.Chunk{Response: &model.Response{
			Message:    model.Message{Role: model.RoleAssistant, Text: ftext.String(), ToolCalls: calls},
			Usage:      model.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.InputTokensDetails.CachedTokens, Requests: 1},
			StopReason: stop,
			Model:      final.Model,
		}}, nil)
	}
}
