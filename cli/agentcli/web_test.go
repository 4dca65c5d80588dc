package agentcli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

func runWeb(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	code := cli.Main(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestWebCommands(t *testing.T) {
	trip := ssrftest.NewTripwire(t, "127.0.0.1:0")
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Dev page</title></head><body><nav>menu</nav><article><h1>Dev page</h1><p>Hello from the development server, with enough words to count as an article paragraph for the extractor.</p></article></body></html>`)
	}))
	defer page.Close()
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "k-123" {
			w.WriteHeader(401)
			return
		}
		fmt.Fprint(w, `{"type":"search","web":{"results":[{"title":"Go","url":"https://go.dev/","description":"The Go language"}]}}`)
	}))
	defer brave.Close()
	key := map[string]string{"BRAVE_API_KEY": "k-123"}
	blocked := fmt.Sprintf("http://127.0.0.1:%d/", trip.Port())
	cases := []struct {
		name   string
		vars   map[string]string
		args   []string
		code   int
		stdout string
	}{
		{"fetch loopback denied", nil, []string{"fetch", blocked}, 3, `"kind":"denied"`},
		{"fetch numeric spelling denied", nil, []string{"fetch", fmt.Sprintf("http://2130706433:%d/", trip.Port())}, 3, `blocked address`},
		{"fetch file scheme denied", nil, []string{"fetch", "file:///etc/passwd"}, 3, `scheme not allowed`},
		{"fetch deny-host", nil, []string{"fetch", "--allow-private", "--deny-host", "127.0.0.1", page.URL}, 3, `denied host list`},
		{"fetch allow-private", nil, []string{"fetch", "--allow-private", page.URL}, 0, `"title":"Dev page"`},
		{"fetch markdown", nil, []string{"fetch", page.URL, "--allow-private", "--markdown"}, 0, "Hello from the development server"},
		{"fetch no url", nil, []string{"fetch"}, 125, ""},
		{"search", key, []string{"search", "golang", "--backend", "brave", "--base-url", brave.URL, "--limit", "3"}, 0, `"url":"https://go.dev/"`},
		{"search bad key", map[string]string{"BRAVE_API_KEY": "wrong"}, []string{"search", "golang", "--base-url", brave.URL}, 1, `check BRAVE_API_KEY`},
		{"search no key", nil, []string{"search", "golang"}, 125, ""},
		{"search bad backend", key, []string{"search", "golang", "--backend", "bing"}, 125, ""},
		{"tool WebFetch metadata", nil, []string{"tool", "WebFetch", `{"url":"http://169.254.169.254/latest/meta-data/"}`}, 3, `cloud metadata`},
		{"tool WebFetch loopback", nil, []string{"tool", "WebFetch", `{"url":"` + blocked + `"}`}, 3, `blocked address`},
		{"tool WebFetch allow-private", nil, []string{"tool", "--allow-private", "WebFetch", `{"url":"` + page.URL + `"}`}, 0, `"status":200`},
		{"tool WebFetch permission rule", nil, []string{"tool", "--deny", "WebFetch(example.com)", "WebFetch", `{"url":"https://www.example.com/"}`}, 3, `"kind":"denied"`},
		{"tool WebSearch", key, []string{"tool", "--search-base-url", brave.URL, "WebSearch", `{"query":"go"}`}, 0, `"title":"Go"`},
		{"tool WebSearch without key", nil, []string{"tool", "WebSearch", `{"query":"go"}`}, 125, `BRAVE_API_KEY`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runWeb(t, tc.vars, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if code != 0 && stderr == "" {
				t.Error("a failure without a message on stderr")
			}
			if strings.Contains(stdout+stderr, "k-123") {
				t.Error("the API key was printed")
			}
			if code == 0 && strings.HasPrefix(stdout, "{") {
				var v map[string]any
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Errorf("stdout is not JSON: %v", err)
				}
			}
		})
	}
	trip.AssertUntouched(t)
}
