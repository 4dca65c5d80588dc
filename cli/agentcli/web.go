package agentcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/webfetch"
	"github.com/paigasus/helikon/tool/websearch"
	"github.com/paigasus/helikon/toolbox"
)

func init() {
	cli.RegisterAgent("fetch", runFetch)
	cli.RegisterAgent("search", runSearch)
	RegisterTools(&ToolProvider{Names: []string{webfetch.Name, websearch.Name}, Flags: webToolFlags})
}

// fetchFlags are WebFetch's options as flags. The fetch command defines all
// of them; the shared flag set of tool, mcp and run defines the same names
// except --timeout, which is already the command timeout there and is used
// for fetches too, and adds --fetch-max-uses.
type fetchFlags struct {
	allow, deny  *[]string
	allowPrivate bool
	maxBytes     int64
	timeout      time.Duration
	maxUses      int
}

func addFetchFlags(fs *flag.FlagSet, shared bool) *fetchFlags {
	f := &fetchFlags{}
	f.allow = cli.Multi(fs, "allow-host", "WebFetch: fetch only `HOST` and its subdomains (*.HOST: subdomains only; repeatable)")
	f.deny = cli.Multi(fs, "deny-host", "WebFetch: never fetch `HOST` or its subdomains (repeatable; wins over allow)")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "WebFetch: let fetches reach loopback and private addresses (cloud metadata stays blocked)")
	cli.SizeVar(fs, &f.maxBytes, "max-bytes", 0, "WebFetch: read at most `SIZE` of body after decompression, such as 2MiB (default 5 MiB)")
	if shared {
		fs.IntVar(&f.maxUses, "fetch-max-uses", 0, "WebFetch: allow at most `N` fetches per run (default: no limit)")
	} else {
		cli.DurationVar(fs, &f.timeout, "timeout", 0, "give up on a fetch after `DURATION` (default 30s)")
	}
	return f
}

func (f *fetchFlags) options() *webfetch.Options {
	return &webfetch.Options{
		AllowedHosts: *f.allow,
		DeniedHosts:  *f.deny,
		AllowPrivate: f.allowPrivate,
		MaxBytes:     f.maxBytes,
		Timeout:      f.timeout,
		MaxUses:      f.maxUses,
	}
}

// searchFlags select and configure the searcher (the --backend flag names
// the search service).
type searchFlags struct {
	prefix     string // of the flags' names: "search-" where they sit beside other tools'
	backend    string
	baseURL    string
	maxResults int
	allow      *[]string
	block      *[]string
}

func addSearchFlags(fs *flag.FlagSet, prefix string) *searchFlags {
	s := &searchFlags{prefix: prefix}
	fs.StringVar(&s.backend, prefix+"backend", "", "search `BACKEND`: brave or tavily (default: tavily when only $TAVILY_API_KEY is set, else brave)")
	fs.StringVar(&s.baseURL, prefix+"base-url", "", "send API requests to `URL` instead of the service (a gateway, or a test server)")
	fs.IntVar(&s.maxResults, prefix+"max-results", 0, "return at most `N` results per search (default and hard maximum 20)")
	s.allow = cli.Multi(fs, prefix+"allow-domain", "keep only results from `DOMAIN` and its subdomains (repeatable)")
	s.block = cli.Multi(fs, prefix+"block-domain", "drop results from `DOMAIN` and its subdomains (repeatable)")
	return s
}

// searcher builds the selected searcher. Without an API key it returns a
// searcher that fails every search with the reason, so that listing or
// serving the built-in tools works on a machine without a key.
func (s *searchFlags) searcher(env *cli.Env) (websearch.Searcher, error) {
	name := strings.ToLower(s.backend)
	if name == "" {
		name = "brave"
		if env.Var(websearch.BraveKeyEnv) == "" && env.Var(websearch.TavilyKeyEnv) != "" {
			name = "tavily"
		}
	}
	var (
		b   websearch.Searcher
		err error
	)
	switch name {
	case "brave":
		b, err = websearch.NewBrave(&websearch.ServiceOptions{APIKey: env.Var(websearch.BraveKeyEnv), BaseURL: s.baseURL})
	case "tavily":
		b, err = websearch.NewTavily(&websearch.ServiceOptions{APIKey: env.Var(websearch.TavilyKeyEnv), BaseURL: s.baseURL})
	default:
		return nil, fmt.Errorf("unknown search backend %q: use brave or tavily", s.backend)
	}
	if errors.Is(err, websearch.ErrNoAPIKey) {
		// Worded for the command line, not for Go (no ServiceOptions).
		key, other, otherKey := websearch.BraveKeyEnv, "tavily", websearch.TavilyKeyEnv
		if name == "tavily" {
			key, other, otherKey = websearch.TavilyKeyEnv, "brave", websearch.BraveKeyEnv
		}
		err = fmt.Errorf("%w: WebSearch on %s needs $%s (or $%s with --%sbackend %s)", websearch.ErrNoAPIKey, name, key, otherKey, s.prefix, other)
	}
	if err != nil {
		return &unconfigured{name: name, err: err}, nil
	}
	return b, nil
}

