package agentcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
)

func init() {
	cli.RegisterAgent("tool", runTool)
}

// maxToolInput bounds the arguments read from stdin.
const maxToolInput = 64 << 20

// ErrorJSON is the JSON form of a tool error on stdout.
type ErrorJSON struct {
	Kind         helikon.ErrorKind `json:"kind"`                    // invalid_args, denied or other
	Message      string            `json:"message"`                 // the error's message
	SchemaErrors []string          `json:"schema_errors,omitempty"` // invalid_args: every problem found
}

func runTool(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("tool", "tool NAME [ARGS_JSON | -] [flags]\n\nInvokes one built-in tool once. ARGS_JSON is the tool's JSON arguments;\nwithout it (or with -) they are read from stdin. The output JSON goes to\nstdout; a failure prints {\"error\":{…}} and exits 2 (invalid arguments),\n3 (denied) or 1 (other).", env.Stderr)
	common := cli.AddCommonFlags(fs)
	bflags := cli.AddBackendFlags(fs)
	tflags := AddToolFlags(fs)
	wsSession := fs.String("session", "", "with a remote --backend (docker, forkd): call the tool in the workspace of session `ID` (attached to when it exists; default: a new one, removed at exit unless --keep-workspace)")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		return status
	}
	if err := validWorkspaceSession(*wsSession); err != nil {
		return cli.Failf(env, cli.ExitUsage, "tool: %v", err)
	}
	if len(pos) == 0 || len(pos) > 2 {
		return cli.Failf(env, cli.ExitUsage, "tool: want a tool name and optional JSON arguments; tools: %s", strings.Join(tflags.Names(true), ", "))
	}
	name := pos[0]
	var raw []byte
	if len(pos) == 2 && pos[1] != "-" {
		raw = []byte(pos[1])
	} else {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, maxToolInput+1))
		if err != nil {
			return cli.Failf(env, cli.ExitOther, "tool: reading arguments from stdin: %v", err)
		}
		if len(b) > maxToolInput {
			return cli.Failf(env, cli.ExitUsage, "tool: arguments on stdin exceed %d bytes", maxToolInput)
		}
		raw = b
	}
	root, err := common.RootDir()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "tool: %v", err)
	}
	perms, mode, err := common.Permissions()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "tool: %v", err)
	}
	if err := common.CheckRules(perms, tflags.Names(true), false); err != nil {
		return cli.Failf(env, cli.ExitUsage, "tool: %v", err)
	}
	te := &ToolEnv{Ctx: ctx, Env: env, Root: root, Common: common, BackendFlags: bflags, Session: *wsSession}
	defer te.Close()
	t, err := tflags.Build(te, name)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "tool: %v", err)
	}
	out, err := CallTool(ctx, t, perms, mode, raw)
	return PrintToolResult(env, out, err)
}

// CallTool checks a call of t with the permission pipeline and invokes it
// (see [helikon.CallTool]); raw empty is the empty object.
func CallTool(ctx context.Context, t helikon.Tool[App], perms *helikon.Permissions, mode helikon.PermissionMode, raw []byte) (json.RawMessage, error) {
	return helikon.CallTool(helikon.NewToolContext(ctx, App{}, &helikon.RunConfig{Mode: mode}), perms, t, raw)
}

// PrintToolResult prints a tool's output or error as the tool command does
// and returns the exit status.
func PrintToolResult(env *cli.Env, out json.RawMessage, err error) int {
	if err == nil {
		env.Stdout.Write(out)
		fmt.Fprintln(env.Stdout)
		return cli.ExitOK
	}
	ej := ErrorJSON{Kind: helikon.KindOf(err), Message: err.Error(), SchemaErrors: helikon.SchemaErrors(err)}
	b, _ := json.Marshal(map[string]ErrorJSON{"error": ej})
	env.Stdout.Write(b)
	fmt.Fprintln(env.Stdout)
	fmt.Fprintf(env.Stderr, "helikon: %s\n", err)
	switch ej.Kind {
	case helikon.KindInvalidArgs:
		return cli.ExitInvalidArgs
	case helikon.KindDenied:
		return cli.ExitDenied
	}
	if errors.Is(err, backend.ErrUnavailable) {
		return cli.ExitUsage
	}
	return cli.ExitOther
}
