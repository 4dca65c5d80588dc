package toolbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// ask makes a Write call of content to path and returns its AskError.
func ask(t *testing.T, tb *toolbox.Toolbox[struct{}], args string) *toolbox.AskError {
	t.Helper()
	_, err := tb.Call(context.Background(), struct{}{}, "Write", json.RawMessage(args))
	var ae *toolbox.AskError
	if !errors.As(err, &ae) {
		t.Fatalf("Write %s = %v, want an *AskError", args, err)
	}
	if helikon.KindOf(err) != helikon.KindDenied || !errors.Is(err, helikon.ErrDenied) {
		t.Fatalf("an AskError is of kind %s, want denied (unhandled, it must stay a denial)", helikon.KindOf(err))
	}
	if ae.Request.Tool != "Write" || !json.Valid(ae.Request.Args) {
		t.Fatalf("AskError.Request = %+v", ae.Request)
	}
	return ae
}

func TestDeferAsksResumesOnlyTheSameQuestion(t *testing.T) {
	const args = `{"path":"a.txt","content":"x"}`
	tests := []struct {
		name    string
		resume  string // the arguments the call is made again with
		ans     toolbox.Answer
		written bool // a.txt or b.txt written by the resumed call
		asked   bool // the resumed call asks again
	}{
		{"yes runs the call", args, toolbox.Yes, true, false},
		{"yes re-encoded runs the call", `{ "content": "x", "path": "a.txt" }`, toolbox.Yes, true, false},
		{"no denies it", args, toolbox.No, false, false},
		{"yes does not approve other arguments", `{"path":"b.txt","content":"x"}`, toolbox.Yes, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tb := newToolbox(t, &toolbox.Options{Root: root, Uncontained: true, DeferAsks: true})
			ae := ask(t, tb, args)
			if _, err := os.Stat(filepath.Join(root, "a.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the asked call ran: %v", err)
			}
			ctx := toolbox.Resume(context.Background(), ae.Request, tt.ans)
			_, err := tb.Call(ctx, struct{}{}, "Write", json.RawMessage(tt.resume))
			var again *toolbox.AskError
			if got := errors.As(err, &again); got != tt.asked {
				t.Fatalf("resumed call asks again = %v (%v), want %v", got, err, tt.asked)
			}
			if (err == nil) != tt.written {
				t.Fatalf("resumed call: %v, want written %v", err, tt.written)
			}
			var m map[string]string
			_ = json.Unmarshal([]byte(tt.resume), &m)
			_, serr := os.Stat(filepath.Join(root, m["path"]))
			if (serr == nil) != tt.written {
				t.Fatalf("%s written = %v, want %v", m["path"], serr == nil, tt.written)
			}
		})
	}
}

func TestDeferAsksAlwaysAddsSessionRule(t *testing.T) {
	root := t.TempDir()
	tb := newToolbox(t, &toolbox.Options{Root: root, Uncontained: true, DeferAsks: true})
	ae := ask(t, tb, `{"path":"a.txt","content":"1"}`)
	if len(ae.Offer) == 0 {
		t.Fatal("no rule offered for a Write")
	}
	if _, err := tb.Call(toolbox.Resume(context.Background(), ae.Request, toolbox.Always), struct{}{}, "Write", ae.Request.Args); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Call(context.Background(), struct{}{}, "Write", json.RawMessage(`{"path":"a.txt","content":"2"}`)); err != nil {
		t.Fatalf("the same file again after Always: %v", err)
	}
	ask(t, tb, `{"path":"c.txt","content":"1"}`)
}

func TestDeferAsksRefusesAnApprover(t *testing.T) {
	_, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{
		Root: t.TempDir(), Uncontained: true, DeferAsks: true,
		Approver: helikon.ApproverFunc(func(context.Context, *helikon.ApprovalRequest) (bool, error) { return true, nil }),
	})
	if err == nil {
		t.Fatal("DeferAsks with an Approver accepted")
	}
}
