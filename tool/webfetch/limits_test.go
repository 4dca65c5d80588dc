package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
)

// TestFetchConversionStopsWithTheContext: converting a hostile page can take
// seconds of CPU, so the fetch's deadline and cancellation must cover the
// conversion too, not only the network part.
func TestFetchConversionStopsWithTheContext(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>slow to convert</p></body></html>")
	}))
	entered := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	o := e.opts(Options{})
	o.convert = func(body []byte, ct string, u *url.URL) (Document, error) {
		close(entered)
		select { // a conversion that never ends on its own within the test
		case <-release:
		case <-time.After(20 * time.Second):
		}
		return Document{Content: "converted", Format: FormatMarkdown}, nil
	}
	tool, err := New[struct{}](o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	res, err := tool.Fetcher().Fetch(ctx, e.url("/"), 0)
	if !errors.Is(err, context.Canceled) || Refused(err) {
		t.Fatalf("Fetch cancelled during conversion: %+v, %v; want an error wrapping context.Canceled", res, err)
	}
}

// TestFetchConversionPanicIsAnError: conversion runs on its own goroutine,
// where a panic in an HTML library would kill the process instead of
// reaching the runner's recover; it must come back as an error.
func TestFetchConversionPanicIsAnError(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>x</p>")
	}))
	o := e.opts(Options{})
	o.convert = func([]byte, string, *url.URL) (Document, error) { panic("converter bug") }
	tool, _ := New[struct{}](o)
	_, err := invoke(tool, Args{URL: e.url("/")})
	if helikon.KindOf(err) != helikon.KindOther || !strings.Contains(err.Error(), "converter bug") {
		t.Fatalf("panicking conversion: %v, want an other error naming the panic", err)
	}
}

// TestConvertHostileHTMLDegradesToText: pages built to make readability and
// the Markdown converter slow (hundreds of thousands of elements) or to break
// the parser (nesting deeper than it accepts) come back as plain text,
// whose extraction is one linear pass, instead of costing seconds of CPU
// per fetch or failing.
func TestConvertHostileHTMLDegradesToText(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"deep nesting", "<html><head><title>Deep</title></head><body>" + strings.Repeat("<div>", 2000) + "deep content" + strings.Repeat("</div>", 2000), "deep content"},
		{"element flood", "<html><head><title>Flood</title></head><body><p>flood start</p>" + strings.Repeat("<b><p>x", maxMarkdownElements/2), "flood start"},
		{"flood of formatting elements", "<title>Fmt</title>" + strings.Repeat("<font><p>", maxMarkdownElements/2) + "end", "end"},
		{"tag flood", "<title>Tags</title>" + strings.Repeat("<p>x", maxTags+1) + "end", "end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Convert([]byte(tc.body), "text/html", nil)
			if err != nil {
				t.Fatalf("Convert: %v, want the page as text", err)
			}
			if d.Format != FormatText || !strings.Contains(d.Content, tc.want) || d.Title == "" {
				t.Errorf("format %q title %q content %.80q; want text with %q and the title", d.Format, d.Title, d.Content, tc.want)
			}
			if strings.Contains(d.Content, "<") {
				t.Errorf("text fallback kept markup: %.80q", d.Content)
			}
		})
	}
	// A page just under the limit is still converted to Markdown.
	d, err := Convert([]byte("<html><body><h1>Big</h1>"+strings.Repeat("<p>para</p>", 1000)+"</body></html>"), "text/html", nil)
	if err != nil || d.Format != FormatMarkdown {
		t.Errorf("ordinary page: %q %v, want markdown", d.Format, err)
	}
}

// TestConvertTagFloodIsNotParsedIntoATree: 5 MiB of "<b><p>" parses into
// over four million nodes (about half a gigabyte); a page with that many
// tags must go to the text fallback before the tree is built.
func TestConvertTagFloodIsNotParsedIntoATree(t *testing.T) {
	body := []byte("<title>Flood</title>" + strings.Repeat("<b><p>x", DefaultMaxBytes/7))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Convert(body, "text/html", nil)
	runtime.ReadMemStats(&after)
	if err != nil || d.Format != FormatText || d.Title != "Flood" {
		t.Fatalf("Convert: %q %q %v, want text with the title", d.Format, d.Title, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("converting a %d MiB tag flood allocated %d MiB; it was parsed into a tree", len(body)>>20, alloc>>20)
	}
}

// TestConvertCharsetTricks: declarations that lie or name encodings that
// decode to nothing must neither fail the conversion nor smuggle markup
// through as text.
func TestConvertCharsetTricks(t *testing.T) {
	page := "<html><head><title>T</title></head><body><article><p>" + strings.Repeat("Plain words in the page. ", 40) + "</p></article></body></html>"
	cases := []struct {
		name, ct string
		body     []byte
	}{
		{"utf-16 declared, utf-8 sent", "text/html; charset=utf-16", []byte(page)},
		{"replacement encoding", "text/html; charset=iso-2022-kr", []byte(page)},
		{"utf-7 label", "text/html; charset=utf-7", []byte(page)},
		{"unknown label", "text/html; charset=x-no-such", []byte(page)},
		{"BOM contradicts header", "text/html; charset=iso-8859-1", append([]byte("\xfe\xff"), []byte(page)...)},
		{"meta after 1024 bytes", "text/html", []byte("<!--" + strings.Repeat("x", 2000) + "--><meta charset=utf-16>" + page)},
		{"odd-length utf-16", "text/html; charset=utf-16le", []byte(page + "x")},
		{"invalid utf-8", "text/html; charset=utf-8", []byte(page + "\xff\xfe\xc0\x80")},
	}
	for _, tc := range cases {
		d, err := Convert(tc.body, tc.ct, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if strings.Contains(d.Content, "<p>") || strings.Contains(d.Content, "<article>") {
			t.Errorf("%s: markup in the converted content: %.80q", tc.name, d.Content)
		}
	}
}