func (s *searchFlags) options() *websearch.Options {
	return &websearch.Options{MaxResults: s.maxResults, AllowedDomains: *s.allow, BlockedDomains: *s.block}
}

// unconfigured is a searcher that cannot run (no API key): every
// search fails with the reason.
type unconfigured struct {
	name string
	err  error
}

func (u *unconfigured) Name() string { return u.name }

func (u *unconfigured) Search(context.Context, string, int) ([]websearch.SearchResult, error) {
	return nil, u.err
}

func webToolFlags(fs *flag.FlagSet) ToolBuilder {
	ff := addFetchFlags(fs, true)
	sf := addSearchFlags(fs, "search-")
	return func(te *ToolEnv, name string) (helikon.Tool[App], error) {
		if name == webfetch.Name {
			opts := ff.options()
			if te.Common != nil {
				opts.AllowedHosts, opts.DeniedHosts = te.Common.FetchHosts(opts.AllowedHosts, opts.DeniedHosts)
			}
			opts.Timeout = te.BackendFlags.Timeout
			return toolbox.NewTool[App](nil, name, &toolbox.ToolOptions{WebFetch: opts})
		}
		b, err := sf.searcher(te.Env)
		if err != nil {
			return nil, err
		}
		return toolbox.NewTool[App](nil, name, &toolbox.ToolOptions{Searcher: b, WebSearch: sf.options()})
	}
}

func runFetch(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("fetch", "fetch URL [flags]\n\nFetches URL through WebFetch's SSRF guard and prints the WebFetch output JSON\n({url, status, content_type, title, content, format, truncated}), or only the\ncontent with --markdown. A refused URL (blocked address, host list, scheme,\ntoo many redirects) exits 3; a timeout exits 124, another network failure 1.", env.Stderr)
	ff := addFetchFlags(fs, false)
	markdown := fs.Bool("markdown", false, "print only the content")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) != 1 {
		return cli.UsageFailf(env, fs, "fetch: want exactly one URL")
	}
	tool, err := webfetch.New[App](ff.options())
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "fetch: %v", err)
	}
	raw, _ := json.Marshal(webfetch.Args{URL: pos[0]})
	out, err := tool.Invoke(helikon.NewToolContext(ctx, App{}, nil), raw)
	if err != nil || !*markdown {
		return PrintToolResult(env, out, err)
	}
	var res webfetch.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return cli.Failf(env, cli.ExitOther, "fetch: %v", err)
	}
	fmt.Fprintln(env.Stdout, res.Content)
	return cli.ExitOK
}

func runSearch(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("search", "search QUERY [flags]\n\nSearches the web through WebSearch and prints its output JSON ({results:\n[{title, url, snippet, content?}]}). The API key comes from $BRAVE_API_KEY or\n$TAVILY_API_KEY.", env.Stderr)
	sf := addSearchFlags(fs, "")
	limit := fs.Int("limit", 0, "return `N` results (default 5, at most 20)")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) == 0 {
		return cli.UsageFailf(env, fs, "search: want a query")
	}
	b, err := sf.searcher(env)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "search: %v", err)
	}
	if u, ok := b.(*unconfigured); ok {
		return cli.Failf(env, cli.ExitUsage, "search: %v", u.err)
	}
	tool, err := websearch.New[App](b, sf.options())
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "search: %v", err)
	}
	raw, _ := json.Marshal(websearch.Args{Query: strings.Join(pos, " "), Limit: *limit})
	out, err := tool.Invoke(helikon.NewToolContext(ctx, App{}, nil), raw)
	return PrintToolResult(env, out, err)
}
