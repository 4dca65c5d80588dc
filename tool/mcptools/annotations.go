package mcptools

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
)

// Annotations returns the MCP tool annotations describing effect e:
//
//	effect        readOnlyHint  destructiveHint  idempotentHint  openWorldHint
//	read_only     true          false            true            false
//	write         false         true             false           false
//	side_effect   false         true             false           true
//
// A write tool changes files inside its sandbox and nothing else, so its
// world is closed; a side-effect tool may run programs or reach the network,
// so its world is open. [EffectOf] reads the same table backwards, which makes
// the mapping round-trip: EffectOf(Annotations(e)) == e for every effect.
func Annotations(e helikon.Effect) *mcp.ToolAnnotations {
	f, t := false, true
	switch e {
	case helikon.EffectReadOnly:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f}
	case helikon.EffectWrite:
		return &mcp.ToolAnnotations{DestructiveHint: &t, OpenWorldHint: &f}
	default:
		return &mcp.ToolAnnotations{DestructiveHint: &t, OpenWorldHint: &t}
	}
}

// EffectOf returns the helikon effect described by MCP tool annotations:
// readOnlyHint true is read-only; otherwise an explicit openWorldHint false
// is write (the tool changes only its own closed world); anything else,
// including no annotations at all, is a side effect, the safe default.
//
// Annotations are hints from the server; see the package documentation on
// trusting them. A [Source] takes a tool as write only when the tool also
// carries the [MetaEffect] mark of a helikon server; it takes any other tool
// EffectOf calls write as a side effect.
func EffectOf(a *mcp.ToolAnnotations) helikon.Effect {
	switch {
	case a == nil:
		return helikon.EffectSideEffect
	case a.ReadOnlyHint:
		return helikon.EffectReadOnly
	case a.OpenWorldHint != nil && !*a.OpenWorldHint:
		return helikon.EffectWrite
	}
	return helikon.EffectSideEffect
}
