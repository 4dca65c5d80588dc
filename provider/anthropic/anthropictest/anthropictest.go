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
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/paigasus/helikon/provider/internal/scriptserver"
)

// ToolCall is a scripted tool_use block.
type ToolCall = scriptserver.ToolCall

// Reply is one scripted answer: text, tool_use blocks and usage, or an HTTP
// error (Status) with Retry-After headers, or a stream that hangs after its
// first text fragment (Hang), for cancellation tests.
type Reply = scriptserver.Reply

// Request is a request the server received.
type Request = scriptserver.Request

// Server is a scripted Anthropic server. Replies are served in order (an
// exhausted script answers 500); Func, when set, computes each reply instead.
// Requests returns what the server received.
type Server struct {
	*httptest.Server
	scriptserver.Script
}

// NewServer starts a server with replies. Close it when done.
func NewServer(replies ...Reply) *Server {
	s := &Server{}
	s.Replies = replies
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// BaseURL returns the base URL to configure clients with.
func (s *Server) BaseURL() string { return s.URL }

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	req, n := s.Record(r)
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
	rep, ok := s.ReplyTo(req, n)
	if !ok {
		apiError(w, http.StatusInternalServerError, "api_error", scriptserver.ExhaustedMessage("anthropictest", n))
		return
	}
	if rep.Failed() {
		scriptserver.SetRetryHeaders(w, &rep)
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
	sse := scriptserver.SSE{W: w}
	sse.Start()
	ev := sse.Event
	ev("message_start", map[string]any{"message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "content": []any{}, "model": model,
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.InputTokens, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
	}})
	ev("ping", map[string]any{})
	idx := 0
	if rep.Text != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for i, p := range scriptserver.Pieces(rep.Text) {
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
		for _, p := range scriptserver.Pieces(c.Args) {
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
