package mcptools_test

import (
	"context"
	"errors"
	"log"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/tool/mcptools"
)

// Give an agent the tools of a stdio MCP server started in the OS sandbox:
// it reads and writes root only, sees none of the home directory or the
// environment (PATH only), has no network, and dies with everything it
// started when the source is closed. Where the sandbox is unavailable this
// fails closed rather than start the server unsandboxed. (Not run: it needs
// npx and the network to fetch the server; TestContainedCommand runs the
// same calls with a test server.)
func ExampleContainedCommand() {
	ctx := context.Background()
	root := "/path/to/project"
	sb, err := ossandbox.New(root, &ossandbox.Options{Timeout: backend.MaxLifetime, AllowNetwork: true})
	if errors.Is(err, backend.ErrUnavailable) {
		log.Fatalf("cannot contain the MCP server here: %v", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	src, err := mcptools.Connect[struct{}](ctx, mcptools.ContainedCommand(sb, "npx -y @modelcontextprotocol/server-filesystem "+root, nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	// src is an llmagent.ToolSource; its tools go through the permission
	// pipeline as any helikon tool.
}
