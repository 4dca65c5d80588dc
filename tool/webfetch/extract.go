package webfetch

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// ErrUnsupportedContent is returned (wrapped) for a response whose content
// type WebFetch cannot turn into text, such as an image, an archive or a PDF.
var ErrUnsupportedContent = errors.New("unsupported content type")

// Formats of [Document.Format].
const (
	FormatMarkdown = "markdown"
	FormatText     = "text"
)

// Document is a response body turned into text.
type Document struct {
	// Title is the page title ("" for non-HTML content).
	Title string
	// Content is Markdown for HTML and Markdown bodies and the decoded text
	// otherwise.
	Content string
	// Format is [FormatMarkdown] or [FormatText].
	Format string
}

// Convert turns a response body into a [Document] according to its
// Content-Type header (sniffed from the body when empty):
//
//   - HTML and XHTML are decoded to UTF-8 (from the charset parameter, a
//     byte-order mark or a <meta> tag), reduced to the main article with
//     readability run on the page as it came, and converted to Markdown
//     with links made absolute against the page's <base href> or pageURL.
//     Pages readability finds no article in are converted whole, minus
//     navigation, scripts, styles, page headers and footers, sidebars and
//     cookie banners (never the <main> or <article> element or most of the
//     text); a page that yields no Markdown comes back as its plain text,
//     and a page without any text fails with an error wrapping
//     [ErrNoContent] (an empty body is an empty document). The cost is
//     bounded by the number of elements: readability runs on pages of at
//     most 100 000 elements (larger ones are converted whole), and pages of
//     more than 200 000 elements (or 400 000 tags), or nested deeper than
//     the HTML parser accepts (512 open elements), come back as plain text
//     (Format "text") extracted in one linear pass, because such pages are
//     built to make the conversion take seconds of CPU and hundreds of
//     megabytes;
//   - text/markdown passes through as Markdown; other text/*, JSON and XML
//     types pass through as text, decoded to UTF-8;
//   - anything else fails with an error wrapping [ErrUnsupportedContent].
//
// Convert is safe for concurrent use.
func Convert(body []byte, contentType string, pageURL *url.URL) (Document, error) {
	if strings.TrimSpace(contentType) == "" {
		contentType = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	}
	switch kind := kindOf(mt); kind {
	case kindHTML:
		return htmlToMarkdown(decode(body, contentType), pageURL)
	case kindMarkdown, kindText:
		d := Document{Content: string(decode(body, contentType)), Format: FormatText}
		if kind == kindMarkdown {
			d.Format = FormatMarkdown
		}
		return d, nil
	}
	return Document{}, fmt.Errorf("%w %q: WebFetch reads HTML, plain text, Markdown, JSON and XML only", ErrUnsupportedContent, mt)
}

type contentKind int

const (
	kindUnsupported contentKind = iota
	kindHTML
	kindMarkdown
	kindText
)

func kindOf(mediaType string) contentKind {
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		return kindHTML
	case mediaType == "text/markdown" || mediaType == "text/x-markdown":
		return kindMarkdown
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/javascript", mediaType == "application/x-ndjson",
		mediaType == "application/yaml", mediaType == "application/x-yaml",
		mediaType == "application/toml":
		return kindText
	}
	return kindUnsupported
}

