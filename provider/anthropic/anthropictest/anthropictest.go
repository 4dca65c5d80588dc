// Package anthropictest runs a local HTTP server that speaks Anthropic's
// streaming Messages wire format (server-sent events: message_start,
// content_block_start/delta/stop, message_delta, message_stop) with scripted
// answers, for tests of code that uses provider/anthropic. It is written from
// Anthropic's documented request and response shapes; it checks that
// requests carry a key (x-api-key, or a bearer token as this SDK sends it) and
// anthropic-version and records every request
// body.
//
// It is a test double: it implements only what a streaming tool-calling
// client needs, not the API.
package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// ToolCall is a scripted tool_use block.
type ToolCall struct {
	ID, Name, Args string
}

// Reply is one scripted answer.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// InputTokens and OutputTokens are reported as usage.
	InputTokens, OutputTokens int64
	// Status, when neither 0 nor 200, answers with this HTTP error, with
	// RetryAfter / RetryAfterMs headers when set.
	Status       int
	RetryAfter   string
	RetryAfterMs string
	// Hang streams the first text fragment, then waits for the client to
	// go away.
	Hang bool
}

// Request is a request the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	At     time.Time
}

// Server is a scripted Anthropic server. Replies are served in order (an
// exhausted script answers 500); Func, when set, computes each reply instead.
type Server struct {
	*httptest.Server
	Replies []Reply
	Func    func(r *Request) Reply

	mu       sync.Mutex
	next     int
	requests []*Request
}

// NewServer starts a server with replies. Close it when done.
func NewServer(replies ...Reply) *Server {
	s := &Server{Replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// BaseURL returns the base URL to configure clients with.
func (s *Server) BaseURL() string { return s.URL }

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Path: r.URL.Path, Header: r.Header.Clone(), At: time.Now()}
	_ = json.Unmarshal(raw, &req.Body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := s.next
	s.next++
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		apiError(w, http.StatusNotFound, "not_found_error", "unknown endpoint "+r.Method+" "+r.URL.Path)
		return
	}
	if r.Header.Get("X-Api-Key") == "" && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		apiError(w, http.StatusUnauthorized, "authentication_error", "x-api-key or authorization header is required")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version header is required")
		return
	}
	if mt, _ := req.Body["max_tokens"].(float64); mt <= 0 {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "max_tokens: Field required")
		return
	}
	var rep Reply
	switch {
	case s.Func != nil:
		rep = s.Func(req)
	case n < len(s.Replies):
		rep = s.Replies[n]
	default:
		apiError(w, http.StatusInternalServerError, "api_error", fmt.Sprintf("anthropictest: script exhausted at request %d", n+1))
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		if rep.RetryAfterMs != "" {
			w.Header().Set("Retry-After-Ms", rep.RetryAfterMs)
		}
		typ := "api_error"
		if rep.Status == http.StatusTooManyRequests {
			typ = "rate_limit_error"
		}
		apiError(w, rep.Status, typ, http.StatusText(rep.Status))
		return
	}
	if stream, _ := req.Body["stream"].(bool); !stream {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "anthropictest serves streaming requests only")
		return
	}
	model, _ := req.Body["model"].(string)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	ev := func(name string, v map[string]any) {
		v["type"] = name
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		w.(http.Flusher).Flush()
	}
	ev("message_start", map[string]any{"message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "content": []any{}, "model": model,
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.InputTokens, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
	}})
	ev("ping", map[string]any{})
	idx := 0
	if rep.Text != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for i, p := range pieces(rep.Text) {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": p}})
			if rep.Hang && i == 0 {
				<-r.Context().Done()
				return
			}
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for _, c := range rep.ToolCalls {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range pieces(c.Args) {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	stop := "end_turn"
	if len(rep.ToolCalls) > 0 {
		stop = "tool_use"
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rep.OutputTokens}})
	ev("message_stop", map[string]any{})
}

// pieces splits s into up to three fragments.
func pieces(s string) []string {
	if len(s) < 3 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}
