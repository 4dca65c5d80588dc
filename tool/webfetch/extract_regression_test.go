package webfetch

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// filler is enough article text for readability to take the page as an
// article (it wants 500 characters).
var filler = strings.Repeat("<p>The committee met on Tuesday to discuss the budget for the coming year, and the members agreed on most points after a long debate about the costs of the new library.</p>\n", 5)

// articlePage is a page with a navigation bar, an article of filler plus
// content, and a footer.
func articlePage(head, bodyAttrs, content string) string {
	return `<!DOCTYPE html><html><head><meta charset="utf-8">` + head + `</head><body ` + bodyAttrs + `>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<main><article><h1>Budget approved</h1>` + filler + content + `</article></main>
<footer>Copyright 2024 Example Media</footer></body></html>`
}

// TestConvertRegressions are the pages of issue 12 that the clean-up pass
// before readability emptied or damaged, and the Markdown it produced.
func TestConvertRegressions(t *testing.T) {
	page, _ := url.Parse("https://news.example.com/2024/budget.html")
	cases := []struct {
		name, html, title string
		want, wantNot     []string
	}{{
		name: "a body class containing the word cookie does not remove the body",
		html: articlePage("<title>Budget approved</title>", `class="home f_bucketcookies_on page-article" id="consent-given-page"`, ""),
		want: []string{"The committee met on Tuesday"},
	}, {
		name: "a wrapper whose class names cookies keeps the main content",
		html: `<html><head><title>Note</title></head><body><div class="cookie-wrapper"><main><p>Only a short note here.</p></main></div></body></html>`,
		want: []string{"Only a short note here."},
	}, {
		name:    "a consent banner is still removed from a page without an article",
		html:    `<html><head><title>Note</title></head><body><div class="cookieBanner"><p>We use cookies.</p></div><p>Only a short note here, with more words than the banner has.</p></body></html>`,
		want:    []string{"Only a short note here"},
		wantNot: []string{"We use cookies"},
	}, {
		name: "lazy images are recovered from noscript",
		html: articlePage("<title>Budget approved</title>", "", `<figure><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-lazy="true" alt="The library"><noscript><img src="https://cdn.example.com/library.jpg" alt="The library"></noscript></figure>`),
		want: []string{"![The library](https://cdn.example.com/library.jpg)"},
	}, {
		name:  "the title comes from ld+json, without the site's suffix",
		html:  articlePage(`<title>Budget approved - Example News</title><script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Budget approved"}</script>`, "", ""),
		title: "Budget approved",
	}, {
		name: "aria-hidden math fallback images are kept",
		html: articlePage("<title>Budget approved</title>", "", `<p>The sum is denoted by <span class="mwe-math-element"><span class="mwe-math-mathml-inline" style="display: none;"><math><mi>S</mi></math></span><img src="https://wikimedia.org/api/rest_v1/media/math/render/svg/5dbc" class="mwe-math-fallback-image-inline" aria-hidden="true" alt="S"></span>, then split.</p>`),
		want: []string{"denoted by ![S](https://wikimedia.org/api/rest_v1/media/math/render/svg/5dbc), then"},
	}, {
		name:    "a table whose cells hold line breaks and lists keeps its grid",
		html:    articlePage("<title>Budget approved</title>", "", `<table><tr><th>Item</th><th>Notes</th></tr><tr><td>Books</td><td>Fiction<br>Non-fiction</td></tr><tr><td>Rooms</td><td><p>Two floors.</p><ul><li>Reading room</li><li>Archive</li></ul></td></tr><tr><td>Steps</td><td><ol><li>Plan</li><li>Build</li></ol></td></tr></table>`),
		want:    []string{"| Item | Notes |\n|---|---|\n| Books | Fiction<br />Non-fiction |\n| Rooms | Two floors.<br />• Reading room<br />• Archive |\n| Steps | 1\\. Plan<br />2\\. Build |"},
		wantNot: []string{"\nReading room", "- Archive\n", " <br />"},
	}, {
		name:    "a table without a header row takes its first row as the header",
		html:    articlePage("<title>Budget approved</title>", "", `<table><tr><td>Year</td><td>Cost</td></tr><tr><td>2024</td><td>12 M</td></tr><tr><td>2025</td><td>3 M</td></tr></table>`),
		want:    []string{"| Year | Cost |\n|---|---|\n| 2024 | 12 M |\n| 2025 | 3 M |"},
		wantNot: []string{"|  |", "| |\n"},
	}, {
		name:    "a table is not padded to its widest cell",
		html:    articlePage("<title>Budget approved</title>", "", `<table><tr><th>A</th><th>B</th></tr><tr><td>a very long cell of the first column</td><td>b</td></tr><tr><td>x</td><td>y</td></tr></table>`),
		want:    []string{"| A | B |", "| x | y |"},
		wantNot: []string{"x    "},
	}, {
		name:    "a layout table comes out as paragraphs",
		html:    articlePage("<title>Budget approved</title>", "", `<table><tr><td><p>Left column text.</p></td><td><p>Right column text.</p></td></tr></table>`),
		want:    []string{"Left column text.\n\nRight column text."},
		wantNot: []string{"|"},
	}, {
		name: "adjacent lists are not separated by a comment",
		html: articlePage("<title>Budget approved</title>", "", `<ul><li>one</li><li>two</li></ul><ul><li>three</li></ul>`),
		want: []string{"- two\n", "- three"}, wantNot: []string{"THE END", "<!--"},
	}, {
		name:    "link titles that repeat the text and links without text are left out",
		html:    articlePage("<title>Budget approved</title>", "", `<p>See <a href="/minutes" title="The Minutes">the minutes</a>, <a href="/plan" title="PDF, 2 MB">the plan</a> and <a href="/x"><img src="" alt=""></a><a href="/empty"></a>.</p>`),
		want:    []string{"[the minutes](https://news.example.com/minutes)", `[the plan](https://news.example.com/plan "PDF, 2 MB")`},
		wantNot: []string{"[](", `"The Minutes"`},
	}, {
		name:    "no line ends in spaces",
		html:    articlePage("<title>Budget approved</title>", "", `<p>First line<br>second line<br>third line</p>`),
		want:    []string{"First line\nsecond line\nthird line"},
		wantNot: []string{" \n"},
	}, {
		name: "relative links are resolved against base href",
		html: articlePage(`<title>Budget approved</title><base href="https://cdn.example.org/docs/">`, "", `<p>Read <a href="annex.html">the annex</a> and <a href="/root.html">the index</a>.</p><img src="chart.png" alt="Chart">`),
		want: []string{"[the annex](https://cdn.example.org/docs/annex.html)", "[the index](https://cdn.example.org/root.html)", "![Chart](https://cdn.example.org/docs/chart.png)"},
	}, {
		name: "a relative base href is resolved against the page",
		html: `<html><head><title>Note</title><base href="files/"></head><body><p>A short note with <a href="a.pdf">a file</a>.</p></body></html>`,
		want: []string{"[a file](https://news.example.com/2024/files/a.pdf)"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Convert([]byte(tc.html), "text/html", page)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(d.Content) == "" {
				t.Fatalf("empty content (title %q)", d.Title)
			}
			if tc.title != "" && d.Title != tc.title {
				t.Errorf("title %q, want %q", d.Title, tc.title)
			}
			for _, w := range tc.want {
				if !strings.Contains(d.Content, w) {
					t.Errorf("content lacks %q\n--- content ---\n%s", w, d.Content)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(d.Content, w) {
					t.Errorf("content has %q\n--- content ---\n%s", w, d.Content)
				}
			}
		})
	}
}

// TestConvertPageWithoutTextIsAnError: a page in which no step finds any
// text is an error, not an empty success; an empty body is an empty
// document.
func TestConvertPageWithoutTextIsAnError(t *testing.T) {
	for _, h := range []string{
		`<html><head><title>App</title><script>render()</script></head><body><div id="root"></div></body></html>`,
		`<html><body class="cookie-consent"><div class="cookies"></div></body></html>`,
		"<!-- nothing -->",
	} {
		if d, err := Convert([]byte(h), "text/html", nil); !errors.Is(err, ErrNoContent) {
			t.Errorf("%s: %+v %v, want ErrNoContent", h, d, err)
		}
	}
	if d, err := Convert(nil, "text/html", nil); err != nil || d.Content != "" {
		t.Errorf("empty body: %+v %v, want an empty document", d, err)
	}
}

func TestClutterWordsMatchWholeWords(t *testing.T) {
	for v, want := range map[string]bool{
		"cookie-banner":                true,
		"CookieNotice":                 true,
		"gdpr_overlay":                 true,
		"site consent-manager":         true,
		"newsletter-signup":            true,
		"skip-link":                    true,
		"f_bucketcookies_on":           false,
		"nocookie":                     false,
		"newsletter":                   false,
		"skiplink-target article-body": false,
	} {
		if got := hasClutterWord(v); got != want {
			t.Errorf("hasClutterWord(%q) = %v, want %v", v, got, want)
		}
	}
}
