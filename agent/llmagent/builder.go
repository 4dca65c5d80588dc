package llmagent

import (
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/model"
)

// Builder builds an [Agent] step by step, for call sites that read better
// as a chain. It only fills a [Config]; Build calls [New].
//
//	agent, err := llmagent.NewBuilder[struct{}]().
//		Name("budget-assistant").
//		Model(model).
//		Instructions("You are a budgeting assistant.").
//		Tools(lookupSpending, budgetStatus).
//		Build()
type Builder[C any] struct {
	cfg Config[C]
}

// NewBuilder returns an empty builder for agents with application context C.
func NewBuilder[C any]() *Builder[C] { return &Builder[C]{} }

// Name sets the agent's name.
func (b *Builder[C]) Name(name string) *Builder[C] { b.cfg.Name = name; return b }

// Description sets the agent's description.
func (b *Builder[C]) Description(d string) *Builder[C] { b.cfg.Description = d; return b }

// Model sets the model.
func (b *Builder[C]) Model(m model.LLM) *Builder[C] { b.cfg.Model = m; return b }

// Instructions sets the system prompt.
func (b *Builder[C]) Instructions(s string) *Builder[C] { b.cfg.Instructions = s; return b }

// Tool adds one tool.
func (b *Builder[C]) Tool(t helikon.Tool[C]) *Builder[C] {
	b.cfg.Tools = append(b.cfg.Tools, t)
	return b
}

// Tools adds tools.
func (b *Builder[C]) Tools(ts ...helikon.Tool[C]) *Builder[C] {
	b.cfg.Tools = append(b.cfg.Tools, ts...)
	return b
}

// Toolset adds every tool of s.
func (b *Builder[C]) Toolset(s *helikon.Toolset[C]) *Builder[C] {
	b.cfg.Tools = append(b.cfg.Tools, s.Tools()...)
	return b
}

// ToolSource adds a source of tools resolved at the start of each run.
func (b *Builder[C]) ToolSource(s ToolSource[C]) *Builder[C] {
	b.cfg.ToolSources = append(b.cfg.ToolSources, s)
	return b
}

// SubAgent adds a sub-agent, exposed to the model as a tool.
func (b *Builder[C]) SubAgent(a agent.Agent[C]) *Builder[C] {
	b.cfg.SubAgents = append(b.cfg.SubAgents, a)
	return b
}

// Settings sets the model settings.
func (b *Builder[C]) Settings(s model.Settings) *Builder[C] { b.cfg.Settings = s; return b }

// MaxTurns sets the turn limit.
func (b *Builder[C]) MaxTurns(n int) *Builder[C] { b.cfg.MaxTurns = n; return b }

// MaxParallelTools sets how many tool calls of a turn may run at once.
func (b *Builder[C]) MaxParallelTools(n int) *Builder[C] { b.cfg.MaxParallelTools = n; return b }

// RepairBudget sets in how many turns in a row invalid calls of a tool are
// fed back for repair.
func (b *Builder[C]) RepairBudget(n int) *Builder[C] { b.cfg.RepairBudget = n; return b }

// Build builds the agent.
func (b *Builder[C]) Build() (*Agent[C], error) { return New(b.cfg) }
