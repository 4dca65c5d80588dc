package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Brave Search API defaults.
const (
	BraveBaseURL = "https://api.search.brave.com"
	BraveKeyEnv  = "BRAVE_API_KEY"
	// braveMaxCount is the API's maximum for the count parameter.
	braveMaxCount = 20
)

// Tavily API defaults.
const (
	TavilyBaseURL = "https://api.tavily.com"
	TavilyKeyEnv  = "TAVILY_API_KEY"
	// tavilyMaxResults is the API's maximum for max_results.
	tavilyMaxResults = 20
)

// apiKey holds a searcher's key behind a pointer, so that printing a searcher
// with %v or %+v (which walk unexported fields) shows an address, not the
// key.
type apiKey struct{ v string }

// ErrNoAPIKey is returned by the searcher constructors when no key is given
// and the environment variable is empty.
var ErrNoAPIKey = errors.New("no search API key")

func newBase(o *ServiceOptions, defBase, keyEnv, name string) (ServiceOptions, *url.URL, error) {
	var opts ServiceOptions
	if o != nil {
		opts = *o
	}
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv(keyEnv)
	}
	if strings.TrimSpace(opts.APIKey) == "" {
		return opts, nil, fmt.Errorf("websearch: %s: %w: set %s or pass ServiceOptions.APIKey", name, ErrNoAPIKey, keyEnv)
	}
	if opts.BaseURL == "" {
		opts.BaseURL = defBase
	}
	base, err := url.Parse(strings.TrimSuffix(opts.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return opts, nil, fmt.Errorf("websearch: %s: base URL %q must be an absolute http or https URL", name, opts.BaseURL)
	}
	return opts, base, nil
}

// Brave is the Brave Search searcher
// (GET /res/v1/web/search with the X-Subscription-Token header).
type Brave struct {
	opts ServiceOptions // APIKey cleared: key holds it
	base *url.URL
	key  *apiKey
}

// NewBrave returns a Brave Search searcher. It fails when there is no API key.
func NewBrave(opts *ServiceOptions) (*Brave, error) {
	o, base, err := newBase(opts, BraveBaseURL, BraveKeyEnv, "brave")
	if err != nil {
		return nil, err
	}
	key := &apiKey{v: o.APIKey}
	o.APIKey = ""
	return &Brave{opts: o, base: base, key: key}, nil
}

// Name returns "brave".
func (b *Brave) Name() string { return "brave" }

// Host returns the API host, for permission rules on WebSearch.
func (b *Brave) Host() string { return b.base.Hostname() }

// braveResponse is the part of Brave's WebSearchApiResponse the searcher
// reads: web.results[] are SearchResult objects with title, url,
// description (HTML-highlighted) and optional extra_snippets.
type braveResponse struct {
	Web *struct {
		Results []struct {
			Title         string   `json:"title"`
			URL           string   `json:"url"`
			Description   string   `json:"description"`
			ExtraSnippets []string `json:"extra_snippets"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements [Searcher].
func (b *Brave) Search(ctx context.Context, query string, limit int) ([]SearchResult, error) {
	limit = clamp(limit, braveMaxCount)
	u := *b.base
	u.Path += "/res/v1/web/search"
	u.RawQuery = url.Values{"q": {query}, "count": {strconv.Itoa(limit)}}.Encode()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("brave: building the request: %w", ErrBadResponse)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key.v)
	var r braveResponse
	if err := do(ctx, b.opts.client(), "brave", BraveKeyEnv, req, &r); err != nil {
		return nil, err
	}
	var out []SearchResult
	if r.Web == nil {
		return out, nil
	}
	for _, w := range r.Web.Results {
		u := cleanURL(w.URL)
		if u == "" {
			continue
		}
		sr := SearchResult{Title: plainText(w.Title), URL: u, Snippet: plainText(w.Description)}
		if len(w.ExtraSnippets) > 0 {
			parts := make([]string, len(w.ExtraSnippets))
			for i, s := range w.ExtraSnippets {
				parts[i] = plainText(s)
			}
			sr.Content = strings.Join(parts, "\n")
		}
		out = append(out, sr)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Tavily is the Tavily searcher (POST /search with a bearer token).
type Tavily struct {
	opts ServiceOptions // APIKey cleared: key holds it
	base *url.URL
	key  *apiKey
	// Depth is the search_depth parameter: "basic" (the default) or
	// "advanced" (slower, costs more credits).
	Depth string
}

// NewTavily returns a Tavily searcher. It fails when there is no API key.
func NewTavily(opts *ServiceOptions) (*Tavily, error) {
	o, base, err := newBase(opts, TavilyBaseURL, TavilyKeyEnv, "tavily")
	if err != nil {
		return nil, err
	}
	key := &apiKey{v: o.APIKey}
	o.APIKey = ""
	return &Tavily{opts: o, base: base, key: key, Depth: "basic"}, nil
}

// Name returns "tavily".
func (t *Tavily) Name() string { return "tavily" }

// Host returns the API host, for permission rules on WebSearch.
func (t *Tavily) Host() string { return t.base.Hostname() }

type tavilyRequest struct {
	Query         string `json:"query"`
	MaxResults    int    `json:"max_results"`
	SearchDepth   string `json:"search_depth"`
	IncludeAnswer bool   `json:"include_answer"`
}

// tavilyResponse is Tavily's documented answer: results[] with title, url,
// content (an extract relevant to the query), score and raw_content (null
// unless requested).
type tavilyResponse struct {
	Results []struct {
		Title      string  `json:"title"`
		URL        string  `json:"url"`
		Content    string  `json:"content"`
		Score      float64 `json:"score"`
		RawContent *string `json:"raw_content"`
	} `json:"results"`
}

// Search implements [Searcher].
func (t *Tavily) Search(ctx context.Context, query string, limit int) ([]SearchResult, error) {
	limit = clamp(limit, tavilyMaxResults)
	body, err := json.Marshal(tavilyRequest{Query: query, MaxResults: limit, SearchDepth: t.Depth})
	if err != nil {
		return nil, fmt.Errorf("tavily: encoding the request failed")
	}
	u := *t.base
	u.Path += "/search"
	req, err := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("tavily: building the request: %w", ErrBadResponse)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key.v)
	var r tavilyResponse
	if err := do(ctx, t.opts.client(), "tavily", TavilyKeyEnv, req, &r); err != nil {
		return nil, err
	}
	var out []SearchResult
	for _, res := range r.Results {
		u := cleanURL(res.URL)
		if u == "" {
			continue
		}
		sr := SearchResult{Title: strings.TrimSpace(res.Title), URL: u, Snippet: strings.TrimSpace(res.Content)}
		if res.RawContent != nil {
			sr.Content = strings.TrimSpace(*res.RawContent)
		}
		out = append(out, sr)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

func clamp(n, max int) int {
	if n <= 0 {
		return DefaultResults
	}
	if n > max {
		return max
	}
	return n
}
