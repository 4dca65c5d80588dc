package webfetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/paigasus/helikon"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFetchRefusesEncodingsItCannotDecode: a body in a Content-Encoding
// WebFetch does not decode (brotli, zstd, compress, deflate, an unknown
// token, or gzip stacked with one of them, in one header line or two) is
// refused with ErrUnsupportedEncoding instead of being handed to the model
// as binary noise converted "as text". Before, the transport decoded only a
// Content-Encoding that was exactly "gzip" and passed every other one
// through.
func TestFetchRefusesEncodingsItCannotDecode(t *testing.T) {
	const page = "<html><title>T</title><body><p>hello</p></body></html>"
	gz := gzipped(t, []byte(page))
	tests := []struct {
		name   string
		header []string // Content-Encoding lines
		body   []byte
	}{
		{"br", []string{"br"}, []byte("\x1b\x36\x00\xf8\xa5\x40\xc2\xbb\x21")},
		{"zstd", []string{"zstd"}, []byte("\x28\xb5\x2f\xfd\x00\x58\x61\x00\x00page")},
		{"compress", []string{"compress"}, []byte("\x1f\x9d\x90page")},
		{"deflate", []string{"deflate"}, []byte("\x78\x9c\xcbH\xcd\xc9\xc9\x07\x00")},
		{"unknown token", []string{"x-helikon-unknown"}, []byte(page)},
		{"gzip then br", []string{"gzip, br"}, gz},
		{"br then gzip", []string{"br, gzip"}, gz},
		{"gzip and br on two lines", []string{"gzip", "br"}, gz},
		{"upper-case BR", []string{"BR"}, []byte(page)},
		{"gzip three times", []string{"gzip, gzip, gzip"}, gzipped(t, gzipped(t, gz))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				for _, v := range tt.header {
					w.Header().Add("Content-Encoding", v)
				}
				if r.URL.Path == "/missing" {
					w.WriteHeader(http.StatusNotFound)
				}
				w.Write(tt.body)
			}))
			tool, _ := New[struct{}](e.opts(Options{}))
			res, err := tool.Fetcher().Fetch(context.Background(), e.url("/"), 0)
			if !errors.Is(err, ErrUnsupportedEncoding) {
				t.Fatalf("Fetch: %+v, %v; want an error wrapping ErrUnsupportedEncoding", res, err)
			}
			if !strings.Contains(err.Error(), "cannot decode") && !strings.Contains(err.Error(), "at most") {
				t.Errorf("error %q does not say what happened", err)
			}
			if _, err := invoke(tool, Args{URL: e.url("/")}); !errors.Is(err, ErrUnsupportedEncoding) || helikon.KindOf(err) == helikon.KindDenied {
				t.Errorf("tool: %v, want an error wrapping ErrUnsupportedEncoding that is not a denial", err)
			}
			// An error page in such an encoding is a result with its status
			// and no content, like an error page in an unreadable type.
			res, err = tool.Fetcher().Fetch(context.Background(), e.url("/missing"), 0)
			if err != nil || res.Status != http.StatusNotFound || res.Content != "" {
				t.Errorf("404 page: %+v, %v; want status 404 and no content", res, err)
			}
		})
	}
}

// TestFetchDecodesGzip: gzip (x-gzip, any case, with identity, stacked
// twice, on one header line or two) is decoded; so is an empty gzip body.
func TestFetchDecodesGzip(t *testing.T) {
	const page = "<html><title>T</title><body><p>hello</p></body></html>"
	gz := gzipped(t, []byte(page))
	tests := []struct {
		name   string
		header []string
		body   []byte
		want   string
	}{
		{"none", nil, []byte(page), "hello"},
		{"identity", []string{"identity"}, []byte(page), "hello"},
		{"gzip", []string{"gzip"}, gz, "hello"},
		{"x-gzip", []string{"x-gzip"}, gz, "hello"},
		{"GZIP", []string{"GZIP"}, gz, "hello"},
		{"gzip and identity", []string{" gzip , identity"}, gz, "hello"},
		{"gzip twice", []string{"gzip, gzip"}, gzipped(t, gz), "hello"},
		{"gzip on two lines", []string{"gzip", "gzip"}, gzipped(t, gz), "hello"},
		{"empty gzip body", []string{"gzip"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotAE string
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotAE = r.Header.Get("Accept-Encoding")
				w.Header().Set("Content-Type", "text/html")
				for _, v := range tt.header {
					w.Header().Add("Content-Encoding", v)
				}
				w.Write(tt.body)
			}))
			tool, _ := New[struct{}](e.opts(Options{}))
			res, err := tool.Fetcher().Fetch(context.Background(), e.url("/"), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Content, tt.want) || tt.want == "" && res.Content != "" {
				t.Errorf("content %q, want %q", res.Content, tt.want)
			}
			if gotAE != "gzip" {
				t.Errorf("Accept-Encoding %q, want gzip (the only coding WebFetch decodes)", gotAE)
			}
		})
	}
}

// TestFetchCorruptGzipIsAnError: a body that claims gzip and is not fails
// instead of being converted raw.
func TestFetchCorruptGzipIsAnError(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("plainly not gzip"))
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	if res, err := tool.Fetcher().Fetch(context.Background(), e.url("/"), 0); err == nil {
		t.Fatalf("Fetch: %+v, want an error", res)
	}
}

// TestProxiedFetchRefusesLocalNames: through a proxy, the proxy resolves
// the name, and a proxy that is not helikon's egress proxy may resolve
// localhost to itself. Names that always mean loopback (RFC 6761 localhost
// and *.localhost, the /etc/hosts loopback names) and mDNS .local names are
// refused before the proxy sees them, on the first URL and on a redirect;
// with AllowPrivate they go through.
func TestProxiedFetchRefusesLocalNames(t *testing.T) {
	var mu sync.Mutex
	var got []string
	proxy := newPublicServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Host)
		mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("proxy admin page"))
	}))
	pu, _ := url.Parse(proxy.URL)
	names := []string{
		"localhost", "LOCALHOST", "localhost.", "admin.localhost", "a.b.localhost.", "localhost.localdomain",
		"localhost6", "localhost6.localdomain6", "ip6-localhost", "ip6-loopback", "printer.local", "router.LOCAL.",
	}
	f, err := NewFetcher(&Options{Proxy: pu})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		target := "http://" + n + ":8080/admin"
		if _, err := f.Fetch(context.Background(), target, 0); !Refused(err) || !strings.Contains(err.Error(), "name") {
			t.Errorf("proxied Fetch(%s): %v, want a refusal naming the loopback or link-local name", target, err)
		}
		if _, err := f.Fetch(context.Background(), "http://public.test/redirect?to="+url.QueryEscape(target), 0); !Refused(err) {
			t.Errorf("proxied redirect to %s: %v, want a refusal", target, err)
		}
	}
	mu.Lock()
	for _, h := range got {
		if h != "public.test" {
			t.Errorf("the proxy received a request for %q; local names must not reach it", h)
		}
	}
	got = nil
	mu.Unlock()
	for _, ok := range []string{"notlocalhost.example", "localhost.example", "local.example", "example.localdomain"} {
		if _, err := f.Fetch(context.Background(), "http://"+ok+"/", 0); err != nil {
			t.Errorf("proxied Fetch(%s): %v, want it sent to the proxy", ok, err)
		}
	}
	priv, err := NewFetcher(&Options{Proxy: pu, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := priv.Fetch(context.Background(), "http://localhost:8080/", 0); err != nil {
		t.Errorf("AllowPrivate, proxied Fetch(localhost): %v, want it sent to the proxy", err)
	}
}
