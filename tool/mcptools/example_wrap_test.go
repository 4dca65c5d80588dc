package mcptools_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/mcptools"
)

// Relay an MCP server's tools to a host through the permission pipeline.
// Here the wrapped server is in memory; `helikon mcp wrap` dials
// mcptools.Contained(ossandboxBackend, argv, nil) instead, and serves the
// host on its stdio.
func ExampleWrap() {
	ctx := context.Background()
	up := mcp.NewServer(&mcp.Implementation{Name: "files"}, nil)
	type pathArgs struct {
		Path string `json:"path"`
	}
	for _, name := range []string{"read_file", "delete_file"} {
		mcp.AddTool(up, &mcp.Tool{Name: name, Description: name}, func(context.Context, *mcp.CallToolRequest, pathArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil, nil
		})
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := up.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}

	w, err := mcptools.Wrap(ctx, mcptools.Transport(ct), &mcptools.WrapOptions{
		Name:        "files",
		Permissions: &helikon.Permissions{Deny: helikon.MustParseRules("mcp__files__delete_file")},
	})
	if err != nil {
		log.Fatal(err)
	}
	hc, hs := mcp.NewInMemoryTransports()
	go w.Run(ctx, hs)
	host, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, hc, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close()

	for _, name := range []string{"read_file", "delete_file"} {
		res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"path": "a.txt"}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false read_file ran
	// true denied: mcp__files__delete_file is denied by rule mcp__files__delete_file. Do not retry the same call; choose another way or ask the user.
}
