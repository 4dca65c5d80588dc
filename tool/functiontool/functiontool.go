// Package functiontool turns a typed Go function into a [helikon.Tool]: the
// argument schema is inferred from the input type, the output schema from the
// output type, and the model's arguments are validated as JSON against the
// schema before they are decoded.
//
// Go has no doc comments at run time, so the name and description are given
// explicitly.
//
// # Schema inference
//
// Schemas are inferred by github.com/google/jsonschema-go, the dialect the
// official MCP Go SDK and Google's ADK use. Exported struct fields become
// properties named by their json tag; a field is required unless its json tag
// says omitempty or omitzero; pointer fields also accept null; unknown fields
// are rejected unless [Options].AllowUnknownFields is set. These struct tags
// are read:
//
//	json:"name,omitempty"        property name, optionality
//	jsonschema:"text"            the property's description (jsonschema-go)
//	jsonschema_description:"t"   the same, as written for invopop/jsonschema
//	description:"text"           the same
//	enum:"a,b,c"                 the allowed values (converted to the field's type)
//	default:"value"              the default, applied before decoding (JSON, or a bare string)
//
// # Validation
//
// Invoke parses the arguments, checks them against the schema and reports
// every violation at once as a [helikon.InvalidArgsError] whose problems name
// the JSON field, what was expected and what was given. Defaults are then
// applied and the JSON is decoded into the input type. After the function
// returns, its result is encoded and, when the tool has an output schema,
// validated against it: a result that breaks its own schema is a bug in the
// tool and is reported as an other error, never passed on silently.
//
// A tool built on a function tool that reports its targets
// ([helikon.Targeter]) from the decoded arguments does so with
// [Tool.DecodeTargets]: the targets then carry the decoded value, the
// permission pipeline hands them to the call, and Invoke runs the function
// on that value, so the arguments of a checked call are validated and
// decoded once. Arguments that fail there report no value, and Invoke
// validates them itself, with the same errors.
//
// # What is not done
//
// A function tool confines nothing: the function runs with the process's own
// access, and its declared effect (side-effect unless Options.Effect says
// otherwise) is a promise the permission modes rely on, not something this
// package checks. It does not implement [helikon.Targeter], so permission
// rules can name it only by tool name: a deny rule with a pattern denies
// every call of it (fail closed) and an allow rule with a pattern never
// matches. A panic in the function is not recovered here (the agent runtime,
// agent/llmagent, recovers panics of the tools it calls).
package functiontool

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/argcheck"
)

// Func is the shape of a typed tool function.
type Func[C, In, Out any] func(tc *helikon.ToolContext[C], in In) (Out, error)

// Options configures a function tool. The zero value (or nil) means: effect
// side-effect, unknown fields rejected, schemas inferred.
type Options struct {
	// Effect is the tool's effect; the zero value is side-effect.
	Effect helikon.Effect
	// AllowUnknownFields accepts (and ignores) argument fields the input type
	// does not have. By default they are an error, which models correct
	// from quickly.
	AllowUnknownFields bool
	// InputSchema replaces the inferred argument schema.
	InputSchema *jsonschema.Schema
	// OutputSchema replaces the inferred output schema.
	OutputSchema *jsonschema.Schema
	// NoOutputSchema declares no output schema and skips output validation.
	NoOutputSchema bool
}

// Tool is a typed function tool. It implements [helikon.Tool],
// [helikon.Effecter] and [helikon.StructuredOutput].
type Tool[C, In, Out any] struct {
	name, description string
	fn                Func[C, In, Out]
	effect            helikon.Effect
	in, out           *jsonschema.Schema
	inCheck, outCheck *argcheck.Validator
}

