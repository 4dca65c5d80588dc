package webfetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

func TestConvertFixtures(t *testing.T) {
	page, _ := url.Parse("https://news.example.com/2024/05/river.html")
	cases := []struct {
		file, contentType, title string
		want, wantNot            []string
	}{
		{
			file: "news.html", contentType: "text/html; charset=utf-8",
			title: "City council approves river restoration plan",
			want: []string{
				"## Farmers remain sceptical", "### What the plan includes",
				"- Removal of the Mill Street and Brook Lane weirs",
				"[project page](https://news.example.com/council/river-plan)",
				"[regional radio station](https://example.org/radio)",
				"> We have waited thirty years",
			},
			wantNot: []string{"cookies", "Accept all", "dataLayer", "Sport", "Subscribe", "All rights reserved", "Buy a new kitchen", "font-family", "Most read"},
		},
		{
			file: "docs.html", contentType: "text/html",
			title: "Configuring retries — Pipewright 2.3 documentation",
			want: []string{
				"## The retry policy", "```toml\n[retry]\nattempts = 5", "```python\nfrom pipewright import step, Retry",
				"1. Connection resets and timeouts.", "`max_delay`",
				"[the error reference](https://news.example.com/2024/api/errors.html)",
			},
			wantNot: []string{"Skip to content", "Installation", "DOCUMENTATION_OPTIONS", "Built with Sphinx", "Next: Timeouts"},
		},
		{
			file: "table_code.html", contentType: "text/html",
			title: "Benchmarking hash maps in Go and Rust",
			want: []string{
				"| Implementation | Insert (ns/op) |", "| Rust HashMap (FxHash) | 39 | 12 | 48 |", "|---|---|",
				"```go\nfunc BenchmarkInsert(b *testing.B) {",
				"```rust\nfn insert(c: &mut Criterion) {",
				"[this archive](https://news.example.com/files/hashbench.tar.gz)",
			},
			wantNot: []string{"Archive", "About", "swiss tables", "powered by"},
		},
		{
			file: "latin1.html", contentType: "text/html", // charset only in <meta>
			title:   "grand-mère",
			want:    []string{"Voici la recette que ma grand-mère préparait", "## Préparation", "200 °C", "Ça se mange sans faim"},
			wantNot: []string{"\ufffd", "Accueil", "Tous droits"},
		},
		{
			file: "shift_jis.html", contentType: "text/html; charset=Shift_JIS", // charset only in the header
			title:   "東京の天気予報",
			want:    []string{"明日の東京は、朝のうちは晴れますが", "気象庁によると"},
			wantNot: []string{"\ufffd"},
		},
	}
	for _, tc := range cases {
		b, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Convert(b, tc.contentType, page)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if d.Format != FormatMarkdown || !strings.Contains(d.Title, tc.title) {
			t.Errorf("%s: format %q title %q, want markdown and a title with %q", tc.file, d.Format, d.Title, tc.title)
		}
		for _, w := range tc.want {
			if !strings.Contains(d.Content, w) {
				t.Errorf("%s: content lacks %q\n--- content ---\n%s", tc.file, w, d.Content)
			}
		}
		for _, w := range tc.wantNot {
			if strings.Contains(d.Content, w) {
				t.Errorf("%s: content still has %q\n--- content ---\n%s", tc.file, w, d.Content)
			}
		}
	}
}

func TestConvertPassesTextThroughAndRefusesBinary(t *testing.T) {
	for _, tc := range []struct{ ct, body, format string }{
		{"text/plain", "plain", FormatText},
		{"application/json", `{"k":"v"}`, FormatText},
		{"application/ld+json", `{}`, FormatText},
		{"text/xml", "<a/>", FormatText},
		{"text/markdown", "# H", FormatMarkdown},
		{"text/plain; charset=iso-8859-1", "caf\xe9", FormatText},
	} {
		d, err := Convert([]byte(tc.body), tc.ct, nil)
		if err != nil || d.Format != tc.format {
			t.Errorf("%s: %+v %v", tc.ct, d, err)
		}
	}
	if d, _ := Convert([]byte("caf\xe9"), "text/plain; charset=iso-8859-1", nil); d.Content != "café" {
		t.Errorf("latin-1 text decoded to %q", d.Content)
	}
	for _, ct := range []string{"image/png", "application/pdf", "application/zip", "application/octet-stream", "video/mp4"} {
		if _, err := Convert([]byte("x"), ct, nil); !errors.Is(err, ErrUnsupportedContent) {
			t.Errorf("%s: %v, want ErrUnsupportedContent", ct, err)
		}
	}
}

func TestConvertTruncatedUTF8StaysUTF8(t *testing.T) {
	// The first 1024 bytes are ASCII, so the charset sniffer cannot tell
	// UTF-8 from windows-1252 and leaves the choice to Convert.
	body := []byte("<html><body><p>" + strings.Repeat("plain ascii text ", 70) + "Grüße aus Köln, schöne Grüße</p></body></html>")
	cut := body[:bytes.Index(body, []byte("ö"))+1] // ends inside "ö"
	d, err := Convert(cut, "text/html", nil)
	if err != nil || !strings.Contains(d.Content, "Grüße aus K") || strings.Contains(d.Content, "Ã") {
		t.Errorf("a body cut inside a character was not kept as UTF-8: %q %v", d.Content, err)
	}
}

