package webfetch

import (
	"net/url"
	"strings"
	"testing"

	"github.com/paigasus/helikon/tool/webfetch/internal/benchpage"
)

// BenchmarkConvertArticle2MB measures extraction (readability) plus
// HTML-to-Markdown conversion of a 2 MiB article page. Reference: the same
// page through Mozilla Readability + Turndown on Node, see
// testdata/nodebench/README.md.
func BenchmarkConvertArticle2MB(b *testing.B) {
	page := benchpage.Page(2 << 20)
	u, _ := url.Parse("https://news.example.com/2024/05/report.html")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Convert(page, "text/html; charset=utf-8", u)
		if err != nil {
			b.Fatal(err)
		}
		if !strings.Contains(d.Content, "## Part 1:") {
			b.Fatal("article not extracted")
		}
	}
}
