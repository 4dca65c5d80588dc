package filetool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/filetool"
	"github.com/paigasus/helikon/workspace/execfs"
)

// BenchmarkRemoteRoundTrip is BenchmarkSmallFileRoundTrip on a remote
// file system (package execfs, each exec a local /bin/sh process), through
// the permission check, so that the tools check where a link leads: the
// time of one call and, as execs/op, the round trips it costs a remote
// workspace.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("a line of a small source file, about as long as code lines are\n", 40)
	if err := os.WriteFile(filepath.Join(root, "small.txt"), []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	r := &execRunner{}
	fsys, err := execfs.New(context.Background(), r, root, nil)
	if err != nil {
		b.Fatal(err)
	}
	perms := &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Read"), helikon.MustParseRule("Write"), helikon.MustParseRule("Edit")}}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	for _, bc := range []struct {
		name string
		tool helikon.Tool[struct{}]
		args func(i int) json.RawMessage
	}{
		{"Read", filetool.NewRead[struct{}](fsys, nil), func(int) json.RawMessage {
			return json.RawMessage(`{"path":"small.txt"}`)
		}},
		{"Write", filetool.NewWrite[struct{}](fsys, nil), func(int) json.RawMessage {
			return json.RawMessage(`{"path":"out.txt","content":` + strconv.Quote(text[:1024]) + `}`)
		}},
		{"Edit", filetool.NewEdit[struct{}](fsys, nil), func(i int) json.RawMessage {
			from, to := "a line of", "A LINE of"
			if i%2 == 1 {
				from, to = to, from
			}
			return json.RawMessage(`{"path":"small.txt","old_string":"` + from + `","new_string":"` + to + `","replace_all":true}`)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			before := r.execs.Load()
			for b.Loop() {
				if _, err := helikon.CallTool(tc, perms, bc.tool, bc.args(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(r.execs.Load()-before)/float64(b.N), "execs/op")
		})
	}
}