// New builds a function tool. Programmer errors (an invalid name, an input
// type that is not a struct, a type jsonschema cannot describe, a malformed
// tag) are reported here, not when a model calls the tool.
func New[C, In, Out any](name, description string, fn Func[C, In, Out], opts *Options) (*Tool[C, In, Out], error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := helikon.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("functiontool: %w", err)
	}
	if fn == nil {
		return nil, fmt.Errorf("functiontool: tool %q: nil function", name)
	}
	t := &Tool[C, In, Out]{name: name, description: description, fn: fn, effect: opts.Effect}

	inType := reflect.TypeFor[In]()
	if opts.InputSchema != nil {
		t.in = opts.InputSchema.CloneSchemas()
	} else {
		if st := inType; st.Kind() != reflect.Struct && !(st.Kind() == reflect.Pointer && st.Elem().Kind() == reflect.Struct) {
			return nil, fmt.Errorf("functiontool: tool %q: the input type %s must be a struct (the model sends a JSON object)", name, inType)
		}
		s, err := infer(inType)
		if err != nil {
			return nil, fmt.Errorf("functiontool: tool %q: input: %w", name, err)
		}
		s.Types = nil
		s.Type = "object" // a pointer input still takes an object, not null
		t.in = s
	}
	if opts.AllowUnknownFields {
		openObjects(t.in)
	}
	var err error
	if t.inCheck, err = argcheck.Compile(t.in); err != nil {
		return nil, fmt.Errorf("functiontool: tool %q: input schema: %w", name, err)
	}

	if !opts.NoOutputSchema {
		if opts.OutputSchema != nil {
			t.out = opts.OutputSchema.CloneSchemas()
		} else if s, err := infer(reflect.TypeFor[Out]()); err != nil {
			return nil, fmt.Errorf("functiontool: tool %q: output: %w", name, err)
		} else {
			t.out = s
		}
		if t.outCheck, err = argcheck.Compile(t.out); err != nil {
			return nil, fmt.Errorf("functiontool: tool %q: output schema: %w", name, err)
		}
	}
	return t, nil
}

