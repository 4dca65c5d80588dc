package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// DefaultHTTPTimeout bounds one API call when the context has no earlier
// deadline.
const DefaultHTTPTimeout = 30 * time.Second

// maxResponseBytes caps an API response: 20 results with extra snippets are
// well under 1 MiB.
const maxResponseBytes = 8 << 20

// ServiceOptions configures a searcher. The zero value reads the API key from
// the searcher's environment variable and uses the public API.
type ServiceOptions struct {
	// APIKey is the service's key; "" reads it from the environment
	// (BRAVE_API_KEY or TAVILY_API_KEY).
	APIKey string
	// BaseURL replaces the service's base URL (scheme and host, optionally a
	// path prefix), for tests and for API gateways.
	BaseURL string
	// HTTPClient sends the requests; nil means a client with
	// [DefaultHTTPTimeout]. Unless its CheckRedirect is set, redirects to
	// another scheme, host or port are refused, since they would carry the
	// key there (see [sameOrigin]).
	HTTPClient *http.Client
}

func (o *ServiceOptions) client() *http.Client {
	c := http.Client{Timeout: DefaultHTTPTimeout}
	if o.HTTPClient != nil {
		c = *o.HTTPClient
	}
	if c.CheckRedirect == nil {
		c.CheckRedirect = sameOrigin
	}
	return &c
}

// errCrossOrigin is returned for a redirect that leaves the API's origin.
var errCrossOrigin = errors.New("the service redirected to another origin")

// sameOrigin refuses a redirect to another scheme, host or port. Go's client
// drops Authorization only when the host name changes, keeps custom headers
// such as Brave's X-Subscription-Token whatever the destination, and
// re-sends a POST body (Tavily's) on 307 and 308: following such a redirect
// would hand the key to whoever it points at.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if prev := via[0].URL; req.URL.Scheme != prev.Scheme || req.URL.Host != prev.Host {
		return fmt.Errorf("%w (%s://%s); check BaseURL", errCrossOrigin, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// do sends req and decodes a 2xx JSON answer into v. Errors say what happened
// and what to do, and never include the request (which holds the key), its
// body or the response body.
func do(ctx context.Context, c *http.Client, service, keyVar string, req *http.Request, v any) error {
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w: %w", service, ErrUnavailable, ctx.Err())
		}
		// A *url.Error repeats the URL, which for Brave holds the query
		// but never the key; the transport's error is enough.
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return fmt.Errorf("%s: %w: %v; check the network and try again", service, ErrUnavailable, err)
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("%s: %w (HTTP %d): check %s", service, ErrUnauthorized, code, keyVar)
	case code == http.StatusTooManyRequests:
		return &RateLimitError{Service: service, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	case code >= 500:
		return fmt.Errorf("%s: %w (HTTP %d): try again later", service, ErrUnavailable, code)
	case code < 200 || code > 299:
		return fmt.Errorf("%s: the service refused the request (HTTP %d); rephrase the query or lower the limit", service, code)
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w: the answer is not the documented JSON", service, ErrBadResponse)
	}
	return nil
}

// maxRetryAfter caps the wait a Retry-After header can ask for.
const maxRetryAfter = 24 * time.Hour

// retryAfter parses a Retry-After header: delay seconds or an HTTP date. A
// wait longer than [maxRetryAfter] (including one too large for a
// time.Duration, which would wrap around) is reported as maxRetryAfter.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseUint(h, 10, 64); err == nil {
		if s > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(s) * time.Second
	} else if errors.Is(err, strconv.ErrRange) {
		return maxRetryAfter
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// plainText strips the markup some services put in snippets (Brave wraps
// matches in <strong>) and decodes entities, using the HTML tokenizer rather
// than a regular expression so that "a < b" survives.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.TrimSpace(s)
	}
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(strings.Fields(b.String()), " ")
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}
