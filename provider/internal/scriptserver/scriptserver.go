// Package scriptserver holds what the scripted provider servers (openaitest,
// anthropictest) share: the scripted replies, the record of the requests,
// retry headers on scripted HTTP errors, and a server-sent-events writer.
// Each of those packages adds its provider's wire format on top.
//
// What it guarantees: requests are numbered and recorded in arrival order,
// before they are answered, and request n gets Replies[n] whatever the
// concurrency; a request past the end of the script is never given an
// invented answer. What it does not do: it does not validate request bodies
// against a provider's API (each server checks only what its tests rely on),
// and Func is called without a lock, so it must be safe for concurrent use.
package scriptserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// ToolCall is a scripted tool call.
type ToolCall struct {
	// ID is the call's id, Name the tool's name and Args its JSON
	// arguments, sent as is (they need not be valid JSON).
	ID, Name, Args string
}

// Reply is one scripted answer.
type Reply struct {
	// Text is streamed in up to three fragments (see Pieces).
	Text string
	// ToolCalls are streamed after Text, in order.
	ToolCalls []ToolCall
	// InputTokens and OutputTokens are reported as usage.
	InputTokens, OutputTokens int64
	// Status, when neither 0 nor 200, answers with this HTTP error instead
	// of a stream, with RetryAfter / RetryAfterMs headers when set.
	Status       int
	RetryAfter   string // the Retry-After header's value, such as "2"
	RetryAfterMs string // the Retry-After-Ms header's value, such as "1500"
	// Hang streams the first text fragment and then waits for the client
	// to go away, for cancellation tests.
	Hang bool
}

// Failed reports whether r answers with an HTTP error.
func (r *Reply) Failed() bool { return r.Status != 0 && r.Status != http.StatusOK }

// Request is a request the server received.
type Request struct {
	Path   string      // the URL path, such as /v1/chat/completions
	Header http.Header // a copy of the request headers
	// Body is the decoded JSON body (nil when it is not a JSON object).
	Body map[string]any
	Raw  []byte    // the body as received
	At   time.Time // when the request was recorded
}

// Script serves Replies in order, or, when Func is set, the replies Func
// computes, and records every request. It is safe for concurrent use.
type Script struct {
	Replies []Reply                // served in order when Func is nil
	Func    func(r *Request) Reply // when set, computes every reply instead

	mu       sync.Mutex
	next     int
	requests []*Request
}

// Requests returns the requests received so far.
func (s *Script) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Record reads r's body, records the request and returns it with its
// number, from 0.
func (s *Script) Record(r *http.Request) (*Request, int) {
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw, At: time.Now()}
	_ = json.Unmarshal(raw, &req.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	n := s.next
	s.next++
	return req, n
}

// ReplyTo returns the reply to request number n; false when the script is
// exhausted.
func (s *Script) ReplyTo(req *Request, n int) (Reply, bool) {
	switch {
	case s.Func != nil:
		return s.Func(req), true
	case n < len(s.Replies):
		return s.Replies[n], true
	}
	return Reply{}, false
}

// ExhaustedMessage is the error message of a request the script has no
// reply for.
func ExhaustedMessage(pkg string, n int) string {
	return fmt.Sprintf("%s: script exhausted at request %d", pkg, n+1)
}

// SetRetryHeaders sets the Retry-After and Retry-After-Ms headers rep asks
// for.
func SetRetryHeaders(w http.ResponseWriter, rep *Reply) {
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.RetryAfterMs != "" {
		w.Header().Set("Retry-After-Ms", rep.RetryAfterMs)
	}
}

// Pieces splits s into up to three fragments, as a stream delivers text.
func Pieces(s string) []string {
	if len(s) < 3 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

// SSE writes server-sent events, flushing each.
type SSE struct {
	W http.ResponseWriter // must implement http.Flusher
}

// Start sends the headers of an event stream.
func (s SSE) Start() {
	s.W.Header().Set("Content-Type", "text/event-stream")
	s.W.WriteHeader(http.StatusOK)
}

// Data sends v as an unnamed event.
func (s SSE) Data(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.W, "data: %s\n\n", b)
	s.W.(http.Flusher).Flush()
}

// Event sends v, with its "type" set to name, as the event name.
func (s SSE) Event(name string, v map[string]any) {
	v["type"] = name
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.W, "event: %s\ndata: %s\n\n", name, b)
	s.W.(http.Flusher).Flush()
}

// Done sends the "data: [DONE]" line that ends an OpenAI stream.
func (s SSE) Done() {
	fmt.Fprint(s.W, "data: [DONE]\n\n")
	s.W.(http.Flusher).Flush()
}
