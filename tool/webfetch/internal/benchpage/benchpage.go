// Package benchpage generates the synthetic article page the WebFetch
// extraction benchmark converts: a news-style page with navigation, a cookie
// banner, a sidebar, scripts and a footer around one long article of
// paragraphs, headings, lists, links, tables and code blocks. It is
// deterministic, so the Go benchmark and the Node reference pipeline
// (tool/webfetch/testdata/nodebench) convert byte-identical input.
package benchpage

import (
	"fmt"
	"strings"
)

var words = strings.Fields(`the river council plan water flood meadow path bridge town residents farmers
compensation weir salmon trout restore project debate vote budget works summer autumn spring winter
engineer survey report study habitat species bank stream valley hill road village market school
library museum station harbour coast island forest field garden orchard vineyard mill factory`)

// Page returns an HTML page of at least size bytes.
func Page(size int) []byte {
	var b strings.Builder
	b.Grow(size + 64<<10)
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>The long report on the river restoration | Gazette</title>
<script>window.dataLayer=[];function t(){dataLayer.push(arguments)}</script><style>body{font-family:serif}.ad{display:block}</style></head><body>
<div id="cookie-banner"><p>We use cookies.</p><button>Accept</button></div>
<header><a href="/">Gazette</a><nav><ul>`)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, `<li><a href="/section/%d">Section %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav></header><div class="layout"><main><article><h1>The long report on the river restoration</h1><p class="byline">By <a href="/authors/a">A. Writer</a></p>`)
	seed := uint32(1)
	next := func() int {
		seed = seed*1664525 + 1013904223
		return int(seed >> 8)
	}
	sentence := func() string {
		n := 8 + next()%14
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[next()%len(words)]
		}
		ws[0] = strings.ToUpper(ws[0][:1]) + ws[0][1:]
		return strings.Join(ws, " ") + "."
	}
	for sec := 0; b.Len() < size; sec++ {
		fmt.Fprintf(&b, "<h2>Part %d: %s</h2>\n", sec+1, sentence())
		for p := 0; p < 6; p++ {
			b.WriteString("<p>")
			for s := 0; s < 5; s++ {
				if s == 2 {
					fmt.Fprintf(&b, `<a href="/story/%d-%d">%s</a> `, sec, p, sentence())
				} else {
					b.WriteString(sentence())
					b.WriteByte(' ')
				}
			}
			b.WriteString("<em>" + sentence() + "</em></p>\n")
		}
		b.WriteString("<ul>")
		for i := 0; i < 4; i++ {
			b.WriteString("<li>" + sentence() + "</li>")
		}
		b.WriteString("</ul>\n")
		if sec%3 == 0 {
			b.WriteString("<table><thead><tr><th>Site</th><th>Length (m)</th><th>Cost (k€)</th></tr></thead><tbody>")
			for i := 0; i < 5; i++ {
				fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%d</td></tr>", words[next()%len(words)], next()%1000, next()%5000)
			}
			b.WriteString("</tbody></table>\n")
		}
		if sec%4 == 1 {
			fmt.Fprintf(&b, "<pre><code class=\"language-go\">func section%d() int {\n\treturn %d\n}\n</code></pre>\n", sec, next()%100)
		}
	}
	b.WriteString(`</article><aside class="related"><h4>Related</h4><ul><li><a href="/r1">Related one</a></li></ul></aside></main>
<aside class="sidebar"><div class="ad">Advertisement</div></aside></div>
<footer><p>&copy; Gazette</p><a href="/privacy">Privacy</a></footer><script src="/a.js"></script></body></html>`)
	return []byte(b.String())
}
