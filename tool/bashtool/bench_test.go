package bashtool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/tool/bashtool"
)

// nopBackend runs nothing: it lets a benchmark measure what the Bash tool
// and the pipeline spend on a call, without a process start that costs a
// thousand times more.
type nopBackend struct{ dir string }

func (n nopBackend) Run(context.Context, *backend.Request) (*backend.Result, error) {
	return &backend.Result{}, nil
}

func (nopBackend) Guarantees() backend.Guarantees {
	return backend.Guarantees{Label: "none (benchmark)"}
}

func (n nopBackend) Dir() string { return n.dir }

// BenchmarkBashCheckedCall measures a Bash call on the path every caller
// takes (helikon.CallTool): the JSON check, the tool's targets (the shell
// analysis), the pipeline with its guards and an allow rule, the allow and
// deny lists, and the call, over a backend that runs nothing. heredoc
// writes 64 KiB through a here-document, where the arguments' size counts.
func BenchmarkBashCheckedCall(b *testing.B) {
	for _, bc := range []struct{ name, command string }{
		{"typical", "cd sub && go test ./... 2>&1 | grep -v '^ok' | head -20 > out.txt"},
		{"heredoc", "cat > notes.txt <<'EOF'\n" + strings.Repeat("a line of notes that the model writes\n", 64<<10/38) + "EOF"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tool, err := bashtool.New[app](nopBackend{dir: b.TempDir()}, &bashtool.Options{
				AllowCommands: []string{"cd", "go test", "grep", "head", "cat", ">"},
				DenyCommands:  []string{"rm", "sudo"},
			})
			if err != nil {
				b.Fatal(err)
			}
			perms := &helikon.Permissions{Home: "/home/bench", Allow: []helikon.Rule{{Tool: bashtool.Name}}}
			tc := helikon.NewToolContext(context.Background(), app{}, nil)
			args, err := json.Marshal(bashtool.Args{Command: bc.command})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := helikon.CallTool(tc, perms, tool, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
