package agentcli

import (
	"flag"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/toolbox"
)

func init() {
	RegisterTools(&ToolProvider{
		Names: []string{bashtool.Name},
		Flags: func(fs *flag.FlagSet) ToolBuilder {
			deny := cli.Multi(fs, "deny-command", "Bash: refuse commands that run `PROGRAM` (a name such as rm, or a name and leading arguments such as \"git push\"; repeatable)")
			allow := cli.Multi(fs, "allow-command", "Bash: run only commands whose every program matches `PROGRAM` (same form; repeatable)")
			return func(te *ToolEnv, _ string) (helikon.Tool[App], error) {
				ws, err := te.Workspace()
				if err != nil {
					return nil, err
				}
				return toolbox.NewTool[App](ws, bashtool.Name, &toolbox.ToolOptions{Bash: &bashtool.Options{AllowCommands: *allow, DenyCommands: *deny}})
			}
		},
	})
}
