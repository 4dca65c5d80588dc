// Package openaitest runs a local HTTP server that speaks OpenAI's streaming
// wire format (Chat Completions and Responses, server-sent events) with
// scripted answers, for tests of code that uses provider/openai, the
// examples and the helikon CLI. It is written from OpenAI's documented
// request and response shapes; it checks that requests carry a bearer key
// and records every request body.
//
// It is a test double: it implements only what a streaming tool-calling
// client needs, not the API.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/paigasus/helikon/provider/internal/scriptserver"
)

// ToolCall is a scripted tool call.
type ToolCall = scriptserver.ToolCall

// Reply is one scripted answer: text, tool calls and usage, or an HTTP
// error (Status) with Retry-After headers, or a stream that hangs after its
// first fragment (Hang), for cancellation tests.
type Reply = scriptserver.Reply

// Request is a request the server received.
type Request = scriptserver.Request

// Server is a scripted OpenAI server. Replies are served in order (an
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

// BaseURL returns the base URL to configure clients with (ending in /v1).
func (s *Server) BaseURL() string { return s.URL + "/v1" }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	req, n := s.Record(r)
	if r.Method != http.MethodPost {
		apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || len(r.Header.Get("Authorization")) <= len("Bearer ") {
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "You didn't provide an API key.")
		return
	}
	rep, ok := s.ReplyTo(req, n)
	if !ok {
		apiError(w, http.StatusInternalServerError, "server_error", scriptserver.ExhaustedMessage("openaitest", n))
		return
	}
	if rep.Failed() {
		scriptserver.SetRetryHeaders(w, &rep)
		typ := "server_error"
		if rep.Status == http.StatusTooManyRequests {
			typ = "rate_limit_error"
		}
		apiError(w, rep.Status, typ, http.StatusText(rep.Status))
		return
	}
	if stream, _ := req.Body["stream"].(bool); !stream {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "openaitest serves streaming requests only")
		return
	}
	modelID, _ := req.Body["model"].(string)
	sse := scriptserver.SSE{W: w}
	sse.Start()
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		usage := false
		if so, ok := req.Body["stream_options"].(map[string]any); ok {
			usage, _ = so["include_usage"].(bool)
		}
		chat(r, sse, modelID, rep, usage)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		responses(r, sse, modelID, rep)
	default:
		sse.Data(map[string]any{"error": map[string]any{"message": "unknown path " + r.URL.Path}})
	}
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func chat(r *http.Request, sse scriptserver.SSE, modelID string, rep Reply, usage bool) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": modelID,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
	}
	sse.Data(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for i, p := range scriptserver.Pieces(rep.Text) {
		if p == "" {
			continue
		}
		sse.Data(chunk(map[string]any{"content": p}, nil))
		if rep.Hang && i == 0 {
			<-r.Context().Done()
			return
		}
	}
	// Tool calls: first every call's opening fragment with the name split
	// across two chunks, then the argument fragments interleaved between
	// calls, as parallel calls arrive.
	for i, c := range rep.ToolCalls {
		h := len(c.Name) / 2
		sse.Data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name[:h], "arguments": ""}}}}, nil))
		sse.Data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"name": c.Name[h:]}}}}, nil))
	}
	for k := range 3 {
		for i, c := range rep.ToolCalls {
			ps := scriptserver.Pieces(c.Args)
			if k < len(ps) {
				sse.Data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": ps[k]}}}}, nil))
			}
		}
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	sse.Data(chunk(map[string]any{}, finish))
	if usage {
		sse.Data(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": modelID, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": rep.InputTokens, "completion_tokens": rep.OutputTokens, "total_tokens": rep.InputTokens + rep.OutputTokens},
		})
	}
	sse.Done()
}

func responses(r *http.Request, sse scriptserver.SSE, modelID string, rep Reply) {
	resp := func(status string, output []any, usage any) map[string]any {
		return map[string]any{"id": "resp_test", "object": "response", "created_at": 1, "status": status, "model": modelID, "output": output, "usage": usage, "error": nil}
	}
	sse.Event("response.created", map[string]any{"sequence_number": 0, "response": resp("in_progress", []any{}, nil)})
	var output []any
	idx := 0
	if rep.Text != "" {
		sse.Event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": "msg_test", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		for i, p := range scriptserver.Pieces(rep.Text) {
			sse.Event("response.output_text.delta", map[string]any{"item_id": "msg_test", "output_index": idx, "content_index": 0, "delta": p})
			if rep.Hang && i == 0 {
				<-r.Context().Done()
				return
			}
		}
		item := map[string]any{"id": "msg_test", "type": "message", "status": "completed", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}}
		sse.Event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for _, c := range rep.ToolCalls {
		itemID := fmt.Sprintf("fc_%d", idx)
		sse.Event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": itemID, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""}})
		for _, p := range scriptserver.Pieces(c.Args) {
			sse.Event("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": idx, "delta": p})
		}
		sse.Event("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": idx, "arguments": c.Args})
		item := map[string]any{"id": itemID, "type": "function_call", "status": "completed", "call_id": c.ID, "name": c.Name, "arguments": c.Args}
		sse.Event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	usage := map[string]any{
		"input_tokens": rep.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": rep.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": rep.InputTokens + rep.OutputTokens,
	}
	sse.Event("response.completed", map[string]any{"sequence_number": 1, "response": resp("completed", output, usage)})
}
