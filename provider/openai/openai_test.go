package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/provider/openai/openaitest"
	"github.com/paigasus/helikon/tool/functiontool"
)

type App = struct{}

type spendArgs struct {
	Category string `json:"category"`
	Month    string `json:"month,omitempty" default:"2026-10"`
}

type spendOut struct {
	Total float64 `json:"total"`
	Month string  `json:"month"`
}

func spendTool(seen *[]spendArgs) helikon.Tool[App] {
	return functiontool.Must(functiontool.New("lookup_spending", "Look up spending.",
		func(tc *helikon.ToolContext[App], in spendArgs) (spendOut, error) {
			if seen != nil {
				*seen = append(*seen, in)
			}
			return spendOut{Total: 312.4, Month: in.Month}, nil
		}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
}

type budgetArgs struct {
	Category string `json:"category"`
}

var budgetTool = functiontool.Must(functiontool.New("budget_status", "Budget of a category.",
	func(tc *helikon.ToolContext[App], in budgetArgs) (map[string]float64, error) {
		return map[string]float64{"limit": 400}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly, NoOutputSchema: true}))

func newModel(t *testing.T, srv *openaitest.Server, api openai.API) *openai.Model {
	t.Helper()
	m, err := openai.New("gpt-test", &openai.Options{APIKey: "sk-test", BaseURL: srv.BaseURL(), API: api})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var apis = []struct {
	name string
	api  openai.API
}{{"chat", openai.ChatCompletions}, {"responses", openai.Responses}}

func TestTwoToolConversationWithParallelCalls(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := openaitest.NewServer(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{
					{ID: "call_1", Name: "lookup_spending", Args: `{"category":"Dining","month":null}`},
					{ID: "call_2", Name: "budget_status", Args: `{"category":"Dining"}`},
				}, InputTokens: 50, OutputTokens: 20},
				openaitest.Reply{Text: "You spent $312.40 of your $400 dining budget.", InputTokens: 90, OutputTokens: 12},
			)
			defer srv.Close()
			var seen []spendArgs
			a := llmagent.Must(llmagent.NewBuilder[App]().Name("budget").Model(newModel(t, srv, api.api)).
				Instructions("You are a budgeting assistant.").Tools(spendTool(&seen), budgetTool).Build())
			r, _ := runner.New(runner.Config[App]{Agent: a})
			res, err := agent.Collect(r.Run(context.Background(), "", "How is my dining budget?"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "You spent $312.40 of your $400 dining budget." {
				t.Errorf("text = %q", res.Text)
			}
			if res.Usage.InputTokens != 140 || res.Usage.OutputTokens != 32 || res.Usage.Requests != 2 {
				t.Errorf("usage = %+v", res.Usage)
			}
			// The optional month came back null (strict mode) and was
			// removed, so the tool applied its default.
			if len(seen) != 1 || seen[0].Month != "2026-10" {
				t.Errorf("tool saw %+v; want month defaulted", seen)
			}
			var results []string
			for _, e := range res.Events {
				if e.Kind == agent.EventToolResult {
					if e.ToolResult.IsError {
						t.Errorf("tool error: %+v", e.ToolResult)
					}
					results = append(results, e.ToolResult.CallID)
				}
			}
			if !reflect.DeepEqual(results, []string{"call_1", "call_2"}) {
				t.Errorf("results in order %v", results)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			checkWire(t, api.api, reqs)
		})
	}
}

// checkWire checks the request bodies against the documented shapes.
func checkWire(t *testing.T, api openai.API, reqs []*openaitest.Request) {
	t.Helper()
	first, second := reqs[0].Body, reqs[1].Body
	if first["stream"] != true || first["model"] != "gpt-test" {
		t.Errorf("first request: stream=%v model=%v", first["stream"], first["model"])
	}
	if reqs[0].Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("authorization header %q", reqs[0].Header.Get("Authorization"))
	}
	tools := first["tools"].([]any)
	var fn map[string]any
	if api == openai.ChatCompletions {
		if !strings.HasSuffix(reqs[0].Path, "/v1/chat/completions") {
			t.Errorf("path %s", reqs[0].Path)
		}
		fn = tools[0].(map[string]any)["function"].(map[string]any)
		msgs := second["messages"].([]any)
		roles := []string{}
		for _, m := range msgs {
			roles = append(roles, m.(map[string]any)["role"].(string))
		}
		if !reflect.DeepEqual(roles, []string{"system", "user", "assistant", "tool", "tool"}) {
			t.Errorf("roles = %v", roles)
		}
		asst := msgs[2].(map[string]any)
		tcs := asst["tool_calls"].([]any)
		if len(tcs) != 2 || tcs[0].(map[string]any)["function"].(map[string]any)["name"] != "lookup_spending" {
			t.Errorf("assistant tool calls = %v", tcs)
		}
		if msgs[3].(map[string]any)["tool_call_id"] != "call_1" || msgs[4].(map[string]any)["tool_call_id"] != "call_2" {
			t.Errorf("tool messages = %v %v", msgs[3], msgs[4])
		}
	} else {
		if !strings.HasSuffix(reqs[0].Path, "/v1/responses") {
			t.Errorf("path %s", reqs[0].Path)
		}
		fn = tools[0].(map[string]any)
		if first["instructions"] != "You are a budgeting assistant." || first["store"] != false {
			t.Errorf("instructions/store = %v/%v", first["instructions"], first["store"])
		}
		var types []string
		for _, it := range second["input"].([]any) {
			m := it.(map[string]any)
			typ, _ := m["type"].(string)
			if typ == "" {
				typ = "message:" + m["role"].(string)
			}
			types = append(types, typ)
		}
		want := []string{"message:user", "function_call", "function_call", "function_call_output", "function_call_output"}
		if !reflect.DeepEqual(types, want) {
			t.Errorf("input items = %v, want %v", types, want)
		}
	}
	if fn["name"] != "lookup_spending" || fn["strict"] != true {
		t.Errorf("tool = %v", fn)
	}
	params := fn["parameters"].(map[string]any)
	if !reflect.DeepEqual(params["required"], []any{"category", "month"}) || params["additionalProperties"] != false {
		t.Errorf("strict parameters = %v", params)
	}
	month := params["properties"].(map[string]any)["month"].(map[string]any)
	if !reflect.DeepEqual(month["type"], []any{"string", "null"}) {
		t.Errorf("optional month not nullable: %v", month)
	}
	if _, has := month["default"]; has {
		t.Errorf("default kept in strict schema: %v", month)
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	for _, rep := range []openaitest.Reply{
		{Status: http.StatusTooManyRequests, RetryAfterMs: "300"},
		{Status: http.StatusTooManyRequests, RetryAfter: "1"},
		{Status: http.StatusServiceUnavailable, RetryAfterMs: "10"},
	} {
		srv := openaitest.NewServer(rep, openaitest.Reply{Text: "ok"})
		m := newModel(t, srv, openai.ChatCompletions)
		resp, err := model.Generate(context.Background(), m, &model.Request{Messages: []model.Message{model.UserMessage("hi")}})
		srv.Close()
		if err != nil {
			t.Fatalf("%d: %v", rep.Status, err)
		}
		if resp.Message.Text != "ok" {
			t.Errorf("text %q", resp.Message.Text)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d: %d requests, want 2", rep.Status, len(reqs))
		}
		want := 10 * time.Millisecond
		switch {
		case rep.RetryAfterMs == "300":
			want = 300 * time.Millisecond
		case rep.RetryAfter == "1":
			want = time.Second
		}
		if gap := reqs[1].At.Sub(reqs[0].At); gap < want {
			t.Errorf("%d: retried after %v, before the %v the server asked for", rep.Status, gap, want)
		}
	}
}

func TestRetriesGiveUp(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Reply{Status: 500, RetryAfterMs: "1"}, openaitest.Reply{Status: 500, RetryAfterMs: "1"})
	defer srv.Close()
	m, _ := openai.New("gpt-test", &openai.Options{APIKey: "k", BaseURL: srv.BaseURL(), MaxRetries: 1})
	_, err := model.Generate(context.Background(), m, &model.Request{Messages: []model.Message{model.UserMessage("hi")}})
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests with MaxRetries 1", n)
	}
}

