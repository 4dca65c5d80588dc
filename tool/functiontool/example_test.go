package functiontool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
)

type LookupSpendingArgs struct {
	Category string `json:"category" jsonschema:"spending category, e.g. Dining"`
	Month    string `json:"month" jsonschema:"month in YYYY-MM form"`
}

type LookupSpendingOut struct {
	Total float64 `json:"total" jsonschema:"total spent in the category this month, in dollars"`
	Count int     `json:"count" jsonschema:"number of transactions"`
}

func lookupSpending(_ *helikon.ToolContext[struct{}], in LookupSpendingArgs) (LookupSpendingOut, error) {
	if strings.EqualFold(in.Category, "dining") {
		return LookupSpendingOut{Total: 312.40, Count: 18}, nil
	}
	return LookupSpendingOut{}, nil
}

func Example() {
	tool, err := functiontool.New("lookup_spending",
		"Look up the user's total spending and transaction count for a category in a month.",
		lookupSpending, &functiontool.Options{Effect: helikon.EffectReadOnly})
	if err != nil {
		panic(err)
	}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)

	out, err := tool.Invoke(tc, json.RawMessage(`{"category":"Dining","month":"2026-11"}`))
	fmt.Println(string(out), err)

	_, err = tool.Invoke(tc, json.RawMessage(`{"category":"Dining","month":11}`))
	fmt.Println(helikon.KindOf(err))
	for _, p := range helikon.SchemaErrors(err) {
		fmt.Println(p)
	}
	// Output:
	// {"total":312.4,"count":18} <nil>
	// invalid_args
	// field "month" must be a string, got integer 11
}
