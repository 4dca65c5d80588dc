package websearch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/tool/websearch"
)

// TestDomainFiltersSeeInternationalizedHosts: a service may return a result
// URL with a Unicode host; a domain list written in ASCII (punycode) form,
// or in Unicode, must match it all the same, or a blocked site slips through
// by being spelt the other way.
func TestDomainFiltersSeeInternationalizedHosts(t *testing.T) {
	be := &fixed{results: []websearch.SearchResult{
		{Title: "unicode", URL: "https://bücher.example/1"},
		{Title: "punycode", URL: "https://xn--bcher-kva.example/2"},
		{Title: "upper case, trailing dot", URL: "https://BÜCHER.example./3"},
		{Title: "subdomain", URL: "https://www.bücher.example/4"},
		{Title: "percent-encoded", URL: "https://b%C3%BCcher.example/5"},
		{Title: "other", URL: "https://other.example/6"},
	}}
	for _, blocked := range []string{"xn--bcher-kva.example", "bücher.example"} {
		tool, err := websearch.New[struct{}](be, &websearch.Options{BlockedDomains: []string{blocked}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := call(t, tool, `{"query":"q","limit":20}`)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Results) != 1 || out.Results[0].Title != "other" {
			t.Errorf("blocked %s: %+v, want only the other.example result", blocked, out.Results)
		}
	}
	tool, err := websearch.New[struct{}](be, &websearch.Options{AllowedDomains: []string{"xn--bcher-kva.example"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := call(t, tool, `{"query":"q","limit":20}`)
	if len(out.Results) != 5 {
		t.Errorf("allowed xn--bcher-kva.example: %d results %+v, want the 5 bücher.example ones", len(out.Results), out.Results)
	}
}

// TestResultURLsCarryNoUserinfo: a result URL such as
// https://good.example@evil.example/ reads as good.example to a model but
// goes to evil.example; the searchers drop the userinfo, and the domain
// lists judge the real host.
func TestResultURLsCarryNoUserinfo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/search") && r.Method == http.MethodPost {
			w.Write([]byte(`{"results":[{"title":"t","url":"https://good.example:pw@evil.example/p","content":"c"}]}`))
			return
		}
		w.Write([]byte(`{"web":{"results":[{"title":"t","url":"https://good.example@evil.example/p","description":"d"}]}}`))
	}))
	defer srv.Close()
	for _, be := range newSearchers(t, srv.URL) {
		res, err := be.Search(context.Background(), "q", 5)
		if err != nil || len(res) != 1 {
			t.Fatalf("%s: %+v %v", be.Name(), res, err)
		}
		if res[0].URL != "https://evil.example/p" {
			t.Errorf("%s: result URL %q, want https://evil.example/p (no userinfo)", be.Name(), res[0].URL)
		}
	}
}

