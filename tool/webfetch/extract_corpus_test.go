package webfetch

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The corpus is Mozilla Readability's test pages as shipped by the
// go-readability module (MIT, see LICENSE in the module directory): real
// pages of many sites (news, blogs, wikis, docs, RTL and CJK pages), each a
// source.html, the reference extraction expected.html and
// expected-metadata.json. It arrives through the Go module proxy with the
// dependency, so nothing of it is copied into this repository.
const corpusModule = "codeberg.org/readeck/go-readability/v2"

// corpusPageURL is the URL the reference extractions were made with.
var corpusPageURL, _ = url.Parse("http://fakehost/test/page.html")

type corpusPage struct {
	name, source, wantTitle string
	reference               map[string]int
}

// loadCorpus returns the test pages of the go-readability module, skipping
// the test when the module directory is not in the module cache.
func loadCorpus(t testing.TB) []corpusPage {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", corpusModule).Output()
	dir := filepath.Join(strings.TrimSpace(string(out)), "test-pages")
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Skipf("corpus: module %s is not in the module cache (go list -m: %v); run go mod download", corpusModule, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("corpus: %s has no test-pages directory: %v", corpusModule, err)
	}
	var pages []corpusPage
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		src, err1 := os.ReadFile(filepath.Join(p, "source.html"))
		ref, err2 := os.ReadFile(filepath.Join(p, "expected.html"))
		meta, err3 := os.ReadFile(filepath.Join(p, "expected-metadata.json"))
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		var m struct{ Title string }
		if err := json.Unmarshal(meta, &m); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		words := bagOfWords(htmlTextContent(ref))
		if len(words) == 0 {
			continue
		}
		pages = append(pages, corpusPage{name: e.Name(), source: string(src), wantTitle: m.Title, reference: words})
	}
	return pages
}

// libraryAlone is the wrapped libraries without helikon's own passes:
// readability on the page as it came, its article converted with
// html-to-markdown's default plugins.
func libraryAlone(src string, pageURL *url.URL) Document {
	article, err := readability.FromReader(strings.NewReader(src), pageURL)
	if err != nil || article.Node == nil {
		return Document{}
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
	md, err := conv.ConvertNode(article.Node, converter.WithDomain(pageURL.String()))
	if err != nil {
		return Document{}
	}
	return Document{Title: article.Title(), Content: strings.TrimSpace(string(md)), Format: FormatMarkdown}
}

type score struct {
	f1    float64
	title bool
}

func scoreDocument(d Document, p corpusPage) score {
	return score{
		f1:    f1(bagOfWords(markdownText(d.Content)), p.reference),
		title: strings.Join(strings.Fields(d.Title), " ") == strings.Join(strings.Fields(p.wantTitle), " "),
	}
}

// TestCorpusExtractionAtLeastAsGoodAsLibrary scores Convert against the
// reference extractions of the corpus, next to the wrapped library alone:
// no page may come back empty, and the mean bag-of-words F1 may not fall
// below the library's, and neither may the number of exact titles. Run
// with -v for the figures (BENCHMARKS.md).
func TestCorpusExtractionAtLeastAsGoodAsLibrary(t *testing.T) {
	pages := loadCorpus(t)
	if raceDetector {
		// Every second page (67 of 134), so that go test -race ./... stays
		// within minutes on a small machine; without -race all are scored.
		sample := pages[:0]
		for i := 0; i < len(pages); i += 2 {
			sample = append(sample, pages[i])
		}
		pages = sample
	}
	if len(pages) < 50 {
		t.Fatalf("corpus has %d pages with a reference, want at least 50", len(pages))
	}
	var lib, ours struct {
		f1            float64
		titles, bytes int
	}
	type diff struct {
		name       string
		lib, ours  float64
		libT, ourT bool
	}
	var diffs []diff
	for _, p := range pages {
		d, err := Convert([]byte(p.source), "text/html", corpusPageURL)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		if strings.TrimSpace(d.Content) == "" {
			t.Errorf("%s: empty content", p.name)
		}
		libDoc := libraryAlone(p.source, corpusPageURL)
		lib.bytes += len(libDoc.Content)
		ours.bytes += len(d.Content)
		a, c := scoreDocument(libDoc, p), scoreDocument(d, p)
		lib.f1 += a.f1
		ours.f1 += c.f1
		if a.title {
			lib.titles++
		}
		if c.title {
			ours.titles++
		}
		if a.f1 != c.f1 || a.title != c.title {
			diffs = append(diffs, diff{p.name, a.f1, c.f1, a.title, c.title})
		}
	}
	n := float64(len(pages))
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].ours-diffs[i].lib < diffs[j].ours-diffs[j].lib })
	for _, d := range diffs {
		t.Logf("%-45s F1 library %.3f helikon %.3f  title library %-5v helikon %v", d.name, d.lib, d.ours, d.libT, d.ourT)
	}
	t.Logf("%d pages: mean F1 library alone %.4f, helikon %.4f; titles exact library alone %d/%d, helikon %d/%d; Markdown library alone %d bytes, helikon %d",
		len(pages), lib.f1/n, ours.f1/n, lib.titles, len(pages), ours.titles, len(pages), lib.bytes, ours.bytes)
	if ours.f1 < lib.f1 {
		t.Errorf("mean F1 %.4f is below the library alone (%.4f)", ours.f1/n, lib.f1/n)
	}
	if ours.titles < lib.titles {
		t.Errorf("%d exact titles, the library alone has %d", ours.titles, lib.titles)
	}
}

