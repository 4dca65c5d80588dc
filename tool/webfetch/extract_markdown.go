package webfetch

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// mdConverter is shared: html-to-markdown's Converter is safe for concurrent
// use (it locks internally). Its options are chosen for a model reading the
// page, where every character is a token:
//   - tables keep their grid when a cell holds line breaks (as <br />),
//     cells are not padded to the widest one, and a table without a header
//     row takes its first row as the header instead of an empty one;
//   - adjacent lists are not separated by an <!--THE END--> comment;
//   - links without text ([](...)) or without a destination ([text]())
//     are left out (their text stays).
var mdConverter = converter.NewConverter(converter.WithPlugins(
	base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(
		commonmark.WithListEndComment(false),
		commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
		commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
	),
	table.NewTablePlugin(
		table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
		table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
		table.WithHeaderPromotion(true),
		table.WithSkipEmptyRows(true),
		table.WithSpanCellBehavior(table.SpanBehaviorEmpty),
	),
	strikethrough.NewStrikethroughPlugin(),
))

// toMarkdown converts the tree under root to Markdown, relative links
// resolved against base. It changes the tree (see prepareMarkdown).
func toMarkdown(root *html.Node, base *url.URL) (string, error) {
	prepareMarkdown(root)
	var domain string
	if base != nil {
		domain = base.String()
	}
	md, err := mdConverter.ConvertNode(root, converter.WithDomain(domain))
	if err != nil {
		return "", fmt.Errorf("converting HTML to Markdown: %w", err)
	}
	return trimLineEnds(strings.TrimSpace(string(md))), nil
}

// prepareMarkdown rewrites what html-to-markdown would render badly:
// title attributes that repeat a link's text or an image's alt text;
// layout tables, which are marked role=presentation so that their cells
// come out as paragraphs; and the blocks inside the cells of data tables
// (lists, headings, rules, quotes, code blocks), which make html-to-markdown
// give up the table and flatten its cells into paragraphs: they become
// lines of the cell.
func prepareMarkdown(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.A:
			dropRepeatedTitle(c, func() string { return textOf(c) })
		case atom.Img:
			dropRepeatedTitle(c, func() string { return attr(c, "alt") })
		case atom.Table:
			if !isDataTable(c) {
				setAttr(c, "role", "presentation")
			} else {
				for _, cell := range cellsOf(c) {
					flattenCell(cell)
				}
			}
		}
		prepareMarkdown(c)
	}
}

// isDataTable tells a table of data from one that lays out a page, by the
// signs browsers and readability use: role=presentation and nested tables
// mean layout; header cells, a caption, column groups or a summary mean
// data; a single row or column means layout.
func isDataTable(t *html.Node) bool {
	if attr(t, "role") == "presentation" {
		return false
	}
	data, nested := attr(t, "summary") != "", false
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && !nested; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Table:
				nested = true
				return
			case atom.Th, atom.Thead, atom.Colgroup, atom.Col, atom.Tfoot:
				data = true
			case atom.Caption:
				data = data || textRunes(c, 1) > 0
			}
			walk(c)
		}
	}
	walk(t)
	if nested || data {
		return !nested
	}
	rows, cols := 0, 0
	for _, row := range rowsOf(t) {
		rows++
		cols = max(cols, len(childElements(row, atom.Td, atom.Th)))
	}
	return rows > 1 && cols > 1
}

// rowsOf returns the rows of table t, in its sections or directly in it.
func rowsOf(t *html.Node) []*html.Node {
	var rows []*html.Node
	for _, c := range childElements(t, atom.Tr, atom.Thead, atom.Tbody, atom.Tfoot) {
		if c.DataAtom == atom.Tr {
			rows = append(rows, c)
		} else {
			rows = append(rows, childElements(c, atom.Tr)...)
		}
	}
	return rows
}

func cellsOf(t *html.Node) []*html.Node {
	var cells []*html.Node
	for _, row := range rowsOf(t) {
		cells = append(cells, childElements(row, atom.Td, atom.Th)...)
	}
	return cells
}

// childElements returns the children of n that are one of atoms.
func childElements(n *html.Node, atoms ...atom.Atom) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && slices.Contains(atoms, c.DataAtom) {
			out = append(out, c)
		}
	}
	return out
}

