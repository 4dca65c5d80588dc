package agentcli

import (
	"flag"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/toolbox"
)

func init() {
	RegisterTools(&ToolProvider{
		Names: []string{"Read", "Write", "Edit"},
		Flags: func(fs *flag.FlagSet) ToolBuilder {
			maxWrite := fs.Int64("max-write-bytes", filetool.DefaultMaxWriteBytes, "Write and Edit: the largest content or file, in `BYTES`")
			return func(te *ToolEnv, name string) (helikon.Tool[App], error) {
				ws, err := te.Workspace()
				if err != nil {
					return nil, err
				}
				return toolbox.NewTool[App](ws, name, &toolbox.ToolOptions{MaxWriteBytes: *maxWrite})
			}
		},
	})
}