// htmlTextContent is the text of an HTML document as a reader sees it.
func htmlTextContent(b []byte) string {
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style) {
			return
		}
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
			sb.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return sb.String()
}

var (
	mdImage     = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	mdLinkDest  = regexp.MustCompile(`\]\([^)]*\)`)
	mdAutolink  = regexp.MustCompile(`<https?://[^>]*>`)
	mdLineBreak = regexp.MustCompile(`<br ?/?>`)
	mdFenceInfo = regexp.MustCompile("(?m)^\\s*(```|~~~)\\S*$")
)

// markdownText is the text of Markdown as a reader of the rendered page
// sees it: without image references, link destinations and the <br> of
// table cells, nor the info strings of code fences (the Markdown punctuation is no word and drops out in
// bagOfWords).
func markdownText(md string) string {
	md = mdFenceInfo.ReplaceAllString(md, " ")
	md = mdImage.ReplaceAllString(md, " ")
	md = mdLinkDest.ReplaceAllString(md, "] ")
	md = mdAutolink.ReplaceAllString(md, " ")
	return mdLineBreak.ReplaceAllString(md, " ")
}

// bagOfWords counts the lower-cased words of s: runs of letters and digits,
// and single characters of the scripts written without spaces (Han, kana,
// Thai), so that a Japanese page is not one word per sentence.
func bagOfWords(s string) map[string]int {
	bag := map[string]int{}
	var w []rune
	flush := func() {
		if len(w) > 0 {
			bag[string(w)]++
			w = w[:0]
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai):
			flush()
			bag[string(r)]++
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			w = append(w, r)
		default:
			flush()
		}
	}
	flush()
	return bag
}

// f1 is the harmonic mean of precision and recall of got's words against
// want's, counting repeated words as often as both have them.
func f1(got, want map[string]int) float64 {
	var overlap, ng, nw int
	for w, c := range got {
		ng += c
		overlap += min(c, want[w])
	}
	for _, c := range want {
		nw += c
	}
	if overlap == 0 {
		return 0
	}
	p, r := float64(overlap)/float64(ng), float64(overlap)/float64(nw)
	return 2 * p * r / (p + r)
}

func TestScorer(t *testing.T) {
	cases := []struct {
		name      string
		got, want string
		f1        float64
	}{
		{"identical words", "the cat sat", "The cat, sat.", 1},
		{"nothing in common", "dog", "cat", 0},
		{"half the words", "a b", "a b c d", 2 * 1 * 0.5 / 1.5},
		{"repeats count once each", "a a a", "a", 2 * (1.0 / 3) * 1 / (1.0/3 + 1)},
		{"CJK characters are words", "東京の天気", "東京 の 天気", 1},
		{"link destinations are not text", markdownText("[the cat](https://example.com/dog) ![a dog](d.png)"), "the cat", 1},
	}
	for _, tc := range cases {
		if got := f1(bagOfWords(tc.got), bagOfWords(tc.want)); got < tc.f1-1e-9 || got > tc.f1+1e-9 {
			t.Errorf("%s: F1 %v, want %v", tc.name, got, tc.f1)
		}
	}
}