// decode returns body as UTF-8. charset.DetermineEncoding looks at a BOM, the
// Content-Type charset and, for HTML, the first 1024 bytes' <meta> tags, and
// falls back to windows-1252 for HTML as browsers do. Valid UTF-8 without a
// declaration is kept as is.
func decode(body []byte, contentType string) []byte {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || !certain && validUTF8Prefix(body) {
		return bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}

// validUTF8Prefix reports whether body is valid UTF-8 once an incomplete
// sequence at its end is ignored: a body cut at the byte limit may end in
// the middle of a character, which must not make the whole page decode as
// windows-1252.
func validUTF8Prefix(body []byte) bool {
	for i := 0; i <= 3 && i <= len(body); i++ {
		if utf8.Valid(body[:len(body)-i]) {
			return true
		}
	}
	return false
}

// Element limits of HTML conversion. Readability and the Markdown converter
// cost a few microseconds per element, and 5 MiB of "<b><p>" parses into
// millions of elements: without limits a hostile page costs tens of seconds
// of CPU per fetch. Real article pages have a few thousand elements; a 2 MiB
// text-heavy page about 15 000.
const (
	// maxArticleElements: readability runs only on pages with at most this
	// many elements; larger pages are converted whole.
	maxArticleElements = 100_000
	// maxMarkdownElements: pages with more elements come back as plain text.
	maxMarkdownElements = 200_000
	// maxTags: a page with more '<' than this is not even parsed into a
	// tree (5 MiB of "<b><p>" is 4 million nodes, half a gigabyte) and comes
	// back as plain text. Every start tag needs a '<', and real pages have
	// about two per element, so this is checked with one fast byte count.
	maxTags = 2 * maxMarkdownElements
)

// ErrNoContent is returned (wrapped) for an HTML page in which no step of
// the extraction found any text or image: readability's article, the body
// minus clutter and the page's plain text are all empty.
var ErrNoContent = errors.New("the page has no text content")

// htmlToMarkdown tries, in order, until one yields content:
//
//  1. readability on the page as it came (it needs what a clean-up pass
//     would remove: <noscript> for lazy images, ld+json for the title,
//     the whole tree to choose its container), its result minus clutter
//     (removeClutter) when it is shorter than an article;
//  2. the body minus clutter, for pages readability finds nothing in;
//  3. the page's plain text.
//
// It never returns empty content without an error, unless the body itself
// is empty.
func htmlToMarkdown(body []byte, pageURL *url.URL) (Document, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Document{Format: FormatMarkdown}, nil // nothing was sent, so nothing was lost
	}
	if bytes.Count(body, []byte("<")) > maxTags {
		return nonEmpty(htmlText(body))
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		// The parser refuses nesting deeper than 512 open elements; the
		// text is still there.
		return nonEmpty(htmlText(body))
	}
	elements := countElements(doc, maxMarkdownElements+1)
	if elements > maxMarkdownElements {
		return nonEmpty(htmlText(body))
	}
	pageTitle := titleOf(doc)
	base := baseURL(doc, pageURL)
	markCodeLanguages(doc)

	if elements <= maxArticleElements {
		parser := readability.NewParser()
		parser.KeepClasses = true // language-* classes name the code blocks' languages
		article, err := parser.ParseAndMutate(doc, base)
		if err == nil && article.Node != nil && textRunes(article.Node, 1) > 0 {
			if !isArticle(article.Node, parser.CharThresholds) {
				removeClutter(article.Node)
			}
			md, err := toMarkdown(article.Node, base)
			if err != nil {
				return Document{}, err
			}
			if md != "" {
				title := article.Title()
				if title == "" {
					title = pageTitle
				}
				return Document{Title: strings.TrimSpace(title), Content: md, Format: FormatMarkdown}, nil
			}
		}
		// readability changed the tree while it searched: start again from
		// the page as it came.
		if doc, err = html.Parse(bytes.NewReader(body)); err != nil {
			return nonEmpty(htmlText(body))
		}
		markCodeLanguages(doc)
	}
	root := bodyOf(doc)
	removeClutter(root)
	md, err := toMarkdown(root, base)
	if err != nil {
		return Document{}, err
	}
	if md != "" {
		return Document{Title: pageTitle, Content: md, Format: FormatMarkdown}, nil
	}
	d := htmlText(body)
	d.Title = pageTitle
	return nonEmpty(d)
}

// isArticle reports whether readability's result is an article: it
// returns its longest attempt even when every attempt found less text than
// its threshold, and on such a page (a short note, a listing) that attempt
// is often navigation or a banner rather than the content.
func isArticle(n *html.Node, threshold int) bool {
	return textRunes(n, threshold) >= threshold
}

