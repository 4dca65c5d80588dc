package agentcli

import (
	"flag"
	"fmt"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/toolbox"
)

func init() {
	RegisterTools(&ToolProvider{
		Names: append([]string{bashtool.Name}, toolbox.ProcessTools...),
		Flags: func(fs *flag.FlagSet) ToolBuilder {
			deny := cli.Multi(fs, "deny-command", "Bash: refuse commands that run `PROGRAM` (a name such as rm, or a name and leading arguments such as \"git push\"; repeatable)")
			allow := cli.Multi(fs, "allow-command", "Bash: run only commands whose every program matches `PROGRAM` (same form; repeatable)")
			return func(te *ToolEnv, name string) (helikon.Tool[App], error) {
				ws, err := te.Workspace()
				if err != nil {
					return nil, err
				}
				o := &toolbox.ToolOptions{Bash: &bashtool.Options{AllowCommands: *allow, DenyCommands: *deny}}
				procs, err := te.Processes()
				if err != nil {
					return nil, err
				}
				if procs != nil {
					o.ProcessTable = procs
				} else if name != bashtool.Name {
					return nil, fmt.Errorf("%s needs background commands: set --max-processes", name)
				}
				return toolbox.NewTool[App](ws, name, o)
			}
		},
	})
}
