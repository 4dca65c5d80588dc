// Package genkitadapter gives Firebase Genkit (github.com/firebase/genkit/go,
// built and tested against v1.4.0) helikon's contained toolset: each tool of
// a [toolbox.Toolbox] as a Genkit tool (ai.NewTool with the helikon tool's
// own JSON schema), every call through the toolbox's permission pipeline,
// and a call that needs a person's approval as a Genkit interrupt that the
// application resumes with the person's answer.
//
//	tb, _ := toolbox.New[struct{}](ctx, &toolbox.Options{Root: dir, DeferAsks: true})
//	ts, _ := genkitadapter.New(tb)
//	resp, _ := genkit.Generate(ctx, g, ai.WithPrompt(p), ai.WithTools(ts.Tools()...))
//	for _, p := range resp.Interrupts() { part, _ := ts.Answer(p, toolbox.Yes) ... }
//	resp, _ = genkit.Generate(ctx, g, ai.WithMessages(resp.History()...), ai.WithTools(ts.Tools()...), ai.WithToolRestarts(part))
//
// It follows Genkit v1.4.0's ai/tools.go (NewTool, WithInputSchema,
// ToolContext.Interrupt, InterruptAs, RestartWith, WithResumedMetadata) and
// ai/generate.go (an interrupt ends Generate with the request marked
// "interrupt"; WithToolRestarts runs the tool again with "resumed").
//
// # What it guarantees
//
//   - A call runs only through [toolbox.Toolbox.Call]: deny rules, guards,
//     ask rules, allow rules, the mode and the policy decide it, and the
//     tools act in the toolbox's workspace (Bash in the OS sandbox unless
//     the toolbox was opened otherwise).
//   - An approval is used for the question it answers only: the resumed
//     call goes through the whole pipeline again, and the answer applies
//     when the pipeline asks the same question (same tool, same arguments,
//     same reason); any other question interrupts again. A restart without
//     an answer (a plain Restart) is asked again, never run.
//   - A denied call, invalid arguments or a failing tool reach the model as
//     the tool's output {"error": ..., "kind": ...}: Genkit ends the whole
//     Generate on a tool's error, and a denial is something the model
//     should read and work around.
//
// # What it does not guarantee
//
// The resumed metadata comes from the application, which is trusted: an
// application that answers Yes without asking anyone approves the call.
// Per session workspaces are the application's: it passes a session's
// toolbox in the context ([WithToolbox]); the adapter neither opens nor
// closes toolboxes. Streaming tool output is not offered (Genkit's tools
// return one value).
package genkitadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// resumed is the metadata [Toolset.Answer] restarts a tool with.
type resumed struct {
	Question toolbox.Question `json:"question"`
	Answer   toolbox.Answer   `json:"answer"`
}

// metaKey names the adapter's entry in Genkit's resumed metadata.
const metaKey = "helikon"

// ErrNotInterrupted is returned by [Toolset.Answer] for a part that is not
// a tool request this adapter interrupted.
var ErrNotInterrupted = errors.New("genkitadapter: not a tool request interrupted for approval by helikon: answer the parts of ModelResponse.Interrupts whose metadata holds a toolbox.Question")

// Toolset is a toolbox's tools as Genkit tools.
type Toolset struct {
	def   *toolbox.Toolbox[struct{}]
	tools []*ai.ToolDef[any, any]
}

type toolboxKey struct{}

// WithToolbox returns ctx whose calls run in tb instead of the toolbox
// given to [New]: one toolbox (one workspace) per Genkit session or user.
// tb must have the tools [New]'s has.
func WithToolbox(ctx context.Context, tb *toolbox.Toolbox[struct{}]) context.Context {
	return context.WithValue(ctx, toolboxKey{}, tb)
}