func TestConvertPageWithoutArticleKeepsBodyMinusClutter(t *testing.T) {
	h := `<html><head><title>Tiny</title><script>evil()</script></head><body><nav>Menu</nav><p>Just one short line.</p><div class="cookie-notice">We use cookies</div><footer>Footer</footer></body></html>`
	d, err := Convert([]byte(h), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Tiny" || !strings.Contains(d.Content, "Just one short line.") {
		t.Errorf("got %+v", d)
	}
	for _, bad := range []string{"evil", "Menu", "cookies", "Footer"} {
		if strings.Contains(d.Content, bad) {
			t.Errorf("content has %q: %q", bad, d.Content)
		}
	}
}

func TestTargetsReportTheHost(t *testing.T) {
	tool, err := New[struct{}](nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, host, unresolved string }{
		{"https://Docs.Example.com/a", "docs.example.com", ""},
		{"https://bücher.example/", "xn--bcher-kva.example", ""},
		{"http://[::1]:8080/", "::1", ""},
		{"not a url", "", "the url has no host"},
	} {
		raw, _ := json.Marshal(Args{URL: tc.url})
		got, err := tool.Targets(raw)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" && (len(got.Hosts) != 1 || got.Hosts[0] != tc.host) || got.Unresolved != tc.unresolved {
			t.Errorf("%s: %+v, want host %q", tc.url, got, tc.host)
		}
	}
	// A permission rule naming the host denies the call before it runs.
	deny, err := helikon.ParseRules("WebFetch(example.com)")
	if err != nil {
		t.Fatal(err)
	}
	perms := &helikon.Permissions{Deny: deny}
	d := perms.Check(context.Background(), helikon.CallFor[struct{}](tool, json.RawMessage(`{"url":"https://www.example.com/x"}`), helikon.ModeDefault))
	if d.Allowed || helikon.KindOf(d.Err()) != helikon.KindDenied {
		t.Errorf("WebFetch(example.com) did not deny www.example.com: %+v", d)
	}
	d = perms.Check(context.Background(), helikon.CallFor[struct{}](tool, json.RawMessage(`{"url":"https://example.org/"}`), helikon.ModeBypass))
	if !d.Allowed {
		t.Errorf("WebFetch(example.com) denied example.org: %+v", d)
	}
	if helikon.EffectOf(tool) != helikon.EffectSideEffect || tool.Name() != Name || helikon.OutputSchemaOf(tool) == nil {
		t.Error("WebFetch must be a side effect named WebFetch with an output schema")
	}
}

func TestInvalidArguments(t *testing.T) {
	tool, _ := New[struct{}](nil)
	for _, raw := range []string{`{}`, `{"url": 5}`, `{"url":"https://example.com","max_bytes":-1}`, `{"url":"https://example.com","extra":1}`} {
		_, err := tool.Invoke(helikon.NewToolContext(context.Background(), struct{}{}, nil), json.RawMessage(raw))
		if helikon.KindOf(err) != helikon.KindInvalidArgs {
			t.Errorf("%s: %v, want invalid arguments", raw, err)
		}
	}
}

// FuzzConvert: any body converts without panicking, fails only with the
// errors Convert documents, and a non-empty HTML body never comes back as
// empty content without an error.
func FuzzConvert(f *testing.F) {
	for _, name := range []string{"news.html", "docs.html", "table_code.html", "latin1.html"} {
		b, _ := os.ReadFile("testdata/" + name)
		f.Add(b, "text/html")
	}
	f.Add([]byte(`{"a":1}`), "application/json")
	f.Add([]byte("<pre class=language-go><code>x</code></pre>"), "")
	// The shapes of the extraction's own passes: fallbacks, clutter,
	// tables with blocks in cells, base href, noscript, ld+json.
	f.Add([]byte(articlePage(`<base href="../x/"><script type="application/ld+json">{"headline":"H"}</script>`, `class="f_bucketcookies_on"`,
		`<table><tr><td><ul><li>a<ol><li>b</li></ol></li></ul><h2>c</h2><pre><code>d
e</code></pre><hr><blockquote>f</blockquote></td><td>g<br>h</td></tr><tr><td>1</td><td></td></tr></table><noscript><img src="i.png"></noscript>`)), "text/html")
	f.Add([]byte(`<html><body class="cookie-consent"><div class="cookies"><main></main></div></body></html>`), "text/html")
	f.Add([]byte(`<table><tr><td><table><tr><td>x</td></tr></table></td></tr></table><a href="" title="t">t</a><a href="/y"></a>`), "")
	page, _ := url.Parse("https://example.com/a/b")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		if len(body) > 64<<10 {
			return
		}
		d, err := Convert(body, ct, page)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedContent) && !errors.Is(err, ErrNoContent) && !strings.Contains(err.Error(), "HTML") {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if d.Format != FormatMarkdown && d.Format != FormatText {
			t.Fatalf("format %q", d.Format)
		}
		mt := ct
		if strings.TrimSpace(mt) == "" {
			mt = http.DetectContentType(body)
		}
		if mt, _, _ = mime.ParseMediaType(mt); kindOf(mt) == kindHTML && strings.TrimSpace(d.Content) == "" && len(bytes.TrimSpace(decode(body, ct))) > 0 {
			t.Fatalf("a non-empty HTML body came back empty without an error: %+v", d)
		}
	})
}
