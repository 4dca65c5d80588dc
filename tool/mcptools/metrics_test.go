package mcptools_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/mcptools"
)

// get sends a GET to url with the bearer token tok ("" for none) and
// returns the status and body.
func get(t *testing.T, url, tok string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitMetric scrapes url until its exposition holds line, failing after
// a generous deadline (the line depends on a session ending in the
// background); it returns the last scrape.
func waitMetric(t *testing.T, url, tok, line string) string {
	t.Helper()
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, body = get(t, url, tok); strings.Contains(body, line+"\n") {
			return body
		}
	}
	t.Fatalf("no %q in the metrics:\n%s", line, body)
	return ""
}

// TestHTTPMetricsAndProbes serves over a real loopback listener with a
// token, one session at most and metrics: the probes answer without the
// token, /metrics only with it, and the metrics count the session, the
// calls by tool and outcome, the decisions by stage, and a call running.
func TestHTTPMetricsAndProbes(t *testing.T) {
	k := newKit(t)
	m := mcptools.NewMetrics()
	srv, err := mcptools.NewServer(helikon.MustToolset(k.tools...), &mcptools.ServerOptions[app]{
		Mode:        helikon.ModePlan,
		Permissions: &helikon.Permissions{Deny: helikon.MustParseRules("fail"), Allow: helikon.MustParseRules("slow")},
		Metrics:     m,
	})
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, srv, &mcptools.HTTPOptions{Token: "tok", MaxSessions: 1, Metrics: m})
	metrics := url + "metrics"

	if code, body := get(t, url+"healthz", ""); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz without a token: %d %q", code, body)
	}
	if code, body := get(t, url+"readyz", ""); code != http.StatusOK {
		t.Fatalf("/readyz with no session: %d %q", code, body)
	}
	if code, _ := get(t, metrics, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get(t, metrics, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong token: %d, want 401", code)
	}
	waitMetric(t, metrics, "tok", "helikon_mcp_sessions_open 0")

	src, err := mcptools.Connect[app](t.Context(), mcptools.HTTP(url, &mcptools.HTTPClientOptions{Token: "tok"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := toolsByName(t, src)
	if _, err := invoke(tools["echo"], `{"text":"hi"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(tools["write_note"], `{"name":"a","body":"b"}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("write_note in plan mode: %v, want denied", err)
	}
	if _, err := invoke(tools["fail"], `{}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("fail under a deny rule: %v, want denied", err)
	}
	if code, body := get(t, url+"readyz", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "session") {
		t.Fatalf("/readyz at the session cap: %d %q, want 503 with the reason", code, body)
	}

	// A call running shows while it runs.
	ctx, cancel := context.WithCancel(t.Context())
	slowDone := make(chan error, 1)
	go func() {
		_, err := tools["slow"].Invoke(helikon.NewToolContext(ctx, app{}, nil), []byte(`{}`))
		slowDone <- err
	}()
	select {
	case <-k.started:
	case err := <-slowDone:
		t.Fatalf("slow ended before it started: %v", err)
	}
	waitMetric(t, metrics, "tok", `helikon_mcp_calls_running{tool="slow"} 1`)
	cancel()
	<-slowDone

	body := waitMetric(t, metrics, "tok", `helikon_mcp_calls_running{tool="slow"} 0`)
	for _, line := range []string{
		"helikon_mcp_sessions_open 1",
		`helikon_mcp_calls_total{outcome="ok",tool="echo"} 1`,
		`helikon_mcp_calls_total{outcome="denied",tool="write_note"} 1`,
		`helikon_mcp_calls_total{outcome="denied",tool="fail"} 1`,
		`helikon_mcp_decisions_total{decision="deny",stage="mode"} 1`,
		`helikon_mcp_decisions_total{decision="deny",stage="deny_rule"} 1`,
		`helikon_mcp_decisions_total{decision="allow",stage="allow_rule"} 1`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, line) {
			t.Errorf("no %q in the metrics:\n%s", line, body)
		}
	}
	if !strings.Contains(body, `helikon_mcp_decisions_total{decision="allow",`) {
		t.Errorf("no allow decision counted (echo and slow ran):\n%s", body)
	}

	src.Close()
	waitMetric(t, metrics, "tok", "helikon_mcp_sessions_open 0")
	if code, body := get(t, url+"readyz", ""); code != http.StatusOK {
		t.Fatalf("/readyz after the session ended: %d %q", code, body)
	}
}

// TestHTTPProbePaths: which checks the probe and metrics paths pass
// through, on a handler with a token and metrics, and without metrics.
func TestHTTPProbePaths(t *testing.T) {
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(t).tools...), nil)
	if err != nil {
		t.Fatal(err)
	}
	with := mcptools.HTTPHandler(srv, "127.0.0.1:8123", &mcptools.HTTPOptions{Token: "tok", Metrics: mcptools.NewMetrics()})
	without := mcptools.HTTPHandler(srv, "127.0.0.1:8123", &mcptools.HTTPOptions{Token: "tok"})
	const pod = "10.0.0.5:8080" // a kubelet's probe or a scraper names the pod's address
	for _, tt := range []struct {
		name                       string
		h                          http.Handler
		method, path, host, origin string
		auth                       string
		status                     int
	}{
		{"liveness from the kubelet", with, "GET", "/healthz", pod, "", "", 200},
		{"readiness from the kubelet", with, "GET", "/readyz", pod, "", "", 200},
		{"probe with HEAD", with, "HEAD", "/healthz", pod, "", "", 200},
		{"probe with POST", with, "POST", "/healthz", pod, "", "", 405},
		{"probe without metrics", without, "GET", "/healthz", pod, "", "", 200},
		{"metrics from a scraper", with, "GET", "/metrics", pod, "", "Bearer tok", 200},
		{"metrics without the token", with, "GET", "/metrics", pod, "", "", 401},
		{"metrics from a browser", with, "GET", "/metrics", "127.0.0.1:8123", "http://evil.example", "Bearer tok", 403},
		{"metrics with POST", with, "POST", "/metrics", "127.0.0.1:8123", "", "Bearer tok", 404},
		{"metrics not configured", without, "GET", "/metrics", "127.0.0.1:8123", "", "Bearer tok", 404},
		{"MCP still checks the host", with, "GET", "/", pod, "", "Bearer tok", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://127.0.0.1"+tt.path, nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			tt.h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d %q, want %d", w.Code, w.Body.String(), tt.status)
			}
		})
	}
}