// New returns tb's tools as Genkit tools. tb should be opened with
// [toolbox.Options].DeferAsks, so that a call needing approval becomes an
// interrupt; without it such a call is denied (or asked through its
// Approver). Calls run in tb unless their context carries another toolbox
// ([WithToolbox]).
func New(tb *toolbox.Toolbox[struct{}]) (*Toolset, error) {
	if tb == nil {
		return nil, errors.New("genkitadapter: New needs a toolbox (toolbox.New)")
	}
	s := &Toolset{def: tb}
	for _, t := range tb.Toolset().Tools() {
		schema, err := schemaMap(t)
		if err != nil {
			return nil, err
		}
		name := t.Name()
		s.tools = append(s.tools, ai.NewTool(name, t.Description(), func(tc *ai.ToolContext, in any) (any, error) {
			return s.call(tc, name, in)
		}, ai.WithInputSchema(schema)))
	}
	return s, nil
}

// schemaMap is the helikon tool's JSON schema as the map Genkit takes.
func schemaMap(t helikon.Tool[struct{}]) (map[string]any, error) {
	b, err := json.Marshal(t.Schema())
	if err != nil {
		return nil, fmt.Errorf("genkitadapter: schema of %s: %w", t.Name(), err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("genkitadapter: schema of %s: %w", t.Name(), err)
	}
	return m, nil
}

// Tools returns the tools, for ai.WithTools.
func (s *Toolset) Tools() []ai.ToolRef {
	refs := make([]ai.ToolRef, len(s.tools))
	for i, t := range s.tools {
		refs[i] = t
	}
	return refs
}

// Answer returns the part that restarts the interrupted tool request with
// the person's answer, for ai.WithToolRestarts. part is one of
// ModelResponse.Interrupts' parts; its question is
// ai.InterruptAs[toolbox.Question](part).
func (s *Toolset) Answer(part *ai.Part, ans toolbox.Answer) (*ai.Part, error) {
	if part == nil || !part.IsInterrupt() {
		return nil, ErrNotInterrupted
	}
	q, ok := ai.InterruptAs[toolbox.Question](part)
	if !ok || q.Tool == "" {
		return nil, ErrNotInterrupted
	}
	for _, t := range s.tools {
		if t.Name() == part.ToolRequest.Name {
			meta := map[string]any{}
			if err := remarshal(map[string]any{metaKey: resumed{Question: q, Answer: ans}}, &meta); err != nil {
				return nil, err
			}
			return t.RestartWith(part, ai.WithResumedMetadata[any](meta))
		}
	}
	return nil, fmt.Errorf("%w (no tool %q here)", ErrNotInterrupted, part.ToolRequest.Name)
}

// call runs one tool request through the pipeline.
func (s *Toolset) call(tc *ai.ToolContext, name string, in any) (any, error) {
	args, err := json.Marshal(in)
	if err != nil {
		return errorOutput(helikon.InvalidArgs("the arguments are not JSON: " + err.Error())), nil
	}
	tb := s.def
	if t, ok := tc.Value(toolboxKey{}).(*toolbox.Toolbox[struct{}]); ok && t != nil {
		tb = t
	}
	ctx := context.Context(tc)
	if r, ok := tc.Resumed[metaKey]; ok {
		var res resumed
		if err := remarshal(r, &res); err != nil {
			return nil, fmt.Errorf("genkitadapter: resumed metadata of %s: %w", name, err)
		}
		ctx = toolbox.Resume(ctx, res.Question.Request(), res.Answer)
	}
	out, err := tb.Call(ctx, struct{}{}, name, args)
	var ask *toolbox.AskError
	switch {
	case errors.As(err, &ask):
		return nil, ai.InterruptWith(tc, ask.Question())
	case err != nil:
		return errorOutput(err), nil
	}
	return out, nil
}

// errorOutput is a tool error as the output the model reads.
func errorOutput(err error) map[string]any {
	return map[string]any{"error": err.Error(), "kind": string(helikon.KindOf(err))}
}

// remarshal converts v into dst through JSON: Genkit's metadata is JSON
// values (maps), the adapter's are structs.
func remarshal(v, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}
