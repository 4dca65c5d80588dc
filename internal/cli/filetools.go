package cli

import (
	"flag"
	"sync"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/filetool"
	"github.com/paigasus/helikon/sandbox"
)

func init() {
	RegisterTools(&ToolProvider{
		Names: []string{"Read", "Write", "Edit"},
		Flags: func(fs *flag.FlagSet) ToolBuilder {
			maxWrite := fs.Int64("max-write-bytes", filetool.DefaultMaxWriteBytes, "Write and Edit: the largest content or file, in `BYTES`")
			return func(te *ToolEnv, name string) (helikon.Tool[App], error) {
				sb, err := fileSandbox(te)
				if err != nil {
					return nil, err
				}
				switch name {
				case "Read":
					return filetool.NewRead[App](sb, nil), nil
				case "Write":
					return filetool.NewWrite[App](sb, &filetool.WriteOptions{MaxBytes: *maxWrite}), nil
				default:
					return filetool.NewEdit[App](sb, &filetool.EditOptions{MaxFileBytes: *maxWrite}), nil
				}
			}
		},
	})
}

// fileSandboxes holds the sandbox of each ToolEnv, so that the file tools of
// one command share one Sandbox (and with it the per-path write lock that
// makes concurrent Edits of a file all apply). A CLI process builds one or
// two ToolEnvs, so the map stays tiny; sandboxes are released on exit.
var fileSandboxes = struct {
	sync.Mutex
	m map[*ToolEnv]*sandbox.Sandbox
}{m: map[*ToolEnv]*sandbox.Sandbox{}}

func fileSandbox(te *ToolEnv) (*sandbox.Sandbox, error) {
	fileSandboxes.Lock()
	defer fileSandboxes.Unlock()
	if sb, ok := fileSandboxes.m[te]; ok {
		return sb, nil
	}
	sb, err := sandbox.Open(te.Root)
	if err != nil {
		return nil, err
	}
	fileSandboxes.m[te] = sb
	return sb, nil
}
