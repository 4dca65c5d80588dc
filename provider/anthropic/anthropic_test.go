package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/anthropic"
	"github.com/paigasus/helikon/provider/anthropic/anthropictest"
	"github.com/paigasus/helikon/tool/functiontool"
)

type App = struct{}

type spendArgs struct {
	Category string `json:"category"`
}

var spendTool = functiontool.Must(functiontool.New("lookup_spending", "Look up spending.",
	func(tc *helikon.ToolContext[App], in spendArgs) (map[string]float64, error) {
		return map[string]float64{"total": 312.4}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly, NoOutputSchema: true}))

var budgetTool = functiontool.Must(functiontool.New("budget_status", "Budget of a category.",
	func(tc *helikon.ToolContext[App], in spendArgs) (map[string]float64, error) {
		return map[string]float64{"limit": 400}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly, NoOutputSchema: true}))

func newModel(t *testing.T, srv *anthropictest.Server) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New("claude-test", &anthropic.Options{APIKey: "sk-ant-test", BaseURL: srv.BaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTwoToolConversationWithParallelCalls(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Reply{Text: "Let me check.", ToolCalls: []anthropictest.ToolCall{
			{ID: "toolu_1", Name: "lookup_spending", Args: `{"category":"Dining"}`},
			{ID: "toolu_2", Name: "budget_status", Args: `{"category":"Dining"}`},
		}, InputTokens: 40, OutputTokens: 30},
		anthropictest.Reply{Text: "You spent $312.40 of $400.", InputTokens: 80, OutputTokens: 10},
	)
	defer srv.Close()
	a := llmagent.Must(llmagent.NewBuilder[App]().Name("budget").Model(newModel(t, srv)).
		Instructions("You are a budgeting assistant.").Tools(spendTool, budgetTool).Build())
	r, _ := runner.New(runner.Config[App]{Agent: a})
	res, err := agent.Collect(r.Run(context.Background(), "", "How is my dining budget?"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "You spent $312.40 of $400." {
		t.Errorf("text = %q", res.Text)
	}
	if res.Usage.InputTokens != 120 || res.Usage.OutputTokens != 40 || res.Usage.Requests != 2 {
		t.Errorf("usage = %+v", res.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if h := reqs[0].Header; h.Get("X-Api-Key") != "sk-ant-test" && h.Get("Authorization") != "Bearer sk-ant-test" {
		t.Errorf("no key sent: %v", h)
	}
	first, second := reqs[0].Body, reqs[1].Body
	if first["max_tokens"] != float64(anthropic.DefaultMaxTokens) || first["stream"] != true {
		t.Errorf("max_tokens/stream = %v/%v", first["max_tokens"], first["stream"])
	}
	if sys := first["system"].([]any)[0].(map[string]any); sys["text"] != "You are a budgeting assistant." {
		t.Errorf("system = %v", sys)
	}
	tool := first["tools"].([]any)[0].(map[string]any)
	schema := tool["input_schema"].(map[string]any)
	if tool["name"] != "lookup_spending" || schema["type"] != "object" || !reflect.DeepEqual(schema["required"], []any{"category"}) || schema["additionalProperties"] != false {
		t.Errorf("tool = %v", tool)
	}
	msgs := second["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %v", msgs)
	}
	asst := msgs[1].(map[string]any)
	var blockTypes []string
	for _, b := range asst["content"].([]any) {
		blockTypes = append(blockTypes, b.(map[string]any)["type"].(string))
	}
	if asst["role"] != "assistant" || !reflect.DeepEqual(blockTypes, []string{"text", "tool_use", "tool_use"}) {
		t.Errorf("assistant = %v", asst)
	}
	if in := asst["content"].([]any)[1].(map[string]any)["input"].(map[string]any); in["category"] != "Dining" {
		t.Errorf("tool_use input %v", in)
	}
	results := msgs[2].(map[string]any)
	if results["role"] != "user" {
		t.Errorf("results role %v", results["role"])
	}
	for i, b := range results["content"].([]any) {
		bm := b.(map[string]any)
		if bm["type"] != "tool_result" || bm["tool_use_id"] != []string{"toolu_1", "toolu_2"}[i] {
			t.Errorf("result block %d = %v", i, bm)
		}
	}
}

func TestErrorResultsCarryIsError(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Reply{ToolCalls: []anthropictest.ToolCall{{ID: "toolu_1", Name: "lookup_spending", Args: `{}`}}},
		anthropictest.Reply{Text: "ok"},
	)
	defer srv.Close()
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "e", Model: newModel(t, srv), Tools: []helikon.Tool[App]{spendTool}}))
	r, _ := runner.New(runner.Config[App]{Agent: a})
	if _, err := agent.Collect(r.Run(context.Background(), "", "go")); err != nil {
		t.Fatal(err)
	}
	b := srv.Requests()[1].Body["messages"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	text := ""
	for _, c := range b["content"].([]any) {
		text += c.(map[string]any)["text"].(string)
	}
	if b["is_error"] != true || !strings.Contains(text, "category") {
		t.Errorf("tool_result = %v", b)
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Status: http.StatusTooManyRequests, RetryAfterMs: "250"}, anthropictest.Reply{Status: 529, RetryAfterMs: "10"}, anthropictest.Reply{Text: "ok"})
	defer srv.Close()
	resp, err := model.Generate(context.Background(), newModel(t, srv), &model.Request{Messages: []model.Message{model.UserMessage("hi")}})
	if err != nil || resp.Message.Text != "ok" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 250*time.Millisecond {
		t.Errorf("retried after %v, before the 250ms the server asked for", gap)
	}
}

