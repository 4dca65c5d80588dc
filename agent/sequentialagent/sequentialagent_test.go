package sequentialagent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/agent/sequentialagent"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/functiontool"
)

type App = struct{}

type note struct {
	Text string `json:"text"`
}

var save = functiontool.Must(functiontool.New("save_note", "Save a note in the session state.",
	func(tc *helikon.ToolContext[App], in note) (note, error) {
		tc.State().Set("note", in.Text)
		return in, nil
	}, nil))

var load = functiontool.Must(functiontool.New("load_note", "Read the saved note.",
	func(tc *helikon.ToolContext[App], _ struct{}) (note, error) {
		v, _ := tc.State().Get("note")
		s, _ := v.(string)
		return note{Text: s}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))

func TestSequentialSharesConversationAndState(t *testing.T) {
	writerModel := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("1", "save_note", `{"text":"buy milk"}`)}},
		agenttest.Reply{Text: "saved"},
	)
	readerModel := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("2", "load_note", `{}`)}},
		agenttest.Reply{Text: "the note says buy milk"},
	)
	writer := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "writer", Model: writerModel, Tools: []helikon.Tool[App]{save}}))
	reader := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "reader", Model: readerModel, Tools: []helikon.Tool[App]{load}}))
	seq, err := sequentialagent.New(sequentialagent.Config[App]{Name: "seq", SubAgents: []agent.Agent[App]{writer, reader}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := runner.New(runner.Config[App]{Agent: seq})
	res, err := agent.Collect(r.Run(context.Background(), "s", "remember milk"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "the note says buy milk" {
		t.Errorf("text = %q", res.Text)
	}
	if !agenttest.Contains(readerModel.Requests()[1], `"text":"buy milk"`) {
		t.Error("the reader's tool did not see the writer's state")
	}
	if !agenttest.Contains(readerModel.Requests()[0], "saved") {
		t.Error("the reader did not see the writer's answer")
	}
	sess, _ := r.Store().Get(context.Background(), "s")
	if len(sess.Messages) != 7 || sess.State["note"] != "buy milk" {
		t.Errorf("stored %d messages, state %v; want 7 and the note", len(sess.Messages), sess.State)
	}
}

func TestSequentialStopsAtFirstError(t *testing.T) {
	failing := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "f", Model: agenttest.New(agenttest.Reply{Err: errors.New("model down")})}))
	second := agenttest.New(agenttest.Reply{Text: "never"})
	after := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "a", Model: second}))
	seq, _ := sequentialagent.New(sequentialagent.Config[App]{Name: "seq", SubAgents: []agent.Agent[App]{failing, after}})
	r, _ := runner.New(runner.Config[App]{Agent: seq})
	if _, err := agent.Collect(r.Run(context.Background(), "", "x")); err == nil || second.Calls() != 0 {
		t.Fatalf("err = %v, second agent ran %d times", err, second.Calls())
	}
}
