package websearch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/idna"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/hostmatch"
	"github.com/paigasus/helikon/tool/functiontool"
)

// Name is the tool's name.
const Name = "WebSearch"

// Result counts.
const (
	// DefaultResults is how many results a call gets when it names no limit
	// and Options.DefaultResults is 0.
	DefaultResults = 5
	// HardMaxResults caps every call whatever the options say: both
	// services' APIs stop at 20.
	HardMaxResults = 20
)

const description = `Searches the web and returns a list of results, each with a title, a URL and a snippet. Use it to find pages; read a page with WebFetch.`

// Args are WebSearch's arguments.
type Args struct {
	Query string `json:"query" jsonschema:"what to search for"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many results to return (1 to 20); the tool's default when left out"`
}

// Output is WebSearch's output.
type Output struct {
	Results []SearchResult `json:"results" jsonschema:"the results, best first"`
}

// Options configures the WebSearch tool. The zero value (or nil) means 5
// results by default, at most 20, every domain allowed.
type Options struct {
	// DefaultResults is the number of results when a call names no limit;
	// 0 means [DefaultResults].
	DefaultResults int
	// MaxResults caps a call's limit; 0 means, and more than
	// [HardMaxResults] is cut to, [HardMaxResults].
	MaxResults int
	// AllowedDomains, when not empty, keeps only results whose URL host
	// matches one of them ("example.com" matches its subdomains too,
	// "*.example.com" subdomains only).
	AllowedDomains []string
	// BlockedDomains drops results whose URL host matches one of them.
	// Internationalized names may be written in Unicode or punycode; result
	// hosts are compared in punycode form.
	// Blocked wins over allowed.
	BlockedDomains []string
}

// Tool is the WebSearch tool. It implements [helikon.Tool],
// [helikon.Effecter] (side effect), [helikon.StructuredOutput] and
// [helikon.Targeter], reporting the searcher's API host when the searcher
// has a Host method (the provided ones do).
type Tool[C any] struct {
	*functiontool.Tool[C, Args, Output]
	searcher Searcher
	opts     Options
}

// New builds the WebSearch tool over searcher, which is required.
func New[C any](searcher Searcher, opts *Options) (*Tool[C], error) {
	if searcher == nil {
		return nil, errors.New("websearch: a searcher is required (NewBrave or NewTavily)")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DefaultResults < 0 || o.MaxResults < 0 {
		return nil, errors.New("websearch: DefaultResults and MaxResults must not be negative")
	}
	if o.MaxResults == 0 || o.MaxResults > HardMaxResults {
		o.MaxResults = HardMaxResults
	}
	if o.DefaultResults == 0 {
		o.DefaultResults = DefaultResults
	}
	if o.DefaultResults > o.MaxResults {
		o.DefaultResults = o.MaxResults
	}
	var err error
	if o.AllowedDomains, err = asciiPatterns(o.AllowedDomains); err != nil {
		return nil, err
	}
	if o.BlockedDomains, err = asciiPatterns(o.BlockedDomains); err != nil {
		return nil, err
	}
	t := &Tool[C]{searcher: searcher, opts: o}
	ft, err := functiontool.New(Name, description, t.invoke, &functiontool.Options{Effect: helikon.EffectSideEffect})
	if err != nil {
		return nil, fmt.Errorf("websearch: %w", err)
	}
	t.Tool = ft
	return t, nil
}

// Searcher returns the tool's searcher.
func (t *Tool[C]) Searcher() Searcher { return t.searcher }

func (t *Tool[C]) invoke(tc *helikon.ToolContext[C], in Args) (Output, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return Output{}, helikon.InvalidArgs("query is empty; say what to search for")
	}
	limit := in.Limit
	switch {
	case limit < 0:
		return Output{}, helikon.InvalidArgs(fmt.Sprintf("limit must be between 1 and %d", t.opts.MaxResults))
	case limit == 0:
		limit = t.opts.DefaultResults
	case limit > t.opts.MaxResults:
		limit = t.opts.MaxResults
	}
	ask := limit
	if len(t.opts.AllowedDomains) > 0 || len(t.opts.BlockedDomains) > 0 {
		ask = HardMaxResults // leave room for what the filters drop
	}
	res, err := t.searcher.Search(tc, q, ask)
	if err != nil {
		return Output{}, helikon.Other(err)
	}
	out := Output{Results: []SearchResult{}}
	for _, r := range res {
		if !t.keep(r.URL) {
			continue
		}
		out.Results = append(out.Results, r)
		if len(out.Results) == limit {
			break
		}
	}
	return out, nil
}

// asciiPatterns validates domain patterns, converting internationalized
// names to their ASCII (punycode) form, the form result hosts are compared
// in.
func asciiPatterns(ps []string) ([]string, error) {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		q := strings.TrimSpace(p)
		if rest, wild := strings.CutPrefix(q, "*."); !isASCII(q) {
			if a, err := idna.Lookup.ToASCII(hostmatch.Normalize(rest)); err == nil {
				q = a
				if wild {
					q = "*." + a
				}
			}
		}
		if !hostmatch.Valid(q) {
			return nil, fmt.Errorf("websearch: %q is not a domain pattern such as example.com or *.example.com", p)
		}
		out = append(out, q)
	}
	return out, nil
}

// keep applies the domain lists to a result URL. The host is compared in
// its ASCII (punycode) form, so https://bücher.example/ and
// https://xn--bcher-kva.example/ are the same site to the lists; a host
// that has no ASCII form is dropped when any list is set.
func (t *Tool[C]) keep(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return false
	}
	h := hostmatch.Normalize(u.Hostname())
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return len(t.opts.AllowedDomains) == 0 && len(t.opts.BlockedDomains) == 0
		}
		h = a
	}
	if hostmatch.MatchAny(t.opts.BlockedDomains, h) {
		return false
	}
	return len(t.opts.AllowedDomains) == 0 || hostmatch.MatchAny(t.opts.AllowedDomains, h)
}

// Targets reports the searcher's API host when the searcher has a Host method,
// so that a rule such as WebSearch(api.search.brave.com) matches; otherwise
// the targets are unresolved (deny rules with a pattern match, allow rules
// with a pattern do not).
func (t *Tool[C]) Targets(json.RawMessage) (helikon.Targets, error) {
	if h, ok := t.searcher.(interface{ Host() string }); ok && h.Host() != "" {
		return helikon.Targets{Hosts: []string{h.Host()}}, nil
	}
	return helikon.Targets{Unresolved: "the searcher does not say which host it contacts"}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
