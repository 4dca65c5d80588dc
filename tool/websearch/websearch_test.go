package websearch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/websearch"
)

const testKey = "sk-test-4f1c9e0d-NEVER-LEAK"

// recorded is what a fake service saw.
type recorded struct {
	mu      sync.Mutex
	method  string
	path    string
	query   map[string][]string
	headers http.Header
	body    []byte
}

func fakeService(t *testing.T, status int, header map[string]string, fixture string) (*httptest.Server, *recorded) {
	t.Helper()
	rec := &recorded{}
	var payload []byte
	if fixture != "" {
		var err error
		if payload, err = os.ReadFile("testdata/" + fixture); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.method, rec.path, rec.query, rec.headers, rec.body = r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), b
		rec.mu.Unlock()
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if payload != nil {
			w.Write(payload)
		} else {
			// An error body that echoes the request, as some gateways do:
			// it must not reach the error message.
			fmt.Fprintf(w, `{"error":"bad key %s","headers":%q}`, r.Header.Get("X-Subscription-Token")+r.Header.Get("Authorization"), r.Header)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func newSearchers(t *testing.T, base string) []websearch.Searcher {
	t.Helper()
	b, err := websearch.NewBrave(&websearch.ServiceOptions{APIKey: testKey, BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	tv, err := websearch.NewTavily(&websearch.ServiceOptions{APIKey: testKey, BaseURL: base + "/"})
	if err != nil {
		t.Fatal(err)
	}
	return []websearch.Searcher{b, tv}
}

func TestBraveMapsDocumentedResponse(t *testing.T) {
	srv, rec := fakeService(t, 200, nil, "brave_web_search.json")
	b, _ := websearch.NewBrave(&websearch.ServiceOptions{APIKey: testKey, BaseURL: srv.URL})
	res, err := b.Search(context.Background(), "go ssrf guard", 7)
	if err != nil {
		t.Fatal(err)
	}
	if rec.method != http.MethodGet || rec.path != "/res/v1/web/search" || rec.query["q"][0] != "go ssrf guard" || rec.query["count"][0] != "7" {
		t.Errorf("request: %s %s %v", rec.method, rec.path, rec.query)
	}
	if rec.headers.Get("X-Subscription-Token") != testKey || rec.headers.Get("Accept") != "application/json" {
		t.Errorf("headers: %v", rec.headers)
	}
	want := []websearch.SearchResult{
		{Title: "Preventing SSRF in Go & friends", URL: "https://blog.example.com/ssrf-go",
			Snippet: "How to check addresses at connect time with net.Dialer.Control — and why a <pre-check> is not enough.",
			Content: "The Control hook runs before connect(2).\nDNS rebinding is closed this way."},
		{Title: "net package - net - Go Packages", URL: "https://pkg.go.dev/net#Dialer", Snippet: "A Dialer contains options for connecting to an address."},
		{Title: "Tracker page", URL: "https://ads.tracker.example/landing", Snippet: "Sponsored."},
	}
	if len(res) != len(want) {
		t.Fatalf("got %d results %+v, want %d (the javascript: URL dropped)", len(res), res, len(want))
	}
	for i := range want {
		if res[i] != want[i] {
			t.Errorf("result %d:\n got %+v\nwant %+v", i, res[i], want[i])
		}
	}
}

func TestTavilyMapsDocumentedResponse(t *testing.T) {
	srv, rec := fakeService(t, 200, nil, "tavily_search.json")
	tv, _ := websearch.NewTavily(&websearch.ServiceOptions{APIKey: testKey, BaseURL: srv.URL})
	res, err := tv.Search(context.Background(), "go ssrf guard", 50)
	if err != nil {
		t.Fatal(err)
	}
	if rec.method != http.MethodPost || rec.path != "/search" || rec.headers.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("request: %s %s %v", rec.method, rec.path, rec.headers)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.body, &body); err != nil || body["query"] != "go ssrf guard" || body["max_results"] != float64(20) || body["search_depth"] != "basic" {
		t.Errorf("body %s (%v): want the query, max_results capped at 20, basic depth", rec.body, err)
	}
	if strings.Contains(string(rec.body), testKey) {
		t.Error("the key went into the request body; Tavily takes it as a bearer token")
	}
	if len(res) != 3 || res[0].Title != "Preventing SSRF in Go" || res[0].Snippet != "How to check addresses at connect time with net.Dialer.Control." || res[0].Content != "" ||
		res[1].Content != "Package net provides a portable interface for network I/O." {
		t.Errorf("results: %+v", res)
	}
}

func TestSearcherErrorsSayWhatHappenedWithoutSecrets(t *testing.T) {
	cases := []struct {
		status   int
		header   map[string]string
		is       error
		contains string
		retry    time.Duration
	}{
		{401, nil, websearch.ErrUnauthorized, "_API_KEY", 0},
		{403, nil, websearch.ErrUnauthorized, "HTTP 403", 0},
		{429, map[string]string{"Retry-After": "17"}, websearch.ErrRateLimited, "retry after 17s", 17 * time.Second},
		{429, nil, websearch.ErrRateLimited, "wait a minute", 0},
		{500, nil, websearch.ErrUnavailable, "try again later", 0},
		{503, map[string]string{"Retry-After": "5"}, websearch.ErrUnavailable, "HTTP 503", 0},
		{422, nil, nil, "HTTP 422", 0},
	}
	for _, tc := range cases {
		srv, _ := fakeService(t, tc.status, tc.header, "")
		for _, b := range newSearchers(t, srv.URL) {
			_, err := b.Search(context.Background(), "secret query words", 5)
			if err == nil {
				t.Fatalf("%s %d: no error", b.Name(), tc.status)
			}
			msg := err.Error()
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%s %d: %v, want %v", b.Name(), tc.status, err, tc.is)
			}
			if !strings.Contains(msg, tc.contains) {
				t.Errorf("%s %d: %q does not say %q", b.Name(), tc.status, msg, tc.contains)
			}
			for _, secret := range []string{testKey, "NEVER-LEAK", "Bearer", "X-Subscription-Token", "secret query", "bad key"} {
				if strings.Contains(msg, secret) {
					t.Errorf("%s %d: the error leaks %q: %s", b.Name(), tc.status, secret, msg)
				}
			}
			var rl *websearch.RateLimitError
			if errors.As(err, &rl) && rl.RetryAfter != tc.retry {
				t.Errorf("%s %d: RetryAfter %s, want %s", b.Name(), tc.status, rl.RetryAfter, tc.retry)
			}
		}
	}
}

func TestSearcherBadJSONAndUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>gateway</html>") }))
	defer srv.Close()
	for _, b := range newSearchers(t, srv.URL) {
		if _, err := b.Search(context.Background(), "q", 3); !errors.Is(err, websearch.ErrBadResponse) || strings.Contains(err.Error(), "gateway") {
			t.Errorf("%s: %v, want ErrBadResponse without the body", b.Name(), err)
		}
	}
	srv.Close()
	for _, b := range newSearchers(t, srv.URL) {
		_, err := b.Search(context.Background(), "q", 3)
		if !errors.Is(err, websearch.ErrUnavailable) || strings.Contains(err.Error(), testKey) {
			t.Errorf("%s unreachable: %v", b.Name(), err)
		}
	}
}

func TestSearcherKeyFromEnvironment(t *testing.T) {
	t.Setenv(websearch.BraveKeyEnv, "")
	t.Setenv(websearch.TavilyKeyEnv, "")
	if _, err := websearch.NewBrave(nil); !errors.Is(err, websearch.ErrNoAPIKey) || !strings.Contains(err.Error(), "BRAVE_API_KEY") {
		t.Errorf("NewBrave without a key: %v", err)
	}
	if _, err := websearch.NewTavily(nil); !errors.Is(err, websearch.ErrNoAPIKey) || !strings.Contains(err.Error(), "TAVILY_API_KEY") {
		t.Errorf("NewTavily without a key: %v", err)
	}
	srv, rec := fakeService(t, 200, nil, "brave_web_search.json")
	t.Setenv(websearch.BraveKeyEnv, "env-key")
	b, err := websearch.NewBrave(&websearch.ServiceOptions{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Search(context.Background(), "q", 1); err != nil || rec.headers.Get("X-Subscription-Token") != "env-key" {
		t.Errorf("key from environment: %v, header %q", err, rec.headers.Get("X-Subscription-Token"))
	}
	if _, err := websearch.NewBrave(&websearch.ServiceOptions{APIKey: "k", BaseURL: "ftp://x"}); err == nil {
		t.Error("an ftp base URL was accepted")
	}
}

// fixed is a searcher returning canned results and recording the limit.
type fixed struct {
	results []websearch.SearchResult
	limit   int
	err     error
}

func (f *fixed) Name() string { return "fixed" }
func (f *fixed) Search(_ context.Context, _ string, limit int) ([]websearch.SearchResult, error) {
	f.limit = limit
	if f.err != nil {
		return nil, f.err
	}
	if limit < len(f.results) {
		return f.results[:limit], nil
	}
	return f.results, nil
}

func many(n int) []websearch.SearchResult {
	var out []websearch.SearchResult
	for i := range n {
		host := "good.example"
		if i%2 == 1 {
			host = "spam.example"
		}
		out = append(out, websearch.SearchResult{Title: fmt.Sprint(i), URL: fmt.Sprintf("https://%s/%d", host, i), Snippet: "s"})
	}
	return out
}

func call(t *testing.T, tool *websearch.Tool[struct{}], args string) (websearch.Output, error) {
	t.Helper()
	out, err := tool.Invoke(helikon.NewToolContext(context.Background(), struct{}{}, nil), json.RawMessage(args))
	if err != nil {
		return websearch.Output{}, err
	}
	var o websearch.Output
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatal(err)
	}
	return o, nil
}

func TestToolLimitsAndDomainFilters(t *testing.T) {
	be := &fixed{results: many(30)}
	tool, err := websearch.New[struct{}](be, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      string
		want, ask int
	}{
		{`{"query":"q"}`, 5, 5},
		{`{"query":"q","limit":3}`, 3, 3},
		{`{"query":"q","limit":99}`, 20, 20},
	} {
		out, err := call(t, tool, tc.args)
		if err != nil || len(out.Results) != tc.want || be.limit != tc.ask {
			t.Errorf("%s: %d results (asked searcher for %d), %v; want %d", tc.args, len(out.Results), be.limit, err, tc.want)
		}
	}
	tool, _ = websearch.New[struct{}](be, &websearch.Options{DefaultResults: 4, MaxResults: 6, BlockedDomains: []string{"spam.example"}})
	out, err := call(t, tool, `{"query":"q"}`)
	if err != nil || len(out.Results) != 4 {
		t.Fatalf("blocked domains: %+v %v", out, err)
	}
	for _, r := range out.Results {
		if strings.Contains(r.URL, "spam.example") {
			t.Errorf("blocked domain in results: %s", r.URL)
		}
	}
	tool, _ = websearch.New[struct{}](be, &websearch.Options{AllowedDomains: []string{"*.example"}, BlockedDomains: []string{"good.example"}})
	if out, _ := call(t, tool, `{"query":"q","limit":20}`); len(out.Results) != 10 {
		t.Errorf("allowed *.example minus good.example: %d results, want the 10 spam.example ones", len(out.Results))
	}
	for _, args := range []string{`{}`, `{"query":"  "}`, `{"query":"q","limit":-1}`, `{"query":1}`} {
		if _, err := call(t, tool, args); helikon.KindOf(err) != helikon.KindInvalidArgs {
			t.Errorf("%s: %v, want invalid arguments", args, err)
		}
	}
	if _, err := websearch.New[struct{}](nil, nil); err == nil {
		t.Error("a nil searcher was accepted")
	}
	if _, err := websearch.New[struct{}](be, &websearch.Options{AllowedDomains: []string{"bad pattern"}}); err == nil {
		t.Error("an invalid domain pattern was accepted")
	}
}

func TestToolReportsSearcherErrorsAsOther(t *testing.T) {
	tool, _ := websearch.New[struct{}](&fixed{err: &websearch.RateLimitError{Service: "fixed", RetryAfter: time.Second}}, nil)
	_, err := call(t, tool, `{"query":"q"}`)
	if helikon.KindOf(err) != helikon.KindOther || !errors.Is(err, websearch.ErrRateLimited) {
		t.Errorf("%v, want an other error wrapping ErrRateLimited", err)
	}
	if out, err := call(t, func() *websearch.Tool[struct{}] {
		tl, _ := websearch.New[struct{}](&fixed{}, nil)
		return tl
	}(), `{"query":"q"}`); err != nil || out.Results == nil {
		t.Errorf("no results must be an empty list, got %+v %v", out, err)
	}
}

func TestToolEndToEndAndTargets(t *testing.T) {
	srv, _ := fakeService(t, 200, nil, "brave_web_search.json")
	b, _ := websearch.NewBrave(&websearch.ServiceOptions{APIKey: testKey, BaseURL: srv.URL})
	tool, _ := websearch.New[struct{}](b, &websearch.Options{BlockedDomains: []string{"tracker.example"}})
	out, err := call(t, tool, `{"query":"go ssrf guard"}`)
	if err != nil || len(out.Results) != 2 || out.Results[1].URL != "https://pkg.go.dev/net#Dialer" {
		t.Fatalf("%+v %v", out, err)
	}
	tg, _ := tool.Targets(nil)
	if len(tg.Hosts) != 1 || tg.Hosts[0] != "127.0.0.1" {
		t.Errorf("targets %+v, want the API host", tg)
	}
	tg, _ = func() (helikon.Targets, error) {
		tl, _ := websearch.New[struct{}](&fixed{}, nil)
		return tl.Targets(nil)
	}()
	if tg.Unresolved == "" {
		t.Error("a searcher without Host must leave the targets unresolved")
	}
	if helikon.EffectOf(tool) != helikon.EffectSideEffect || tool.Name() != websearch.Name {
		t.Error("WebSearch must be a side effect named WebSearch")
	}
}
