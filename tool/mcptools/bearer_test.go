package mcptools_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/tool/mcptools"
)

// TestBearerTokenIsNotSentToAnotherHost: an MCP endpoint that redirects to
// another host does not get the token forwarded there (the client adds the
// token itself, so the standard library's stripping of Authorization on
// cross-host redirects would not apply).
func TestBearerTokenIsNotSentToAnotherHost(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer other.Close()
	// Another port of 127.0.0.1 is another origin; "localhost" makes the
	// host name differ as well.
	target := "http://localhost:" + other.Listener.Addr().(*net.TCPAddr).String()[len("127.0.0.1:"):] + "/mcp"
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	_, err := mcptools.Connect[app](context.Background(), mcptools.HTTP(redirector.URL+"/mcp", &mcptools.HTTPClientOptions{Token: "tok-secret"}), nil)
	if err == nil {
		t.Fatal("connected to a server that only redirects")
	}
	v := leaked.Load()
	if v == nil {
		t.Fatal("the redirect was not followed: the test proves nothing")
	}
	if got := v.(string); got != "" {
		t.Errorf("the token was sent to the redirect target: Authorization %q", got)
	}
}
