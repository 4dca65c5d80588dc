package webfetch

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/idna"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/hostmatch"
	"github.com/paigasus/helikon/tool/functiontool"
)

// Name is the tool's name.
const Name = "WebFetch"

// UsesKey is the session-state key under which the WebFetch tools of a run
// count their fetches for Options.MaxUses.
const UsesKey = "helikon.webfetch.uses"

const description = `Fetches an http or https URL and returns the page's main content as Markdown (HTML pages are reduced to the article: navigation, ads and footers removed) or the text of plain-text, JSON, XML and Markdown responses. Redirects are followed. Private and internal addresses cannot be fetched. A non-2xx status is returned as a result; "truncated": true means the content was cut at the byte limit. Images, PDFs and archives are refused.`

// Args are WebFetch's arguments.
type Args struct {
	URL      string `json:"url" jsonschema:"the http or https URL to fetch"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"the most body bytes to read (after decompression); lower than the tool's own limit, which it can never exceed"`
}

// Tool is the WebFetch tool. It implements [helikon.Tool],
// [helikon.Effecter] (side effect), [helikon.StructuredOutput] and
// [helikon.Targeter]: permission rules such as WebFetch(example.com) match
// the host of the requested URL.
//
// Permission rules see the first URL only; the tool's own host lists
// (Options.AllowedHosts and DeniedHosts) are applied to every redirect hop,
// so use them, not permission rules alone, to keep a fetch within a set of
// sites.
type Tool[C any] struct {
	*functiontool.Tool[C, Args, Result]
	fetcher *Fetcher
}

// New builds the WebFetch tool for application context type C. It fails on
// invalid options (see [NewFetcher]).
func New[C any](opts *Options) (*Tool[C], error) {
	f, err := NewFetcher(opts)
	if err != nil {
		return nil, err
	}
	t := &Tool[C]{fetcher: f}
	ft, err := functiontool.New(Name, description, t.invoke, &functiontool.Options{Effect: helikon.EffectSideEffect})
	if err != nil {
		return nil, fmt.Errorf("webfetch: %w", err)
	}
	t.Tool = ft
	return t, nil
}

// Fetcher returns the fetcher behind the tool.
func (t *Tool[C]) Fetcher() *Fetcher { return t.fetcher }

func (t *Tool[C]) invoke(tc *helikon.ToolContext[C], in Args) (Result, error) {
	if in.MaxBytes < 0 {
		return Result{}, helikon.InvalidArgs("max_bytes must be positive; leave it out to use the tool's limit")
	}
	// A url with no scheme (example.com/x) is a slip the model fixes:
	// invalid arguments. A string that does not parse as a URL stays a
	// refusal (denied), as the guard's own are: parser-confusion payloads
	// (http://a\@127.0.0.1/) are the common case, and a model should not
	// be told to repair them. Both before the call counts against the
	// budget.
	u, err := parseURL(in.URL)
	if err != nil {
		return Result{}, denied(err)
	}
	if u.Scheme == "" && u.Opaque == "" {
		return Result{}, helikon.InvalidArgs(fmt.Sprintf("url %q has no scheme; write it as https://%s", in.URL, strings.TrimPrefix(strings.TrimSpace(in.URL), "//")))
	}
	if _, err := t.fetcher.vet(u); err != nil {
		return Result{}, denied(err)
	}
	if n := t.fetcher.opts.MaxUses; n > 0 {
		_, ok, err := tc.State().IncrementIfBelow(UsesKey, int64(n))
		if err != nil {
			return Result{}, helikon.Other(err)
		}
		if !ok {
			return Result{}, helikon.Denied("this run has used all %d of its web fetches; answer with what you have", n)
		}
	}
	res, err := t.fetcher.Fetch(tc, in.URL, in.MaxBytes)
	if err != nil {
		if Refused(err) {
			return Result{}, denied(err)
		}
		return Result{}, helikon.Other(err)
	}
	return *res, nil
}

// Targets reports the host of the requested URL, so that permission rules
// such as WebFetch(example.com) and WebFetch(*.internal) match it. A URL
// without a recognizable host is reported as unresolved, so deny rules with
// a pattern match it and allow rules do not.
func (t *Tool[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	var in Args
	if err := json.Unmarshal(args, &in); err != nil {
		return helikon.Targets{Unresolved: "the arguments are not a JSON object with a url"}, nil
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || u.Hostname() == "" {
		return helikon.Targets{Unresolved: "the url has no host"}, nil
	}
	host := hostmatch.Normalize(u.Hostname())
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		host = a // rules are written in ASCII (punycode) form
	}
	return helikon.Targets{Hosts: []string{host}}, nil
}

// deniedError is a [helikon.DeniedError] that keeps the refusal it reports in
// its chain, so callers can still test for ssrf.ErrBlocked, ErrHostDenied and
// the others with errors.Is.
type deniedError struct {
	*helikon.DeniedError
	cause error
}

func denied(err error) error {
	return &deniedError{DeniedError: &helikon.DeniedError{Reason: err.Error()}, cause: err}
}

func (e *deniedError) Unwrap() error { return e.cause }

// As lets errors.As find the *helikon.DeniedError.
func (e *deniedError) As(target any) bool {
	if p, ok := target.(**helikon.DeniedError); ok {
		*p = e.DeniedError
		return true
	}
	return false
}