// textRunes counts the characters of the text under n, each run of
// whitespace as one and leading whitespace not at all, stopping at limit.
func textRunes(n *html.Node, limit int) int {
	count, space := 0, true
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			for _, r := range n.Data {
				if unicode.IsSpace(r) {
					if !space {
						count++
					}
					space = true
				} else {
					count++
					space = false
				}
				if count >= limit {
					return
				}
			}
		}
		for c := n.FirstChild; c != nil && count < limit; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return count
}

// nonEmpty turns a document without content into [ErrNoContent].
func nonEmpty(d Document) (Document, error) {
	if strings.TrimSpace(d.Content) == "" {
		return Document{}, fmt.Errorf("%w: it may render its content with JavaScript, which WebFetch does not run; try another URL for the same content", ErrNoContent)
	}
	return d, nil
}

// baseURL is the URL relative links of doc are resolved against: the
// href of its first <base> element (itself resolved against pageURL) or
// pageURL. A base with a scheme other than http or https is ignored.
func baseURL(doc *html.Node, pageURL *url.URL) *url.URL {
	var href string
	var found bool
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && !found; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Base {
				for _, a := range c.Attr {
					if a.Key == "href" {
						href, found = strings.TrimSpace(a.Val), true
						return
					}
				}
			}
			walk(c)
		}
	}
	walk(doc)
	if !found || href == "" {
		return pageURL
	}
	ref, err := url.Parse(href)
	if err != nil {
		return pageURL
	}
	if pageURL != nil {
		ref = pageURL.ResolveReference(ref)
	}
	if ref.Scheme != "http" && ref.Scheme != "https" {
		return pageURL
	}
	return ref
}

// clutterWords are the words of a class or id that mark consent and cookie
// banners, which readability's own list of unlikely candidates misses.
// They are matched against whole words of the attribute (split at
// anything but letters and digits), as the start of a word
// ("cookiebanner"), never inside one ("f_bucketcookies_on").
var clutterWords = []string{"cookie", "consent", "gdpr"}

// clutterPairs are two adjacent words of a class or id that mark clutter.
var clutterPairs = [][2]string{{"newsletter", "signup"}, {"skip", "link"}}

// removeClutter deletes from a body readability found no article in the
// elements that are never its content: scripts, styles, navigation, page
// headers and footers, sidebars, forms' buttons, dialogs and consent
// banners. It never removes an element that holds the page's main content
// (<main>, <article>, role=main) or most of its text, so a wrapper whose
// class happens to name cookies cannot take the page with it.
func removeClutter(root *html.Node) {
	total := textLen(root)
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			switch {
			case c.Type == html.CommentNode:
				n.RemoveChild(c)
			case c.Type == html.ElementNode && isClutter(c) && !holdsContent(c, total):
				n.RemoveChild(c)
			default:
				walk(c)
			}
			c = next
		}
	}
	walk(root)
}

// holdsContent reports whether n is, or contains, the page's main content:
// a <main>, an <article>, an element with role=main, or more than half of
// the text of a page of total characters.
func holdsContent(n *html.Node, total int) bool {
	var main bool
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.DataAtom == atom.Main || n.DataAtom == atom.Article || attr(n, "role") == "main") {
			main = true
		}
		for c := n.FirstChild; c != nil && !main; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return main || 2*textLen(n) > total
}

func isClutter(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Html, atom.Head, atom.Body, atom.Main, atom.Article:
		return false
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Nav,
		atom.Footer, atom.Button, atom.Svg, atom.Canvas, atom.Object, atom.Embed, atom.Dialog:
		return true
	case atom.Header:
		// A page header; a header inside an article holds its title.
		return !hasAncestor(n, atom.Article, atom.Main)
	case atom.Aside:
		return !hasAncestor(n, atom.Article, atom.Main)
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "role":
			switch a.Val {
			case "navigation", "banner", "contentinfo", "dialog", "alertdialog", "search":
				return true
			}
		case "id", "class":
			if hasClutterWord(a.Val) {
				return true
			}
		}
	}
	return false
}

