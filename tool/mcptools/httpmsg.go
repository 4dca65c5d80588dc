package mcptools

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// JSON-RPC 2.0 error codes the HTTP transport answers with.
const (
	codeInvalidRequest = -32600 // the specification's "Invalid Request"
	codeServerBusy     = -32000 // first of the "server error" codes reserved for implementations
)

// scanned is what the HTTP transport needs to know of a POST body before the
// SDK reads it.
type scanned struct {
	calls      []json.RawMessage // the IDs of the requests that expect an answer
	initialize bool              // an initialize request is among them
	first      json.RawMessage   // the first message's ID, if any
	invalid    *badMessage       // the first message that is no JSON-RPC message
}

type badMessage struct {
	id  json.RawMessage
	why string
}

// scanMessages reads a body holding one JSON-RPC message or a batch. Bodies
// that are not JSON objects (or arrays of them) are left for the SDK to
// refuse. A message with neither a method (a request or notification) nor a
// result or error (a response) is invalid: the SDK would take it for a
// response to nothing and answer 202 Accepted.
func scanMessages(body []byte) scanned {
	var raws []json.RawMessage
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &raws) != nil {
			return scanned{}
		}
	} else {
		raws = []json.RawMessage{body}
	}
	var s scanned
	for i, raw := range raws {
		// Keys are matched exactly, as the SDK matches them
		// (encoding/json would also take "Method" for "method").
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return scanned{}
		}
		id := m["id"]
		if isNull(id) {
			id = nil
		}
		if i == 0 {
			s.first = id
		}
		_, hasMethod := m["method"]
		_, hasResult := m["result"]
		_, hasError := m["error"]
		switch {
		case hasMethod:
			if id != nil {
				s.calls = append(s.calls, id)
			}
			s.initialize = s.initialize || string(bytes.TrimSpace(m["method"])) == `"initialize"`
		case !hasResult && !hasError && s.invalid == nil:
			s.invalid = &badMessage{id: id, why: `invalid request: a JSON-RPC message needs a "method" (a request or notification) or a "result" or "error" (a response to the server)`}
		}
	}
	return s
}

func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(bytes.TrimSpace(v)) == "null"
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

// writeRPCError answers with a JSON-RPC error response.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: rpcError{code, msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
