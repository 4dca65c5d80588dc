package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/mcptools"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// refusal is the body the guard answers with, or "" when the request got
// through to the MCP handler.
var refusals = []string{"host not allowed", "origin not allowed", "missing or wrong bearer token", "remote peer not allowed without a bearer token"}

func refusedBy(body string) string {
	for _, r := range refusals {
		if strings.HasPrefix(body, r) {
			return r
		}
	}
	return ""
}

func guardedHandler(t testing.TB, token string) http.Handler {
	t.Helper()
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(t).tools...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcptools.HTTPHandler(srv, "127.0.0.1:8123", &mcptools.HTTPOptions{
		Token:          token,
		AllowedOrigins: []string{"https://app.example"},
		AllowedHosts:   []string{"mcp.internal"},
	})
}

func post(h http.Handler, host, origin, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(initializeBody))
	r.Host = host
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHTTPGuardRefusesRebindingForeignOriginsAndBadTokens(t *testing.T) {
	h := guardedHandler(t, "s3cret")
	const ok = "Bearer s3cret"
	tests := []struct {
		name, host, origin, auth string
		status                   int
		refusal                  string
	}{
		{"loopback", "127.0.0.1:8123", "", ok, http.StatusOK, ""},
		{"localhost", "localhost:8123", "", ok, http.StatusOK, ""},
		{"ipv6 loopback", "[::1]:8123", "", ok, http.StatusOK, ""},
		{"allowed host", "mcp.internal:8123", "", ok, http.StatusOK, ""},
		{"allowed origin", "127.0.0.1:8123", "https://app.example", ok, http.StatusOK, ""},
		{"dns rebinding", "evil.example:8123", "", ok, http.StatusForbidden, "host not allowed"},
		{"rebinding with loopback-looking name", "127.0.0.1.evil.example", "", ok, http.StatusForbidden, "host not allowed"},
		{"localhost subdomain", "x.localhost:8123", "", ok, http.StatusForbidden, "host not allowed"},
		{"foreign origin", "127.0.0.1:8123", "http://evil.example", ok, http.StatusForbidden, "origin not allowed"},
		{"loopback origin not listed", "127.0.0.1:8123", "http://localhost:3000", ok, http.StatusForbidden, "origin not allowed"},
		{"null origin", "127.0.0.1:8123", "null", ok, http.StatusForbidden, "origin not allowed"},
		{"no token", "127.0.0.1:8123", "", "", http.StatusUnauthorized, "missing or wrong bearer token"},
		{"wrong token", "127.0.0.1:8123", "", "Bearer s3cre", http.StatusUnauthorized, "missing or wrong bearer token"},
		{"basic auth", "127.0.0.1:8123", "", "Basic czNjcmV0", http.StatusUnauthorized, "missing or wrong bearer token"},
		// RFC 9110 §11.1: the scheme is case-insensitive.
		{"lower-case scheme", "127.0.0.1:8123", "", "bearer s3cret", http.StatusOK, ""},
		{"upper-case scheme", "127.0.0.1:8123", "", "BEARER s3cret", http.StatusOK, ""},
		{"scheme alone", "127.0.0.1:8123", "", "Bearer", http.StatusUnauthorized, "missing or wrong bearer token"},
		{"scheme glued to token", "127.0.0.1:8123", "", "Bearers3cret", http.StatusUnauthorized, "missing or wrong bearer token"},
		{"token with a suffix", "127.0.0.1:8123", "", "bearer s3cret x", http.StatusUnauthorized, "missing or wrong bearer token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(h, tt.host, tt.origin, tt.auth)
			if w.Code != tt.status || refusedBy(w.Body.String()) != tt.refusal {
				t.Fatalf("status %d %q, want %d %q", w.Code, w.Body.String(), tt.status, tt.refusal)
			}
			if tt.status == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Error("401 without a WWW-Authenticate: Bearer challenge")
			}
		})
	}
}

