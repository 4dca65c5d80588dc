package webfetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/ssrf"
	"github.com/paigasus/helikon/tool/webfetch"
)

// The WebFetch tool refuses internal addresses before connecting; a model
// that asks for the cloud metadata service gets a denied error saying why.
func ExampleNew() {
	tool, err := webfetch.New[struct{}](&webfetch.Options{
		DeniedHosts: []string{"internal.example.com"},
		MaxUses:     20,
	})
	if err != nil {
		panic(err)
	}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	_, err = tool.Invoke(tc, json.RawMessage(`{"url":"http://169.254.169.254/latest/meta-data/"}`))
	fmt.Println(helikon.KindOf(err), errors.Is(err, ssrf.ErrBlocked))
	_, err = tool.Invoke(tc, json.RawMessage(`{"url":"https://internal.example.com/"}`))
	fmt.Println(helikon.KindOf(err), errors.Is(err, webfetch.ErrHostDenied))
	// Output:
	// denied true
	// denied true
}

func ExampleConvert() {
	page := []byte(`<html><head><title>Hello</title></head><body><nav>Home | About</nav>
<article><h1>Hello</h1><p>A <a href="/docs">relative link</a>.</p><pre><code class="language-go">fmt.Println("hi")</code></pre></article></body></html>`)
	d, err := webfetch.Convert(page, "text/html; charset=utf-8", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Title)
	fmt.Println(d.Content)
	// Output:
	// Hello
	// A [relative link](/docs).
	//
	// ```go
	// fmt.Println("hi")
	// ```
}