func TestMissingKeyNamesTheVariable(t *testing.T) {
	_, err := openai.New("m", &openai.Options{Getenv: func(string) string { return "" }})
	if !errors.Is(err, openai.ErrMissingAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	if _, err := openai.New("m", &openai.Options{Getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatal(err)
	}
}

func TestBaseURLFromEnvironment(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Reply{Text: "hello"})
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": srv.BaseURL()}
	m, err := openai.New("llama3", &openai.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := model.Generate(context.Background(), m, &model.Request{Messages: []model.Message{model.UserMessage("hi")}})
	if err != nil || resp.Message.Text != "hello" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "Bearer sk-env" {
		t.Errorf("auth %q", h)
	}
}

func TestCancellationMidStream(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.Reply{Text: "a long answer that never ends", Hang: true})
			defer srv.Close()
			m := newModel(t, srv, api.api)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var err error
			var deltas int
			for c, e := range m.Stream(ctx, &model.Request{Messages: []model.Message{model.UserMessage("hi")}}) {
				if c != nil && c.Text != "" {
					deltas++
					cancel()
				}
				err = e
			}
			if deltas != 1 || !errors.Is(err, context.Canceled) {
				t.Fatalf("deltas=%d err=%v", deltas, err)
			}
		})
	}
}

func TestStreamsDeltas(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.Reply{Text: "streamed text", ToolCalls: []openaitest.ToolCall{{ID: "c", Name: "lookup_spending", Args: `{"category":"x"}`}}})
			defer srv.Close()
			m := newModel(t, srv, api.api)
			var text, args, name strings.Builder
			var resp *model.Response
			for c, err := range m.Stream(context.Background(), &model.Request{Messages: []model.Message{model.UserMessage("hi")}}) {
				if err != nil {
					t.Fatal(err)
				}
				text.WriteString(c.Text)
				if c.ToolCall != nil {
					args.WriteString(c.ToolCall.ArgsFragment)
					name.WriteString(c.ToolCall.Name)
				}
				if c.Response != nil {
					resp = c.Response
				}
			}
			if text.String() != "streamed text" || args.String() != `{"category":"x"}` || name.String() != "lookup_spending" {
				t.Errorf("deltas: text %q name %q args %q", text.String(), name.String(), args.String())
			}
			if resp == nil || resp.StopReason != model.StopToolCalls || len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Args) != `{"category":"x"}` {
				t.Errorf("response %+v", resp)
			}
		})
	}
}

