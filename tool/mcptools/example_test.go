package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/tool/mcptools"
)

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addResult struct {
	Total float64 `json:"total"`
}

// Serve helikon tools to MCP clients. Here the client is the go-sdk's,
// connected in memory; a real server runs on mcp.StdioTransport or
// mcptools.ServeHTTP.
func ExampleNewServer() {
	ctx := context.Background()
	add := functiontool.Must(functiontool.New("add", "Add two amounts.",
		func(_ *helikon.ToolContext[struct{}], in addArgs) (addResult, error) {
			return addResult{Total: in.A + in.B}, nil
		}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	srv, err := mcptools.NewServer(helikon.MustToolset[struct{}](add), &mcptools.ServerOptions[struct{}]{
		Mode: helikon.ModePlan, // only read-only tools run
	})
	if err != nil {
		log.Fatal(err)
	}

	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": "one"}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"total":3}
	// true invalid arguments for tool add: missing required field "b" (a number); field "a" must be a number, got string "one". Fix the arguments to match the tool's schema and call add again.
}

// Use the tools of an MCP server as helikon tools.
func ExampleConnect() {
	ctx := context.Background()

	// Any MCP server; here one written with the go-sdk, in memory.
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greet someone.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name}}}, nil, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}

	src, err := mcptools.Connect[struct{}](ctx, mcptools.Transport(ct), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	tools, err := src.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	greet := tools[0]
	out, err := greet.Invoke(helikon.NewToolContext(ctx, struct{}{}, nil), json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(greet.Name(), helikon.EffectOf(greet), string(out), err)
	// Output:
	// greet read_only "Hello, Ada" <nil>
}

// An agent whose tools come from an MCP server spawned as a process (the
// form `helikon run --mcp 'CMD ARGS'` uses). A Source is an
// llmagent.ToolSource: the agent sees the server's current tools at the start
// of every run, through the run's permission pipeline.
func ExampleCommand() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	src, err := mcptools.Connect[struct{}](ctx, mcptools.Command("npx -y @modelcontextprotocol/server-everything"),
		&mcptools.ClientOptions{Prefix: "everything_"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	var llm model.LLM // a provider's model
	assistant, err := llmagent.NewBuilder[struct{}]().Name("assistant").Model(llm).ToolSource(src).Build()
	if err != nil {
		log.Fatal(err)
	}
	_ = assistant
}

// Serve the same tools over streamable HTTP on loopback, with a bearer
// token.
func ExampleServeHTTP() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv, err := mcptools.NewServer(helikon.MustToolset[struct{}](), nil)
	if err != nil {
		log.Fatal(err)
	}
	err = mcptools.ServeHTTP(ctx, srv, &mcptools.HTTPOptions{Addr: "127.0.0.1:8080", Token: os.Getenv("MCP_TOKEN")}, nil)
	if err != nil {
		log.Fatal(err)
	}
}