func TestMissingKeyNamesTheVariable(t *testing.T) {
	_, err := anthropic.New("m", &anthropic.Options{Getenv: func(string) string { return "" }})
	if !errors.Is(err, anthropic.ErrMissingAPIKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestBaseURLFromEnvironment(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Text: "hello"})
	defer srv.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.BaseURL()}
	m, err := anthropic.New("c", &anthropic.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := model.Generate(context.Background(), m, &model.Request{Messages: []model.Message{model.UserMessage("hi")}})
	if err != nil || resp.Message.Text != "hello" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestCancellationMidStream(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Text: "a long answer that never ends", Hang: true})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	deltas := 0
	for c, e := range newModel(t, srv).Stream(ctx, &model.Request{Messages: []model.Message{model.UserMessage("hi")}}) {
		if c != nil && c.Text != "" {
			deltas++
			cancel()
		}
		err = e
	}
	if deltas != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("deltas=%d err=%v", deltas, err)
	}
}

func TestConsecutiveUserTurnsAreMerged(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Text: "ok"})
	defer srv.Close()
	req := &model.Request{Messages: []model.Message{
		model.UserMessage("one"),
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "t1", Name: "x", Args: []byte(`{"a":`)}}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "t1", Name: "x", Content: "bad json", IsError: true}}},
		model.UserMessage("two"),
	}}
	if _, err := model.Generate(context.Background(), newModel(t, srv), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Body["messages"].([]any)
	if len(msgs) != 3 || len(msgs[2].(map[string]any)["content"].([]any)) != 2 {
		t.Fatalf("messages = %v", msgs)
	}
	if in := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)["input"]; !reflect.DeepEqual(in, map[string]any{}) {
		t.Errorf("malformed arguments replayed as %v", in)
	}
}

func TestSettingsOnTheWire(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Text: "ok"})
	defer srv.Close()
	temp := 0.3
	req := &model.Request{
		Messages: []model.Message{model.UserMessage("hi")},
		Tools:    []model.ToolDef{model.ToolDefOf[App](spendTool)},
		Settings: model.Settings{Temperature: &temp, MaxOutputTokens: 77, ToolChoice: model.ToolChoiceRequired, NoParallelToolCalls: true},
	}
	if _, err := model.Generate(context.Background(), newModel(t, srv), req); err != nil {
		t.Fatal(err)
	}
	b := srv.Requests()[0].Body
	tc, _ := b["tool_choice"].(map[string]any)
	if b["temperature"] != 0.3 || b["max_tokens"] != float64(77) || tc["type"] != "any" || tc["disable_parallel_tool_use"] != true {
		t.Errorf("body %v", b)
	}
}

func TestAPIErrorsDoNotShowBaseURLCredentials(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Status: http.StatusBadRequest})
	defer srv.Close()
	base := strings.Replace(srv.BaseURL(), "http://", "http://proxyuser:hunter2@", 1)
	m, err := anthropic.New("c", &anthropic.Options{APIKey: "k", BaseURL: base, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = model.Generate(context.Background(), m, &model.Request{Messages: []model.Message{model.UserMessage("hi")}})
	if err == nil {
		t.Fatal("no error for a 400")
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "proxyuser") {
		t.Errorf("error shows the base URL's credentials: %v", err)
	}
	if !strings.Contains(err.Error(), "400") {
		t.Errorf("error lost the status: %v", err)
	}
	var ae *sdk.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Errorf("the SDK error is not reachable with errors.As: %v", err)
	}
}
