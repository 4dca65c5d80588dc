// Package websearch is the WebSearch tool: a web search through a swappable
// [Searcher], with Brave Search ([NewBrave]) and Tavily ([NewTavily])
// provided.
//
// Guarantees: a searcher's API key is sent only in the header its service
// documents and never appears in an error, a log record or a result; the
// request body and headers never appear in errors either. Result URLs are
// filtered by the tool's allowed and blocked domain lists before the model
// sees them (hosts compared in punycode form, so a Unicode spelling matches
// its ASCII pattern), and every result URL is an absolute http or https URL
// without userinfo. An API answer is read up to 8 MiB; a redirect that
// leaves the base URL's origin is refused, since it would carry the key.
//
// Not guaranteed: the search results are whatever the service returns; the
// tool does not fetch or check the pages behind them (use WebFetch, whose
// SSRF guard applies, to read one). The searchers talk to their configured
// base URL directly: it is operator configuration, not model input, so it is
// not put through the SSRF guard.
package websearch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// SearchResult is one search hit.
type SearchResult struct {
	Title   string `json:"title" jsonschema:"the page title"`
	URL     string `json:"url" jsonschema:"the page URL"`
	Snippet string `json:"snippet" jsonschema:"a short excerpt of the page, plain text"`
	Content string `json:"content,omitempty" jsonschema:"more text from the page, when the service provides it"`
}

// Searcher is a web search service. Implementations must be safe for
// concurrent use and must honour ctx.
type Searcher interface {
	// Name identifies the searcher, such as "brave" or "tavily".
	Name() string
	// Search returns at most limit results for query, best first.
	Search(ctx context.Context, query string, limit int) ([]SearchResult, error)
}

// Errors a searcher returns (wrapped) for HTTP failures. They never carry the
// API key, the request or the response body.
var (
	// ErrUnauthorized: the service rejected the API key (401 or 403).
	ErrUnauthorized = errors.New("search API key rejected")
	// ErrRateLimited: the service answered 429; see [RateLimitError].
	ErrRateLimited = errors.New("search rate limit reached")
	// ErrUnavailable: the service failed (5xx) or could not be reached.
	ErrUnavailable = errors.New("search service unavailable")
	// ErrBadResponse: the service answered with something that is not its
	// documented JSON.
	ErrBadResponse = errors.New("unexpected search response")
)

// RateLimitError is the error for a 429 answer. It matches [ErrRateLimited].
type RateLimitError struct {
	// Service is the name of the service that answered 429.
	Service string
	// RetryAfter is the wait the service asked for, 0 when it gave none.
	RetryAfter time.Duration
}

// Error says which service limited the rate and how long to wait.
func (e *RateLimitError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s: %v: retry after %s, or search less often", e.Service, ErrRateLimited, e.RetryAfter.Round(time.Second))
	}
	return fmt.Sprintf("%s: %v: wait a minute before searching again, or search less often", e.Service, ErrRateLimited)
}

// Is reports whether target is [ErrRateLimited].
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// cleanURL returns the absolute http(s) URL s without userinfo, or "" when
// it is not one. Userinfo is dropped because https://good.example@evil.example/
// reads as good.example to a model and goes to evil.example.
func cleanURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	u.User = nil
	return u.String()
}
