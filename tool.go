package helikon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Effect says what a tool can change. It drives the permission modes:
// [ModePlan] lets only read-only tools run and [ModeAcceptEdits] auto-approves
// write tools.
type Effect int

const (
	// EffectSideEffect is the default: the tool may do anything (run a
	// program, reach the network). An undeclared effect is a side effect.
	EffectSideEffect Effect = iota
	// EffectReadOnly tools observe and change nothing.
	EffectReadOnly
	// EffectWrite tools change files inside the sandbox and nothing else.
	EffectWrite
)

// String returns "side_effect", "read_only" or "write".
func (e Effect) String() string {
	switch e {
	case EffectReadOnly:
		return "read_only"
	case EffectWrite:
		return "write"
	default:
		return "side_effect"
	}
}

// Tool is a function a model can call mid-run. C is the application context
// type a runner passes to every tool (use struct{} when there is none).
//
// The interface holds what every tool must have. Two further parts of the
// contract are optional and discovered with a type assertion, as the
// standard library does with io.WriterTo: [StructuredOutput] for an output
// schema and [Effecter] for the effect (a tool without it is a side effect,
// the safe default). [Targeter] lets permission rules that name paths,
// programs or hosts see what a call would touch. A tool may embed [ToolInfo]
// to get all of the descriptive methods from one struct literal.
//
// Invoke must honour cancellation of tc (it is a [context.Context]) and must be
// safe for concurrent use: a runner calls tools in parallel.
type Tool[C any] interface {
	// Name is the name the model calls the tool by; it must match
	// [A-Za-z_][A-Za-z0-9_-]{0,63}.
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the JSON schema of the tool's arguments, an object schema.
	Schema() *jsonschema.Schema
	// Invoke runs the tool with the raw JSON arguments the model sent and
	// returns the tool's output as raw JSON, or one of the three tool errors.
	Invoke(tc *ToolContext[C], args json.RawMessage) (json.RawMessage, error)
}

// StructuredOutput is implemented by tools whose output is structured: JSON
// of a declared schema (an MCP tool's outputSchema, which clients validate
// its structured content against).
type StructuredOutput interface {
	// OutputSchema is the JSON schema of what Invoke returns on success.
	OutputSchema() *jsonschema.Schema
}

// Effecter is implemented by tools that declare their effect.
type Effecter interface {
	// Effect is the most a call of the tool can do (read-only, write or side
	// effect); permission modes such as Plan and AcceptEdits decide on it.
	Effect() Effect
}

// Targeter is implemented by tools that can say, before running, what a call
// with the given arguments would touch. The permission pipeline uses it to
// match rules such as Read(.env) or Bash(rm) and to run the built-in guards.
// A tool that does not implement it can only be matched by bare tool-name
// rules; a deny rule with a pattern matches it (fail closed), an allow rule
// with a pattern does not.
type Targeter interface {
	// Targets reports the paths, hosts and commands a call with args would
	// touch, without running it. An error, or a Targets with Unresolved set,
	// means the targets are not fully known: deny rules with a pattern then
	// match and allow rules with a pattern do not.
	Targets(args json.RawMessage) (Targets, error)
}

// ContextTargeter is implemented by a [Targeter] whose targets depend on the
// call's context, such as the session whose processes a call acts on; the
// permission pipeline then calls TargetsContext instead of Targets.
type ContextTargeter interface {
	Targeter
	// TargetsContext is Targets for a call whose context is ctx.
	TargetsContext(ctx context.Context, args json.RawMessage) (Targets, error)
}

// EffectOf returns t's declared effect, or [EffectSideEffect] when t does not
// declare one.
func EffectOf(t any) Effect {
	if e, ok := t.(Effecter); ok {
		return e.Effect()
	}
	return EffectSideEffect
}

// OutputSchemaOf returns t's output schema, or nil.
func OutputSchemaOf(t any) *jsonschema.Schema {
	if o, ok := t.(StructuredOutput); ok {
		return o.OutputSchema()
	}
	return nil
}

// ToolInfo holds the descriptive half of a tool. Embed it in a tool struct to
// get Name, Description, Schema, OutputSchema and Effect from its fields; the
// zero Effect is [EffectSideEffect].
type ToolInfo struct {
	ToolName        string             // returned by Name
	ToolDescription string             // returned by Description
	InputSchema     *jsonschema.Schema // returned by Schema: the arguments' object schema
	Output          *jsonschema.Schema // nil when the tool declares no output schema
	ToolEffect      Effect             // returned by Effect; the zero value is EffectSideEffect
}

// Name returns ToolName.
func (i ToolInfo) Name() string { return i.ToolName }

// Description returns ToolDescription.
func (i ToolInfo) Description() string { return i.ToolDescription }

// Schema returns InputSchema.
func (i ToolInfo) Schema() *jsonschema.Schema { return i.InputSchema }

// OutputSchema returns Output.
func (i ToolInfo) OutputSchema() *jsonschema.Schema { return i.Output }

// Effect returns ToolEffect.
func (i ToolInfo) Effect() Effect { return i.ToolEffect }

// ValidateToolName reports whether name is a valid tool name: it must match
// [A-Za-z_][A-Za-z0-9_-]{0,63}, the intersection of what OpenAI, Anthropic
// and MCP clients accept. (A loop, not a regexp: the bounded repetition
// compiles into a large automaton that every program importing the core
// would build at start-up.)
func ValidateToolName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '-')
	}
	if !ok {
		return fmt.Errorf("invalid tool name %q: a tool name must match [A-Za-z_][A-Za-z0-9_-]{0,63}", name)
	}
	return nil
}

// Toolset is an immutable set of tools of one context type, looked up by
// name. Duplicate and invalid names are reported when the set is built, not when a model calls a
// tool. A Toolset is safe for concurrent use.
type Toolset[C any] struct {
	tools  []Tool[C]
	byName map[string]Tool[C]
}

// NewToolset builds a Toolset. It fails when a tool is nil, has an invalid
// name or no schema, or when two tools share a name.
func NewToolset[C any](tools ...Tool[C]) (*Toolset[C], error) {
	s := &Toolset[C]{tools: slices.Clone(tools), byName: make(map[string]Tool[C], len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("helikon: tool %d is nil", i)
		}
		name := t.Name()
		if err := ValidateToolName(name); err != nil {
			return nil, fmt.Errorf("helikon: tool %d: %w", i, err)
		}
		if t.Schema() == nil {
			return nil, fmt.Errorf("helikon: tool %q has no argument schema", name)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("helikon: duplicate tool name %q: every tool in a set needs its own name", name)
		}
		s.byName[name] = t
	}
	return s, nil
}

// MustToolset is like [NewToolset] but panics on error. Use it for tool sets
// fixed at compile time.
func MustToolset[C any](tools ...Tool[C]) *Toolset[C] {
	s, err := NewToolset(tools...)
	if err != nil {
		panic(err)
	}
	return s
}

// Lookup returns the tool called name.
func (s *Toolset[C]) Lookup(name string) (Tool[C], bool) {
	if s == nil {
		return nil, false
	}
	t, ok := s.byName[name]
	return t, ok
}

// Tools returns the tools in the order they were given.
func (s *Toolset[C]) Tools() []Tool[C] {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tools)
}

// Names returns the tool names in the order the tools were given.
func (s *Toolset[C]) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name()
	}
	return names
}

// Len returns the number of tools.
func (s *Toolset[C]) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}
