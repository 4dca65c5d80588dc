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
	"github.com/paigasus/helikon/tool/websearch"
)

func init() {
	cli.RegisterAgent("tool", runTool)
}

// maxToolInput bounds the arguments read from stdin.
const maxToolInput = 64 << 20

// ErrorJSON is the JSON form of a tool error on stdout.
type ErrorJSON struct {
	Kind         helikon.ErrorKind `json:"kind"`                    // invalid_args, denied, other, or usage (exit 125: the command line, or a protection unavailable here)
	Message      string            `json:"message"`                 // the error's message
	SchemaErrors []string          `json:"schema_errors,omitempty"` // invalid_args: every problem found
}

func runTool(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("tool", "tool NAME [ARGS_JSON | -] [flags]\n\nInvokes one built-in tool once. ARGS_JSON is the tool's JSON arguments;\nwithout it (or with -) they are read from stdin. The output JSON goes to\nstdout, and so does a failure, as {\"error\":{\"kind\":…,\"message\":…}}: exit\n2 invalid_args, 3 denied, 1 other, 125 usage (the command line, or a\nprotection unavailable here); a call that timed out (Bash's timed_out,\nWebFetch's timeout) exits 124.\n\nYou are the one asking for the call: in the default mode it runs unless a\nrule, a guard or the policy files stop it (a guard that asks is a denial,\nas there is no one else to ask). helikon run, where a model asks, asks you\nbefore anything that is not read-only.", env.Stderr)
	common := cli.AddCommonFlags(fs)
	bflags := cli.AddBackendFlags(fs)
	tflags := AddToolFlags(fs)
	wsSession := fs.String("session", "", "with a remote --backend (docker, forkd): call the tool in the workspace of session `ID` (attached to when it exists; default: a new one, removed at exit unless --keep-workspace)")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		if status == cli.ExitUsage {
			// The flag's error and the usage went to stderr; stdout still
			// gets the JSON error tool promises.
			writeErrorJSON(env, ErrorJSON{Kind: kindUsage, Message: "tool: invalid flags (stderr says which)"})
		}
		return status
	}
	if err := validWorkspaceSession(*wsSession); err != nil {
		return usageJSON(env, "tool: %v", err)
	}
	if len(pos) == 0 || len(pos) > 2 {
		return usageJSON(env, "tool: want a tool name and optional JSON arguments; tools: %s", strings.Join(tflags.Names(true), ", "))
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
			return usageJSON(env, "tool: arguments on stdin exceed %d bytes", maxToolInput)
		}
		raw = b
	}
	root, err := common.RootDir()
	if err != nil {
		return usageJSON(env, "tool: %v", err)
	}
	perms, mode, err := common.Permissions()
	if err != nil {
		return usageJSON(env, "tool: %v", err)
	}
	if err := common.CheckRules(perms, tflags.Names(true), false); err != nil {
		return usageJSON(env, "tool: %v", err)
	}
	te := &ToolEnv{Ctx: ctx, Env: env, Root: root, Common: common, BackendFlags: bflags, Session: *wsSession}
	defer te.Close()
	t, err := tflags.Build(te, name)
	if err != nil {
		return usageJSON(env, "tool: %v", err)
	}
	out, err := CallTool(ctx, t, perms, mode, raw)
	return PrintToolResult(env, out, err)
}

// usageJSON reports a usage error of a command that promises JSON
// errors: {"error":{"kind":"usage",…}} on stdout, the message on stderr,
// exit 125.
func usageJSON(env *cli.Env, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	writeErrorJSON(env, ErrorJSON{Kind: kindUsage, Message: msg})
	return cli.Failf(env, cli.ExitUsage, "%s", msg)
}

// writeErrorJSON writes {"error":ej} and a newline to stdout.
func writeErrorJSON(env *cli.Env, ej ErrorJSON) {
	b, _ := json.Marshal(map[string]ErrorJSON{"error": ej})
	fmt.Fprintf(env.Stdout, "%s\n", b)
}

// kindUsage is the kind of a JSON error that is not the tool's: the
// command line was wrong, or a protection it asks for is unavailable.
const kindUsage helikon.ErrorKind = "usage"

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
		// A result that says it timed out (Bash's) is README's timeout.
		var r struct {
			TimedOut bool `json:"timed_out"`
		}
		if json.Unmarshal(out, &r) == nil && r.TimedOut {
			return cli.ExitTimeout
		}
		return cli.ExitOK
	}
	ej := ErrorJSON{Kind: helikon.KindOf(err), Message: err.Error(), SchemaErrors: helikon.SchemaErrors(err)}
	status := cli.ExitOther
	switch {
	case ej.Kind == helikon.KindInvalidArgs:
		status = cli.ExitInvalidArgs
	case ej.Kind == helikon.KindDenied:
		status = cli.ExitDenied
	case errors.Is(err, backend.ErrUnavailable), errors.Is(err, websearch.ErrNoAPIKey):
		ej.Kind, status = kindUsage, cli.ExitUsage
	case errors.Is(err, context.DeadlineExceeded):
		status = cli.ExitTimeout
	}
	writeErrorJSON(env, ej)
	fmt.Fprintf(env.Stderr, "helikon: %s\n", err)
	return status
}
