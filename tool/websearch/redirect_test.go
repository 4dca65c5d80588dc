package websearch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/tool/websearch"
)

// TestSearchersDoNotFollowRedirectsElsewhere: an API (or a gateway at
// BaseURL) that redirects to another host must not receive the key there.
// Go's client drops Authorization on such a redirect but keeps custom
// headers such as X-Subscription-Token, and re-sends a POST body on 307/308.
func TestSearchersDoNotFollowRedirectsElsewhere(t *testing.T) {
	var leaked atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("X-Subscription-Token")+r.Header.Get("Authorization"), testKey) {
			leaked.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer elsewhere.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()

	brave, err := websearch.NewBrave(&websearch.ServiceOptions{APIKey: testKey, BaseURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	tavily, err := websearch.NewTavily(&websearch.ServiceOptions{APIKey: testKey, BaseURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []websearch.Searcher{brave, tavily} {
		_, err := b.Search(context.Background(), "q", 3)
		if err == nil {
			t.Errorf("%s: a redirect to another host was followed", b.Name())
		} else if strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: error leaks the key: %v", b.Name(), err)
		}
	}
	if n := leaked.Load(); n > 0 {
		t.Errorf("the key reached another host %d times", n)
	}
}

// TestSearchersDoNotPrintTheKey: a searcher printed with %v, %+v or %#v (in a
// log line, a panic, a debug dump) does not show its key.
func TestSearchersDoNotPrintTheKey(t *testing.T) {
	brave, err := websearch.NewBrave(&websearch.ServiceOptions{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	tavily, err := websearch.NewTavily(&websearch.ServiceOptions{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []websearch.Searcher{brave, tavily} {
		if s := fmt.Sprintf("%v %+v %#v", b, b, b); strings.Contains(s, testKey) {
			t.Errorf("%s: printing the searcher shows the key: %s", b.Name(), s)
		}
	}
}
