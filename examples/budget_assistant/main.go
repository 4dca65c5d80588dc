// Command budget_assistant is the seed's budget assistant: an LLM agent with
// two typed tools, lookup_spending and budget_status, on OpenAI.
//
//	OPENAI_API_KEY=... go run ./examples/budget_assistant "How is my dining budget this month?"
//
// OPENAI_MODEL picks the model (default gpt-4.1-mini); OPENAI_BASE_URL points
// it at any OpenAI-compatible server.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/tool/functiontool"
)

// LookupSpendingArgs are the arguments of lookup_spending.
type LookupSpendingArgs struct {
	Category string `json:"category" jsonschema:"spending category, e.g. Dining"`
	Month    string `json:"month" jsonschema:"month in YYYY-MM form"`
}

// LookupSpendingOut is the result of lookup_spending.
type LookupSpendingOut struct {
	Total float64 `json:"total" jsonschema:"total spent in the category this month, in dollars"`
	Count int     `json:"count" jsonschema:"number of transactions"`
}

func lookupSpending(_ *helikon.ToolContext[struct{}], args LookupSpendingArgs) (LookupSpendingOut, error) {
	switch strings.ToLower(args.Category) {
	case "dining":
		return LookupSpendingOut{Total: 312.40, Count: 18}, nil
	case "groceries":
		return LookupSpendingOut{Total: 540.10, Count: 9}, nil
	}
	return LookupSpendingOut{}, nil
}

// BudgetStatusArgs are the arguments of budget_status.
type BudgetStatusArgs struct {
	Category string `json:"category" jsonschema:"spending category, e.g. Dining"`
}

// BudgetStatusOut is the result of budget_status.
type BudgetStatusOut struct {
	Limit float64 `json:"limit" jsonschema:"the monthly budget for the category, in dollars"`
}

func budgetStatus(_ *helikon.ToolContext[struct{}], args BudgetStatusArgs) (BudgetStatusOut, error) {
	switch strings.ToLower(args.Category) {
	case "dining":
		return BudgetStatusOut{Limit: 400}, nil
	case "groceries":
		return BudgetStatusOut{Limit: 600}, nil
	}
	return BudgetStatusOut{}, helikon.InvalidArgs(fmt.Sprintf("category: no budget for %q; use Dining or Groceries", args.Category))
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	prompt := "How is my dining budget for 2026-10?"
	if len(args) > 0 {
		prompt = strings.Join(args, " ")
	}
	modelID := getenv("OPENAI_MODEL")
	if modelID == "" {
		modelID = "gpt-4.1-mini"
	}
	llm, err := openai.New(modelID, &openai.Options{Getenv: getenv})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	assistant, err := llmagent.NewBuilder[struct{}]().
		Name("budget-assistant").
		Model(llm).
		Instructions("You are a budgeting assistant. Use the tools to look up spending and budgets; answer in one or two sentences.").
		Tool(functiontool.Must(functiontool.New("lookup_spending", "Look up the user's total spending and transaction count for a category in a month.", lookupSpending, &functiontool.Options{Effect: helikon.EffectReadOnly}))).
		Tool(functiontool.Must(functiontool.New("budget_status", "Get the monthly budget limit of a category.", budgetStatus, &functiontool.Options{Effect: helikon.EffectReadOnly}))).
		Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r, err := runner.New(runner.Config[struct{}]{Agent: assistant})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	res, err := agent.Collect(r.Run(ctx, "", prompt))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, res.Text)
	fmt.Fprintf(stderr, "usage: %d input tokens, %d output tokens, %d model calls\n", res.Usage.InputTokens, res.Usage.OutputTokens, res.Usage.Requests)
	return 0
}