// TestHTTPHandlerWithoutTokenServesOnlyLoopbackPeers: a handler mounted on
// a public listener without a token must not serve a remote client that
// simply writes a loopback Host header.
func TestHTTPHandlerWithoutTokenServesOnlyLoopbackPeers(t *testing.T) {
	h := guardedHandler(t, "")
	for _, tt := range []struct {
		remote  string
		status  int
		refusal string
	}{
		{"203.0.113.7:40000", http.StatusForbidden, "remote peer not allowed without a bearer token"},
		{"[2001:db8::1]:40000", http.StatusForbidden, "remote peer not allowed without a bearer token"},
		{"127.0.0.1:40000", http.StatusOK, ""},
		{"[::1]:40000", http.StatusOK, ""},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(initializeBody))
		r.RemoteAddr = tt.remote
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.status || refusedBy(w.Body.String()) != tt.refusal {
			t.Errorf("peer %s: status %d %q, want %d %q", tt.remote, w.Code, w.Body.String(), tt.status, tt.refusal)
		}
	}
}

func TestServeHTTPRefusesNonLoopbackWithoutToken(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		err := mcptools.ServeHTTP(context.Background(), srv, &mcptools.HTTPOptions{Addr: addr}, nil)
		if !errors.Is(err, mcptools.ErrInsecureListen) {
			t.Errorf("%s: %v, want ErrInsecureListen", addr, err)
		}
	}
}