// TestSearcherResponseIsCapped: an endless or huge answer (a hostile gateway
// at BaseURL) is read up to a cap, not into memory whole.
func TestSearcherResponseIsCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"results":[],"web":{"results":[]}`))
		pad := []byte(strings.Repeat(" ", 1<<20))
		for range 9 { // 9 MiB of padding, then the end of a valid document
			if _, err := w.Write(pad); err != nil {
				return
			}
		}
		w.Write([]byte(`}`))
	}))
	defer srv.Close()
	for _, be := range newSearchers(t, srv.URL) {
		_, err := be.Search(context.Background(), "q", 5)
		if !errors.Is(err, websearch.ErrBadResponse) {
			t.Errorf("%s: %v, want ErrBadResponse for a 9 MiB answer", be.Name(), err)
		}
	}
}

// TestRetryAfterOutOfRange: a Retry-After too large for a time.Duration must
// not wrap around into a negative or tiny wait.
func TestRetryAfterOutOfRange(t *testing.T) {
	srv, _ := fakeService(t, 429, map[string]string{"Retry-After": "99999999999999999"}, "")
	for _, be := range newSearchers(t, srv.URL) {
		_, err := be.Search(context.Background(), "q", 5)
		var rl *websearch.RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("%s: %v, want a RateLimitError", be.Name(), err)
		}
		if rl.RetryAfter < 24*60*60*1e9 || strings.Contains(err.Error(), "-") {
			t.Errorf("%s: RetryAfter %v (%v); a huge Retry-After must stay a long wait", be.Name(), rl.RetryAfter, err)
		}
	}
}

// TestDomainFiltersKeepUnderscoreHosts: real host names carry '_', which
// IDNA's lookup profile rejects; an ASCII host must be matched as it is.
func TestDomainFiltersKeepUnderscoreHosts(t *testing.T) {
	be := &fixed{results: []websearch.SearchResult{{Title: "u", URL: "https://my_site.example/"}}}
	tool, _ := websearch.New[struct{}](be, &websearch.Options{AllowedDomains: []string{"example"}})
	if out, err := call(t, tool, `{"query":"q"}`); err != nil || len(out.Results) != 1 {
		t.Errorf("underscore host with an allow list: %+v %v, want it kept", out, err)
	}
}

// TestResultURLsAreHTTPOnly: a result URL with a host but another scheme
// (javascript://host/%0A..., file://, ftp://) never reaches the model.
func TestResultURLsAreHTTPOnly(t *testing.T) {
	bad := []string{"javascript://example.com/%0Aalert(1)", "file://example.com/etc/passwd", "ftp://example.com/f", "data://example.com/x", "//example.com/p", "/relative"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var items []string
		for _, u := range append(bad, "https://ok.example/") {
			if r.Method == http.MethodPost {
				items = append(items, `{"title":"t","url":"`+u+`","content":"c"}`)
			} else {
				items = append(items, `{"title":"t","url":"`+u+`","description":"d"}`)
			}
		}
		list := "[" + strings.Join(items, ",") + "]"
		w.Write([]byte(`{"results":` + list + `,"web":{"results":` + list + `}}`))
	}))
	defer srv.Close()
	for _, be := range newSearchers(t, srv.URL) {
		res, err := be.Search(context.Background(), "q", 20)
		if err != nil || len(res) != 1 || res[0].URL != "https://ok.example/" {
			t.Errorf("%s: %+v %v, want only https://ok.example/", be.Name(), res, err)
		}
	}
}

// TestUnreachableErrorOmitsTheURL: a transport error must not repeat the
// request URL, which can carry a gateway's credentials in BaseURL's query
// (and, for Brave, the user's query).
func TestUnreachableErrorOmitsTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL + "/?gwkey=GATEWAY-SECRET"
	srv.Close() // nothing listens there any more
	for _, be := range newSearchers(t, base) {
		_, err := be.Search(context.Background(), "private query words", 5)
		if !errors.Is(err, websearch.ErrUnavailable) {
			t.Fatalf("%s: %v, want ErrUnavailable", be.Name(), err)
		}
		for _, s := range []string{"GATEWAY-SECRET", "private", testKey} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error repeats %q: %v", be.Name(), s, err)
			}
		}
	}
}

// TestSearcherGzipBombIsCapped: the transport inflates gzip as it reads, so
// the cap counts inflated bytes; a small compressed answer cannot expand
// past it.
func TestSearcherGzipBombIsCapped(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(`{"results":[],"web":{"results":[]}`))
	zw.Write(bytes.Repeat([]byte(" "), 64<<20))
	zw.Write([]byte(`}`))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(buf.Bytes())
	}))
	defer srv.Close()
	for _, be := range newSearchers(t, srv.URL) {
		if _, err := be.Search(context.Background(), "q", 5); !errors.Is(err, websearch.ErrBadResponse) {
			t.Errorf("%s: %v, want ErrBadResponse for a %d KiB gzip answer inflating to 64 MiB", be.Name(), err, buf.Len()>>10)
		}
	}
}

// TestSearcherSlowServerHonoursTheContext: a service that drips its answer
// costs the caller's deadline, not the client's 30 s. The searchers get a
// client without a timeout of its own, so a searcher that ignored the context
// would never return and the test would fail (by the test timeout) instead
// of passing after 30 s.
func TestSearcherSlowServerHonoursTheContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"results":[`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	noTimeout := &http.Client{}
	brave, err := websearch.NewBrave(&websearch.ServiceOptions{APIKey: testKey, BaseURL: srv.URL, HTTPClient: noTimeout})
	if err != nil {
		t.Fatal(err)
	}
	tavily, err := websearch.NewTavily(&websearch.ServiceOptions{APIKey: testKey, BaseURL: srv.URL + "/", HTTPClient: noTimeout})
	if err != nil {
		t.Fatal(err)
	}
	for _, be := range []websearch.Searcher{brave, tavily} {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := be.Search(ctx, "q", 5)
		cancel()
		if err == nil || !(errors.Is(err, websearch.ErrUnavailable) || errors.Is(err, websearch.ErrBadResponse)) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%s: %v, want a failure at the context's deadline", be.Name(), err)
		}
	}
}