// hasClutterWord reports whether a class or id value has one of
// clutterWords at the start of a word or one of clutterPairs.
func hasClutterWord(v string) bool {
	words := strings.FieldsFunc(strings.ToLower(v), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range words {
		for _, cw := range clutterWords {
			if strings.HasPrefix(w, cw) {
				return true
			}
		}
		if i > 0 {
			for _, p := range clutterPairs {
				if words[i-1] == p[0] && w == p[1] {
					return true
				}
			}
		}
	}
	return false
}

// textLen is the number of bytes of text under n, whitespace included.
func textLen(n *html.Node) int {
	if n.Type == html.TextNode {
		return len(n.Data)
	}
	total := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		total += textLen(c)
	}
	return total
}

func hasAncestor(n *html.Node, atoms ...atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		for _, a := range atoms {
			if p.DataAtom == a {
				return true
			}
		}
	}
	return false
}

// markCodeLanguages gives each <pre> the language-X class html-to-markdown
// reads for a fenced block's info string, taking it from the conventions
// highlighters use: a language-/lang- class on the <pre>, its <code> or a
// wrapper (highlight-X, sourceCode X), or a data-lang/data-language
// attribute.
func markCodeLanguages(n *html.Node) {
	if n.Type == html.ElementNode && n.DataAtom == atom.Pre {
		if lang := codeLanguage(n); lang != "" {
			setAttr(n, "class", strings.TrimSpace(attr(n, "class")+" language-"+lang))
		}
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		markCodeLanguages(c)
	}
}

func codeLanguage(pre *html.Node) string {
	candidates := []*html.Node{pre}
	for c := pre.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.Code {
			candidates = append(candidates, c)
		}
	}
	for p, i := pre.Parent, 0; p != nil && i < 3; p, i = p.Parent, i+1 {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		for _, k := range []string{"data-lang", "data-language"} {
			if v := attr(c, k); v != "" {
				return v
			}
		}
		for _, cls := range strings.Fields(attr(c, "class")) {
			for _, p := range []string{"language-", "lang-", "highlight-source-", "highlight-"} {
				if rest, ok := strings.CutPrefix(cls, p); ok && rest != "" {
					return rest
				}
			}
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func titleOf(doc *html.Node) string {
	var title string
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			title = strings.Join(strings.Fields(textOf(n)), " ")
			return true
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(doc)
	return title
}

func bodyOf(doc *html.Node) *html.Node {
	var body *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if body != nil {
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			body = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if body == nil {
		return doc
	}
	return body
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// countElements counts the element nodes under n, stopping at limit.
func countElements(n *html.Node, limit int) int {
	count := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && count < limit; c = c.NextSibling {
			if c.Type == html.ElementNode {
				count++
			}
			walk(c)
		}
	}
	walk(n)
	return count
}

// htmlText is the plain text of an HTML page in one pass of the tokenizer,
// without building a tree: text outside scripts, styles and other
// non-content elements, a line break at each block element, whitespace
// collapsed. It is the fallback for pages too large or too deeply nested to
// convert to Markdown.
func htmlText(body []byte) Document {
	z := html.NewTokenizer(bytes.NewReader(body))
	var text, title strings.Builder
	skip, inTitle, titleDone := 0, false, false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return Document{Title: strings.Join(strings.Fields(title.String()), " "), Content: collapseLines(text.String()), Format: FormatText}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case atom.Title:
				inTitle = tt == html.StartTagToken && !titleDone
				if tt == html.EndTagToken {
					titleDone = titleDone || title.Len() > 0
				}
			}
			if blockAtoms[a] {
				text.WriteByte('\n')
			}
		case html.TextToken:
			switch {
			case inTitle:
				title.Write(z.Text())
			case skip == 0:
				text.Write(z.Text())
			}
		}
	}
}

// blockAtoms are the elements that start a new line in the text fallback.
var blockAtoms = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.Td: true, atom.Th: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Pre: true, atom.Blockquote: true, atom.Section: true, atom.Article: true, atom.Table: true,
	atom.Ul: true, atom.Ol: true, atom.Dd: true, atom.Dt: true, atom.Hr: true, atom.Header: true, atom.Footer: true,
}

// collapseLines collapses the whitespace of each line and drops empty lines.
func collapseLines(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return strings.Join(out, "\n")
}
