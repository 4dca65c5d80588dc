package llmagent_test

import (
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/tool/mcptools"
)

// The tools of an MCP server plug into an agent as a tool source.
var _ llmagent.ToolSource[App] = (*mcptools.Source[App])(nil)
