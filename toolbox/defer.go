package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"

	"github.com/paigasus/helikon"
)

// ErrAskDeferred is what the approval handler of a toolbox with
// [Options].DeferAsks answers a question with when the call carries no
// answer: the call is denied, and [Toolbox.Call] returns an [*AskError]
// wrapping the denial.
var ErrAskDeferred = errors.New("awaiting a person's answer")

// AskError is the error of [Toolbox.Call], with [Options].DeferAsks, for a
// call that needs a person's answer. The application asks the person
// however and whenever it likes (a framework's interrupt, a chat message, a
// web page) and then makes the same call again with the context [Resume]
// returns; the call goes through the whole pipeline again and the answer is
// used only for the same question. Match it with errors.As.
//
// It wraps the call's denial: a caller that does not handle asks sees a
// denied call ([helikon.KindOf] is [helikon.KindDenied]), never a call that
// ran.
type AskError struct {
	// Request is the question: the tool, its arguments, why it is asked.
	Request *helikon.ApprovalRequest
	// Offer are the rules an [Always] answer adds to the toolbox's
	// session ([AlwaysRules]); nil when the answer can only be once.
	Offer []helikon.Rule
	// Err is the denial the call ended with.
	Err error
}

// Error returns the denial's message, which tells a model the call awaits
// a person's answer.
func (e *AskError) Error() string { return e.Err.Error() }

// Unwrap returns the denial.
func (e *AskError) Unwrap() error { return e.Err }

// Question is an [*AskError]'s question as plain data, encodable as JSON
// (and gob), for an application or framework that carries it across its
// interrupt and resume: what the person is asked.
type Question struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Reason string          `json:"reason"`
	Rule   string          `json:"rule,omitempty"`
	Guard  bool            `json:"guard,omitempty"`
	// Offer are the rules an [Always] answer adds to the toolbox's
	// session, as written in policy files.
	Offer []string `json:"offer,omitempty"`
}

// Question returns the question e asks.
func (e *AskError) Question() Question {
	r := e.Request
	q := Question{Tool: r.Tool, Args: r.Args, Reason: r.Reason, Rule: r.Rule, Guard: r.Guard}
	for _, o := range e.Offer {
		q.Offer = append(q.Offer, o.String())
	}
	return q
}

// Request returns the approval request q stands for, for [Resume].
func (q Question) Request() *helikon.ApprovalRequest {
	return &helikon.ApprovalRequest{Tool: q.Tool, Args: q.Args, Reason: q.Reason, Rule: q.Rule, Guard: q.Guard}
}

// answerKey and askKey are the context keys of [Resume]'s answer and of
// the slot [Toolbox.Call] collects a deferred question in.
type (
	answerKey struct{}
	askKey    struct{}
)

type answered struct {
	req *helikon.ApprovalRequest
	ans Answer
}

// askSlot receives the question of one call.
type askSlot struct {
	mu    sync.Mutex
	req   *helikon.ApprovalRequest
	offer []helikon.Rule
}

// Resume returns ctx carrying a person's answer to the question of an
// [*AskError], for the call made again with it: [Yes] runs that call once,
// [Always] also adds the rules the error offered to the toolbox's session
// (a question an ask rule or a guard asked is answered once), [No] denies
// it. The answer applies only to the same question: the same tool, with
// the same arguments (as JSON values), asked for the same reason; any
// other question the call raises is deferred again.
func Resume(ctx context.Context, req *helikon.ApprovalRequest, ans Answer) context.Context {
	return context.WithValue(ctx, answerKey{}, &answered{req: req, ans: ans})
}

// deferredAsk is the Ask of the approval handler [New] installs with
// DeferAsks: the answer [Resume] carries, else the question into the
// call's slot and [ErrAskDeferred].
func deferredAsk(ctx context.Context, req *helikon.ApprovalRequest, offer []helikon.Rule) (Answer, error) {
	if a, ok := ctx.Value(answerKey{}).(*answered); ok && sameQuestion(a.req, req) {
		return a.ans, nil
	}
	if s, ok := ctx.Value(askKey{}).(*askSlot); ok {
		s.mu.Lock()
		s.req, s.offer = req, offer
		s.mu.Unlock()
	}
	return No, ErrAskDeferred
}

// sameQuestion reports whether b asks what a asked. The arguments are
// compared as JSON values, since a framework may re-encode them between
// the question and the answer.
func sameQuestion(a, b *helikon.ApprovalRequest) bool {
	if a == nil || b == nil || a.Tool != b.Tool || a.Reason != b.Reason || a.Rule != b.Rule || a.Guard != b.Guard {
		return false
	}
	var va, vb any
	if json.Unmarshal(a.Args, &va) != nil || json.Unmarshal(b.Args, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