// Must is like [New] but panics on error, for tools defined at package level.
func Must[C, In, Out any](t *Tool[C, In, Out], err error) *Tool[C, In, Out] {
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name.
func (t *Tool[C, In, Out]) Name() string { return t.name }

// Description returns the tool's description.
func (t *Tool[C, In, Out]) Description() string { return t.description }

// Schema returns the argument schema.
func (t *Tool[C, In, Out]) Schema() *jsonschema.Schema { return t.in }

// OutputSchema returns the output schema, or nil.
func (t *Tool[C, In, Out]) OutputSchema() *jsonschema.Schema { return t.out }

// Effect returns the tool's effect.
func (t *Tool[C, In, Out]) Effect() helikon.Effect { return t.effect }

// Invoke validates args, decodes them, calls the function and encodes its
// result. Errors returned by the function pass through [helikon.Other], so
// the function may return helikon.Denied or helikon.InvalidArgs itself.
//
// When the call's targets carry this tool's decoding of exactly these
// arguments (see [Tool.DecodeTargets]), Invoke calls the function with it
// instead of validating and decoding args again: the arguments were
// validated by the same schema when the targets were reported, so the
// outcome is the same.
func (t *Tool[C, In, Out]) Invoke(tc *helikon.ToolContext[C], args json.RawMessage) (json.RawMessage, error) {
	in, ok := t.decoded(tc.Targets(), args)
	if !ok {
		var err error
		if in, err = t.Decode(args); err != nil {
			return nil, err
		}
	}
	out, err := t.fn(tc, in)
	if err != nil {
		if ia := (*helikon.InvalidArgsError)(nil); errors.As(err, &ia) && ia.Tool == "" {
			ia.Tool = t.name
		}
		return nil, helikon.Other(err)
	}
	return t.encode(out)
}

// Decode validates raw arguments against the input schema, applies defaults
// and decodes them, as Invoke does before calling the function.
func (t *Tool[C, In, Out]) Decode(args json.RawMessage) (In, error) {
	var in In
	args = trimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if !t.inCheck.HasDefaults() && t.inCheck.ValidRaw(args) {
		// Fast path: valid arguments are decoded once, straight into In.
		if err := json.Unmarshal(args, &in); err != nil {
			return in, &helikon.InvalidArgsError{Tool: t.name, Problems: []string{decodeProblem(err)}}
		}
		return in, nil
	}
	m, problem := argcheck.ParseObject(args)
	if problem != "" {
		return in, &helikon.InvalidArgsError{Tool: t.name, Problems: []string{problem}}
	}
	if problems := t.inCheck.Validate(m); len(problems) > 0 {
		return in, &helikon.InvalidArgsError{Tool: t.name, Problems: problems}
	}
	if t.inCheck.HasDefaults() {
		if err := t.inCheck.ApplyDefaults(&m); err != nil {
			return in, helikon.Other(fmt.Errorf("applying defaults: %w", err))
		}
		var err error
		if args, err = json.Marshal(m); err != nil {
			return in, helikon.Other(err)
		}
	}
	if err := json.Unmarshal(args, &in); err != nil {
		// The schema accepted what Go cannot hold (an integer too large
		// for the field, say): still the model's to fix.
		return in, &helikon.InvalidArgsError{Tool: t.name, Problems: []string{decodeProblem(err)}}
	}
	return in, nil
}

// DecodeTargets is the Targets step ([helikon.Targeter]) of a tool built on
// t: it validates and decodes args as [Tool.Decode] does, returning its
// error, and returns the targets report gives for the decoded value,
// carrying that value ([helikon.Targets.WithDecoded]). The permission
// pipeline hands the targets of an allowed call to [Tool.Invoke], which then
// runs the function on the same value: the arguments are validated and
// decoded once per call.
//
// The function gets the very value report saw; a checked call invoked twice
// gets it twice, so the function must not change what the value's slices,
// maps or pointers refer to.
func (t *Tool[C, In, Out]) DecodeTargets(args json.RawMessage, report func(In) helikon.Targets) (helikon.Targets, error) {
	in, err := t.Decode(args)
	if err != nil {
		return helikon.Targets{}, err
	}
	return report(in).WithDecoded(args, decodedArgs[C, In, Out]{t, in}), nil
}

// decodedArgs is the value [Tool.DecodeTargets] stores: the decoded
// arguments and the tool that decoded them, since another tool with the
// same input type may have another schema (defaults, unknown fields).
type decodedArgs[C, In, Out any] struct {
	tool *Tool[C, In, Out]
	in   In
}

// decoded returns the arguments t's DecodeTargets decoded for exactly args,
// when tg carries them.
func (t *Tool[C, In, Out]) decoded(tg *helikon.Targets, args json.RawMessage) (In, bool) {
	v, _ := tg.Decoded(args)
	d, ok := v.(decodedArgs[C, In, Out])
	if !ok || d.tool != t {
		var zero In
		return zero, false
	}
	return d.in, true
}

func (t *Tool[C, In, Out]) encode(out Out) (json.RawMessage, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, helikon.Other(fmt.Errorf("tool %s: encoding its result: %w", t.name, err))
	}
	if t.outCheck != nil && !t.outCheck.ValidRaw(b) {
		var generic any
		if err := json.Unmarshal(b, &generic); err != nil {
			return nil, helikon.Other(fmt.Errorf("tool %s: re-reading its result: %w", t.name, err))
		}
		if problems := t.outCheck.Validate(generic); len(problems) > 0 {
			return nil, helikon.Other(fmt.Errorf("tool %s returned a result that does not match its output schema (a bug in the tool): %s", t.name, strings.Join(problems, "; ")))
		}
	}
	return b, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func decodeProblem(err error) string {
	if ute, ok := err.(*json.UnmarshalTypeError); ok && ute.Field != "" {
		return fmt.Sprintf("field %s cannot hold %s", strconv.Quote(ute.Field), ute.Value)
	}
	return err.Error()
}