// TestHTTPEndToEnd serves over a real loopback listener with a token and
// uses the tools with the helikon client.
func TestHTTPEndToEnd(t *testing.T) {
	k := newKit(t)
	srv, err := mcptools.NewServer(helikon.MustToolset(k.tools...), &mcptools.ServerOptions[app]{Mode: helikon.ModePlan})
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, srv, &mcptools.HTTPOptions{Token: "tok"})
	ctx := context.Background()

	if _, err := mcptools.Connect[app](ctx, mcptools.HTTP(url, nil), nil); err == nil {
		t.Fatal("connected without the token")
	}
	src, err := mcptools.Connect[app](ctx, mcptools.HTTP(url, &mcptools.HTTPClientOptions{Token: "tok"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tools := toolsByName(t, src)
	out, err := invoke(tools["echo"], `{"text":"over http"}`)
	if err != nil || !strings.Contains(string(out), "over http") {
		t.Fatalf("echo: %s %v", out, err)
	}
	if _, err := invoke(tools["write_note"], `{"name":"a","body":"b"}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("write in plan mode over http: %v", err)
	}
}

// FuzzHTTPGuard: whatever the Host, Origin and Authorization headers, a
// request reaches the MCP handler only when the host is loopback or allowed,
// the origin is absent or allowed, and the token is right.
func FuzzHTTPGuard(f *testing.F) {
	for _, s := range [][3]string{
		{"127.0.0.1:8123", "", "Bearer s3cret"},
		{"evil.example", "", "Bearer s3cret"},
		{"localhost", "https://app.example", "Bearer s3cret"},
		{"[::1]", "http://evil", "Bearer x"},
		{"LOCALHOST.", "", "Bearer s3cret"},
		{"127.1", "", "Bearer s3cret"},
		{"0x7f000001", "", "Bearer s3cret"},
		{"127.0.0.1", "", "bEaReR  s3cret"},
		{"127.0.0.1", "", "Bearer\ts3cret"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	h := guardedHandler(f, "s3cret")
	f.Fuzz(func(t *testing.T, host, origin, auth string) {
		if strings.ContainsAny(host+origin+auth, "\r\n\x00/ ?#@") || host == "" {
			return
		}
		w := post(h, host, origin, auth)
		if refusedBy(w.Body.String()) != "" {
			return
		}
		hn := strings.ToLower(host)
		if hh, _, err := net.SplitHostPort(hn); err == nil {
			hn = hh
		}
		hn = strings.TrimSuffix(strings.TrimPrefix(hn, "["), "]")
		ip := net.ParseIP(hn)
		loop := strings.TrimSuffix(hn, ".") == "localhost" || ip != nil && ip.IsLoopback() || hn == "mcp.internal" || hn == "127.0.0.1"
		if !loop {
			t.Fatalf("host %q got through", host)
		}
		if origin != "" && strings.ToLower(strings.TrimSuffix(origin, "/")) != "https://app.example" {
			t.Fatalf("origin %q got through", origin)
		}
		// The scheme is case-insensitive, the token is not.
		if len(auth) < 7 || !strings.EqualFold(auth[:7], "bearer ") || strings.TrimLeft(auth[7:], " ") != "s3cret" {
			t.Fatalf("authorization %q got through", auth)
		}
	})
}

// TestHTTPRefusesMalformedPOSTs: what is not a JSON-RPC message over JSON is
// refused with a status that says why, before the SDK would take it.
func TestHTTPRefusesMalformedPOSTs(t *testing.T) {
	h := guardedHandler(t, "s3cret")
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("A", 10<<20) + `"}}`
	const json = "application/json"
	tests := []struct {
		name        string
		contentType []string
		body        string
		status      int
		want        string
	}{
		{"initialize", []string{json}, initializeBody, http.StatusOK, `"result"`},
		{"charset parameter", []string{"application/json; charset=utf-8"}, initializeBody, http.StatusOK, `"result"`},
		{"no method", []string{json}, `{"jsonrpc":"2.0","id":1}`, http.StatusBadRequest, `"code":-32600`},
		{"params but no method", []string{json}, `{"jsonrpc":"2.0","id":1,"params":{}}`, http.StatusBadRequest, `needs a \"method\"`},
		{"method in capitals", []string{json}, `{"jsonrpc":"2.0","id":1,"Method":"initialize"}`, http.StatusBadRequest, `"id":1`},
		{"no method in a batch", []string{json}, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2}]`, http.StatusBadRequest, `"id":2`},
		{"text/plain", []string{"text/plain"}, initializeBody, http.StatusUnsupportedMediaType, "Content-Type must be"},
		{"no content type", nil, initializeBody, http.StatusUnsupportedMediaType, "Content-Type must be"},
		// A proxy may read the last of two headers, the SDK reads the first.
		{"two content types", []string{json, "text/plain"}, initializeBody, http.StatusUnsupportedMediaType, "Content-Type must be"},
		{"10 MB body", []string{json}, big, http.StatusRequestEntityTooLarge, "request body exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(tt.body))
			r.Host = "127.0.0.1:8123"
			for _, ct := range tt.contentType {
				r.Header.Add("Content-Type", ct)
			}
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Authorization", "Bearer s3cret")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.want) {
				t.Fatalf("status %d %.300q, want %d and %q", w.Code, w.Body.String(), tt.status, tt.want)
			}
		})
	}
}

// FuzzHTTPBody: whatever the body of a POST, a JSON-RPC message with
// neither a method nor a result or error is refused with 400 and an Invalid
// Request error (never 202, as if it answered a server request), and no
// body makes the server fail.
func FuzzHTTPBody(f *testing.F) {
	for _, s := range []string{initializeBody, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","id":2}]`, `{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`, `[]`, `[1]`, `null`, `{`} {
		f.Add([]byte(s))
	}
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(f).tools...), nil)
	if err != nil {
		f.Fatal(err)
	}
	h := mcptools.HTTPHandler(srv, "127.0.0.1:8123", &mcptools.HTTPOptions{Token: "s3cret", MaxSessions: -1})
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
		r.Host = "127.0.0.1:8123"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer s3cret")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("body %q: status %d %q", body, w.Code, w.Body.String())
		}
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(body, &msgs) != nil {
			var m map[string]json.RawMessage
			if json.Unmarshal(body, &m) != nil || m == nil {
				return
			}
			msgs = append(msgs, m)
		}
		for _, m := range msgs {
			_, method := m["method"]
			_, result := m["result"]
			_, rerr := m["error"]
			if !method && !result && !rerr {
				if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":-32600`) {
					t.Fatalf("body %q without a method: status %d %q", body, w.Code, w.Body.String())
				}
				return
			}
		}
	})
}