// dropRepeatedTitle removes n's title when it says what text() says.
func dropRepeatedTitle(n *html.Node, text func() string) {
	title := attr(n, "title")
	if title == "" || !strings.EqualFold(strings.Join(strings.Fields(title), " "), strings.Join(strings.Fields(text()), " ")) {
		return
	}
	n.Attr = slices.DeleteFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "title" })
}

// flattenCell turns the blocks inside n, a table cell or an element in
// one, that html-to-markdown cannot put in a table into inline content: a
// list item becomes a line starting with "• " (or its number), a heading
// bold text, a code block inline code, a rule a line break, and other
// blocks (quotes, divisions, figures) their content on a new line.
// Paragraphs and line breaks become the cell's <br /> (the table plugin's
// newline behaviour).
func flattenCell(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type != html.ElementNode {
			c = next
			continue
		}
		switch c.DataAtom {
		case atom.Ul, atom.Ol:
			for i, li := range childElements(c, atom.Li) {
				marker := "• " // "- " would be escaped at the start of a cell's line
				if c.DataAtom == atom.Ol {
					marker = fmt.Sprintf("%d. ", i+1)
				}
				li.InsertBefore(&html.Node{Type: html.TextNode, Data: marker}, li.FirstChild)
				li.InsertBefore(newBr(), li.FirstChild)
				li.Data, li.DataAtom, li.Attr = "span", atom.Span, nil
			}
			unwrapBlock(n, c)
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			c.Data, c.DataAtom, c.Attr = "strong", atom.Strong, nil
			flattenCell(c)
		case atom.Pre:
			c.Data, c.DataAtom = "code", atom.Code
			if inner := childElements(c, atom.Code); len(inner) == 1 && c.FirstChild == inner[0] && c.LastChild == inner[0] {
				unwrap(n, c)
			}
		case atom.Hr:
			c.Data, c.DataAtom, c.Attr = "br", atom.Br, nil
		case atom.Blockquote, atom.Div, atom.Section, atom.Figure, atom.Dl, atom.Dd, atom.Dt, atom.Li:
			unwrapBlock(n, c)
		default:
			flattenCell(c)
		}
		c = next
	}
}

// unwrapBlock flattens block c, a child of n, and puts its content in its
// place on a line of its own.
func unwrapBlock(n, c *html.Node) {
	flattenCell(c)
	next := c.NextSibling
	n.InsertBefore(newBr(), c)
	unwrap(n, c)
	n.InsertBefore(newBr(), next)
}

func newBr() *html.Node { return &html.Node{Type: html.ElementNode, Data: "br", DataAtom: atom.Br} }

// unwrap replaces c, a child of n, with its children.
func unwrap(n, c *html.Node) {
	moveChildren(c, n, c)
	n.RemoveChild(c)
}

// moveChildren moves the children of from into parent before ref.
func moveChildren(from, parent, ref *html.Node) {
	for c := from.FirstChild; c != nil; c = from.FirstChild {
		from.RemoveChild(c)
		parent.InsertBefore(c, ref)
	}
}

// cellBreaks is a run of line breaks in a table cell, with the spaces of
// hard line breaks around them.
var cellBreaks = regexp.MustCompile(`(?:\s*<br />\s*)+`)

// trimLineEnds removes the spaces at the ends of lines outside fenced code
// blocks, and collapses the runs of <br /> that a cell's paragraphs leave in
// a table row. html-to-markdown writes a <br> as a hard line break (two
// spaces and a newline); for a model reading the text the newline says the
// same and the spaces are tokens.
func trimLineEnds(md string) string {
	var b strings.Builder
	b.Grow(len(md))
	var fence string
	for l := range strings.Lines(md) {
		l, nl := strings.CutSuffix(l, "\n")
		t := strings.TrimLeft(l, " \t>")
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
		case fence != "" && strings.HasPrefix(t, fence):
			fence = ""
		case fence == "":
			l = strings.TrimRight(l, " \t")
			if strings.HasPrefix(l, "|") {
				l = cellBreaks.ReplaceAllString(l, "<br />")
			}
		}
		b.WriteString(l)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