func TestNonStrictSchemaSentUnchanged(t *testing.T) {
	type open struct {
		Tags map[string]string `json:"tags"`
	}
	tool := functiontool.Must(functiontool.New("tagger", "Tags.", func(tc *helikon.ToolContext[App], in open) (open, error) { return in, nil }, nil))
	srv := openaitest.NewServer(openaitest.Reply{Text: "ok"})
	defer srv.Close()
	m := newModel(t, srv, openai.ChatCompletions)
	_, err := model.Generate(context.Background(), m, &model.Request{Messages: []model.Message{model.UserMessage("hi")}, Tools: []model.ToolDef{model.ToolDefOf[App](tool)}})
	if err != nil {
		t.Fatal(err)
	}
	fn := srv.Requests()[0].Body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if _, has := fn["strict"]; has {
		t.Errorf("a map-typed schema was sent strict: %v", fn)
	}
	b, _ := json.Marshal(tool.Schema())
	got, _ := json.Marshal(fn["parameters"])
	var w1, w2 any
	json.Unmarshal(b, &w1)
	json.Unmarshal(got, &w2)
	if !reflect.DeepEqual(w1, w2) {
		t.Errorf("schema changed:\n%s\n%s", b, got)
	}
}

func TestSettingsOnTheWire(t *testing.T) {
	temp, topP := 0.2, 0.9
	settings := model.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 123, ToolChoice: model.ToolChoiceRequired, NoParallelToolCalls: true}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.Reply{Text: "ok"})
			defer srv.Close()
			req := &model.Request{Messages: []model.Message{model.UserMessage("hi")}, Tools: []model.ToolDef{model.ToolDefOf[App](budgetTool)}, Settings: settings}
			if _, err := model.Generate(context.Background(), newModel(t, srv, api.api), req); err != nil {
				t.Fatal(err)
			}
			b := srv.Requests()[0].Body
			maxKey := "max_completion_tokens"
			if api.api == openai.Responses {
				maxKey = "max_output_tokens"
			}
			if b["temperature"] != 0.2 || b["top_p"] != 0.9 || b[maxKey] != float64(123) || b["tool_choice"] != "required" || b["parallel_tool_calls"] != false {
				t.Errorf("body %v", b)
			}
		})
	}
}

func TestSettingsWithoutToolsSendNoToolChoice(t *testing.T) {
	settings := model.Settings{ToolChoice: model.ToolChoiceRequired, NoParallelToolCalls: true}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.Reply{Text: "ok"})
			defer srv.Close()
			req := &model.Request{Messages: []model.Message{model.UserMessage("hi")}, Settings: settings}
			if _, err := model.Generate(context.Background(), newModel(t, srv, api.api), req); err != nil {
				t.Fatal(err)
			}
			b := srv.Requests()[0].Body
			for _, k := range []string{"tool_choice", "parallel_tool_calls", "temperature", "top_p"} {
				if v, ok := b[k]; ok {
					t.Errorf("%s = %v sent in a request without tools", k, v)
				}
			}
		})
	}
}
