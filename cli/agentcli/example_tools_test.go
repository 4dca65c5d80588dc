package agentcli

import (
	"flag"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
)

// The example tools, registered in the tests only (the shipped binary does
// not carry them), are the budget-assistant tools of examples/: typed function
// tools that need nothing but the CLI, so the tool contract and the
// permission pipeline can be exercised end to end on any machine.

type lookupSpendingArgs struct {
	Category string `json:"category" jsonschema:"spending category, e.g. Dining"`
	Month    string `json:"month" jsonschema:"month in YYYY-MM form"`
}

type lookupSpendingOut struct {
	Total float64 `json:"total" jsonschema:"total spent in the category this month, in dollars"`
	Count int     `json:"count" jsonschema:"number of transactions"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first amount"`
	B float64 `json:"b" jsonschema:"the second amount"`
}

type addOut struct {
	Total float64 `json:"total"`
}

func init() {
	RegisterTools(&ToolProvider{
		Names:   []string{"lookup_spending", "add"},
		Example: true,
		Flags: func(*flag.FlagSet) ToolBuilder {
			return func(_ *ToolEnv, name string) (helikon.Tool[App], error) {
				if name == "add" {
					return functiontool.New("add", "Add two amounts of money.",
						func(_ *helikon.ToolContext[App], in addArgs) (addOut, error) {
							return addOut{Total: in.A + in.B}, nil
						}, &functiontool.Options{Effect: helikon.EffectReadOnly})
				}
				return functiontool.New("lookup_spending", "Look up the user's total spending and transaction count for a category in a month.",
					func(_ *helikon.ToolContext[App], in lookupSpendingArgs) (lookupSpendingOut, error) {
						switch strings.ToLower(in.Category) {
						case "dining":
							return lookupSpendingOut{Total: 312.40, Count: 18}, nil
						case "groceries":
							return lookupSpendingOut{Total: 540.10, Count: 9}, nil
						}
						return lookupSpendingOut{}, nil
					}, &functiontool.Options{Effect: helikon.EffectReadOnly})
			}
		},
	})
}
