package cli

import (
	"flag"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/filetool"
	"github.com/paigasus/helikon/workspace/local"
)

func init() {
	RegisterTools(&ToolProvider{
		Names: []string{"Read", "Write", "Edit"},
		Flags: func(fs *flag.FlagSet) ToolBuilder {
			maxWrite := fs.Int64("max-write-bytes", filetool.DefaultMaxWriteBytes, "Write and Edit: the largest content or file, in `BYTES`")
			return func(te *ToolEnv, name string) (helikon.Tool[App], error) {
				sb, err := te.Sandbox()
				if err != nil {
					return nil, err
				}
				switch name {
				case "Read":
					return filetool.NewRead[App](local.NewFS(sb), nil), nil
				case "Write":
					return filetool.NewWrite[App](local.NewFS(sb), &filetool.WriteOptions{MaxBytes: *maxWrite}), nil
				default:
					return filetool.NewEdit[App](local.NewFS(sb), &filetool.EditOptions{MaxBytes: *maxWrite}), nil
				}
			}
		},
	})
}
