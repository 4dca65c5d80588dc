package websearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/websearch"
)

func ExampleNew() {
	// A stand-in for https://api.search.brave.com serving its documented shape.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"type":"search","web":{"type":"search","results":[
			{"title":"The Go Programming Language","url":"https://go.dev/","description":"<strong>Go</strong> is an open source programming language."}]}}`)
	}))
	defer api.Close()

	brave, err := websearch.NewBrave(&websearch.ServiceOptions{APIKey: "your-key", BaseURL: api.URL})
	if err != nil {
		panic(err)
	}
	tool, err := websearch.New[struct{}](brave, &websearch.Options{DefaultResults: 3})
	if err != nil {
		panic(err)
	}
	out, err := tool.Invoke(helikon.NewToolContext(context.Background(), struct{}{}, nil), json.RawMessage(`{"query":"golang"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"results":[{"title":"The Go Programming Language","url":"https://go.dev/","snippet":"Go is an open source programming language."}]}
}
