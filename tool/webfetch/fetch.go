package webfetch

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/idna"

	"github.com/paigasus/helikon/internal/hostmatch"
	"github.com/paigasus/helikon/ssrf"
)

// Defaults and hard limits.
const (
	// DefaultTimeout bounds a whole fetch: connecting, every redirect hop,
	// reading the body and converting it.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBytes caps the body, counted after decompression so that a
	// small compressed response cannot expand past it.
	DefaultMaxBytes = 5 << 20
	// MaxRedirects is how many redirects a fetch follows, each re-vetted;
	// browsers allow about 20, and a page needing more than 10 is broken or
	// hostile.
	MaxRedirects = 10
	// DefaultUserAgent is sent when Options.UserAgent is empty.
	DefaultUserAgent = "helikon-webfetch/1 (+https://github.com/paigasus/helikon)"
)

// Sentinel errors a fetch can fail with, besides those of package ssrf.
var (
	// ErrHostDenied: the host is on the denied list or not on the allowed
	// list.
	ErrHostDenied = errors.New("host not allowed")
	// ErrTooManyRedirects: the redirect chain is longer than [MaxRedirects].
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrPortBlocked: the URL names a port of another protocol (see
	// [BlockedPorts]).
	ErrPortBlocked = errors.New("port not allowed")
	// ErrUnsupportedEncoding: the server compressed the body with a
	// Content-Encoding WebFetch does not decode (anything but gzip), which
	// would otherwise reach the model as binary noise.
	ErrUnsupportedEncoding = errors.New("unsupported content encoding")
)

// maxContentEncodings bounds how many codings a response may stack
// (Content-Encoding: gzip, gzip); real servers apply one.
const maxContentEncodings = 2

// Options configures a [Fetcher] (and the WebFetch tool). The zero value (or
// nil) means: a 30 s timeout, a 5 MiB body cap, every public host allowed,
// private addresses refused, no per-run limit, no proxy.
type Options struct {
	// Timeout bounds the whole fetch; 0 means [DefaultTimeout].
	Timeout time.Duration
	// MaxBytes caps the decompressed body; 0 means [DefaultMaxBytes]. A
	// call's max_bytes can lower it, never raise it.
	MaxBytes int64
	// AllowedHosts, when not empty, are the only hosts that may be fetched,
	// on the first request and on every redirect hop. "example.com" matches
	// the host and its subdomains, "*.example.com" subdomains only (see
	// internal/hostmatch).
	AllowedHosts []string
	// DeniedHosts may never be fetched. Deny wins over allow.
	DeniedHosts []string
	// AllowPrivate lets fetches reach loopback, private, link-local and
	// other non-public addresses. Cloud metadata endpoints stay refused
	// (see [ssrf.CheckMetadata]). Meant for development servers; never
	// enable it for a model that reads untrusted pages.
	AllowPrivate bool
	// UserAgent is the User-Agent header; "" means [DefaultUserAgent].
	UserAgent string
	// MaxUses caps the number of fetches per run (counted in the run's
	// session state, so sub-agents share the budget); 0 means no cap.
	MaxUses int
	// Proxy, when set, sends every request through this HTTP proxy. The
	// proxy then decides which addresses are reached: the connection to
	// the proxy is not address-checked (it may be on loopback), while URL
	// vetting, the host lists and the refusal of local names (localhost,
	// *.localhost, *.local: the proxy would resolve them itself) still apply
	// to every hop. Proxy environment variables are always ignored.
	Proxy *url.URL
	// Resolver looks up host names; nil means the system resolver. Tests
	// use it to point names at local servers.
	Resolver ssrf.Resolver
	// Logger receives one debug record per fetch (URL without query, status,
	// bytes); nil means slog.Default(), as everywhere in helikon.
	Logger *slog.Logger

	// check replaces the address classifier; tests use it to let one
	// loopback address stand in for the public internet.
	check func(netip.Addr) error
	// control is the base dialer's Control, run after the guard's check for
	// allowed addresses only; tests put a tripwire there.
	control func(network, address string, c syscall.RawConn) error
	// convert replaces [Convert]; tests use it to stand in for a page
	// that is slow to convert.
	convert func(body []byte, contentType string, pageURL *url.URL) (Document, error)
}

// Result is the outcome of a fetch. A non-2xx status and a truncated body are
// results, not errors.
type Result struct {
	URL         string `json:"url" jsonschema:"the final URL after redirects"`
	Status      int    `json:"status" jsonschema:"the HTTP status code"`
	ContentType string `json:"content_type" jsonschema:"the media type of the response"`
	Title       string `json:"title" jsonschema:"the page title, empty for non-HTML content"`
	Content     string `json:"content" jsonschema:"the main content as Markdown, or the text of a non-HTML response"`
	Format      string `json:"format" jsonschema:"markdown or text" enum:"markdown,text"`
	Truncated   bool   `json:"truncated" jsonschema:"true when the body was longer than the byte limit and was cut"`
}

// Fetcher fetches web pages through the SSRF guard. It is safe for
// concurrent use.
type Fetcher struct {
	opts Options
	// rt sends each request of a fetch. It is the transport itself, not an
	// http.Client: a client parses a redirect's Location before any
	// CheckRedirect hook runs and fails with a plain error on one it cannot
	// parse, while Fetch must judge every Location itself (see Fetch).
	rt    http.RoundTripper
	allow []string
	deny  []string
}

// NewFetcher builds a Fetcher. It fails on an invalid host pattern or a
// negative limit.
func NewFetcher(opts *Options) (*Fetcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout < 0 || o.MaxBytes < 0 || o.MaxUses < 0 {
		return nil, errors.New("webfetch: Timeout, MaxBytes and MaxUses must not be negative")
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	f := &Fetcher{opts: o}
	var err error
	if f.allow, err = patterns("AllowedHosts", o.AllowedHosts); err != nil {
		return nil, err
	}
	if f.deny, err = patterns("DeniedHosts", o.DeniedHosts); err != nil {
		return nil, err
	}
	check := o.check
	if check == nil {
		check = ssrf.Check
		if o.AllowPrivate {
			check = ssrf.CheckMetadata
		}
	}
	dialer := &ssrf.Dialer{Resolver: o.Resolver, Check: check, Dialer: &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second, Control: o.control}}
	tr := &http.Transport{
		Proxy:                  nil, // never from the environment: a proxy hides the destination
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  o.Timeout,
		MaxResponseHeaderBytes: 1 << 20,
		// Fetch asks for gzip and decodes it itself (see decodeBody): the
		// transport's own decoding looks at the first Content-Encoding
		// value only and passes any other coding through undecoded.
		DisableCompression: true,
	}
	if o.Proxy != nil {
		tr.Proxy = http.ProxyURL(o.Proxy)
		// Every connection goes to the proxy, which the operator chose: it
		// is dialed without the address check (an egress proxy is usually
		// on loopback). Anything else would be a bug, and stays guarded.
		proxyAddr := proxyHostPort(o.Proxy)
		plain := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == proxyAddr {
				return plain.DialContext(ctx, network, addr)
			}
			return dialer.DialContext(ctx, network, addr)
		}
	}
	f.rt = tr
	return f, nil
}

// proxyHostPort is the address the transport dials for proxy u: its host
// and port, the scheme's default port when it has none.
func proxyHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func patterns(field string, ps []string) ([]string, error) {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		q := strings.TrimSpace(p)
		if rest, wild := strings.CutPrefix(q, "*."); !hostmatch.IsIP(q) {
			if a, err := idna.Lookup.ToASCII(rest); err == nil {
				q = a
				if wild {
					q = "*." + a
				}
			}
		}
		if !hostmatch.Valid(q) {
			return nil, fmt.Errorf("webfetch: %s: %q is not a host pattern such as example.com or *.example.com", field, p)
		}
		out = append(out, q)
	}
	return out, nil
}

// BlockedPorts are the ports WebFetch never sends a request to: the "bad
// ports" of the WHATWG Fetch standard, which browsers refuse too. Each
// belongs to another protocol (SSH, SMTP, POP3, IMAP, IRC, NFS, X11, ...):
// a fetch there only probes the service, hands its banner to the model or
// has lines of the HTTP request read as that protocol's commands.
var BlockedPorts = []int{
	0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95,
	101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179,
	389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601,
	636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
	6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
}

// checkPort refuses a port in [BlockedPorts].
func checkPort(u *url.URL) error {
	p := u.Port()
	if p == "" {
		return nil
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return fmt.Errorf("%w: %q is not a port number", ssrf.ErrInvalidHost, p)
	}
	if slices.Contains(BlockedPorts, n) {
		return fmt.Errorf("%w: port %d belongs to another protocol; WebFetch reads web pages on web ports (80, 443, 8080, ...)", ErrPortBlocked, n)
	}
	return nil
}

// Options returns the options in effect, defaults filled in.
func (f *Fetcher) Options() Options { return f.opts }

// checkHost applies the host lists.
func (f *Fetcher) checkHost(host string) error {
	if hostmatch.MatchAny(f.deny, host) {
		return fmt.Errorf("%w: %s is on the denied host list", ErrHostDenied, host)
	}
	if len(f.allow) > 0 && !hostmatch.MatchAny(f.allow, host) {
		return fmt.Errorf("%w: %s is not on the allowed host list (%s)", ErrHostDenied, host, strings.Join(f.allow, ", "))
	}
	return nil
}

// vet checks a URL before it is requested: the SSRF guard's URL rules, then
// the host lists. It returns the URL without its fragment, which is never
// sent.
func (f *Fetcher) vet(u *url.URL) (*url.URL, error) {
	u2 := *u
	u2.Fragment, u2.RawFragment = "", ""
	// Under AllowPrivate a private IP literal is allowed; a metadata
	// address and a numeric spelling still are not, and the refusal is the
	// lax classifier's own (it does not name ranges the option allows).
	literals := ssrf.Check
	if f.opts.AllowPrivate {
		literals = ssrf.CheckMetadata
	}
	if err := ssrf.VetURLWith(&u2, literals); err != nil {
		return nil, err
	}
	if r := localName(u2.Hostname()); r != "" && !f.opts.AllowPrivate {
		return nil, &ssrf.BlockedError{Host: u2.Hostname(), Reason: r + "; WebFetch reads public web pages only"}
	}
	if err := checkPort(&u2); err != nil {
		return nil, err
	}
	if err := f.checkHost(u2.Hostname()); err != nil {
		return nil, err
	}
	return &u2, nil
}

// localName returns why host is a name that never leaves the machine or its
// link, or "" when it is not one. Such a name is refused before any request
// (unless Options.AllowPrivate), the same with or without a proxy: a fetch
// through a proxy is resolved by the proxy, and a proxy that is not helikon's
// egress proxy may resolve localhost to itself and serve its own admin or
// metadata pages. Without a proxy the dialer would refuse the loopback
// address anyway; refusing the name first says why. The names:
//
//   - localhost and *.localhost, which RFC 6761 (section 6.3) reserves for
//     loopback, and resolvers must answer so without asking DNS;
//   - localhost.localdomain, localhost6, localhost6.localdomain6,
//     ip6-localhost and ip6-loopback, the loopback names of the /etc/hosts
//     that Debian, Ubuntu and Red Hat ship;
//   - *.local, which RFC 6762 reserves for multicast DNS on the local link:
//     such a name is never a public host.
func localName(host string) string {
	h := hostmatch.Normalize(host)
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return "loopback name (RFC 6761 localhost)"
	case h == "localhost.localdomain" || h == "localhost6" || h == "localhost6.localdomain6" ||
		h == "ip6-localhost" || h == "ip6-loopback":
		return "loopback name (/etc/hosts)"
	case strings.HasSuffix(h, ".local"):
		return "link-local name (multicast DNS .local, RFC 6762)"
	}
	return ""
}

// Refused reports whether err is a refusal (the SSRF guard, a scheme, the host
// lists, a blocked port, the redirect limit) rather than a network failure;
// the WebFetch tool reports refusals as denied errors.
func Refused(err error) bool {
	return ssrf.Refused(err) || errors.Is(err, ErrHostDenied) || errors.Is(err, ErrTooManyRedirects) ||
		errors.Is(err, ErrPortBlocked)
}

// Fetch fetches rawURL, follows up to [MaxRedirects] redirects (each hop
// vetted like the first request), reads at most maxBytes of the
// decompressed body (0 or more than the option means the option) and
// converts it with [Convert]. Refusals satisfy [Refused]; timeouts and
// network failures do not.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, maxBytes int64) (*Result, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if u, err = f.vet(u); err != nil {
		return nil, err
	}
	first := u
	if maxBytes <= 0 || maxBytes > f.opts.MaxBytes {
		maxBytes = f.opts.MaxBytes
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()

	var resp *http.Response
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("building request: %w", err)
		}
		req.Header.Set("User-Agent", f.opts.UserAgent)
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5")
		resp, err = f.rt.RoundTrip(req)
		if err != nil {
			return nil, netError(ctx, u, err)
		}
		if !isRedirect(resp.StatusCode) {
			break
		}
		loc := resp.Header.Get("Location")
		resp.Body.Close()
		if loc == "" {
			return nil, fmt.Errorf("%s answered %d without a Location header", redact(u), resp.StatusCode)
		}
		if hop+1 > MaxRedirects {
			return nil, fmt.Errorf("%w: more than %d redirects starting at %s", ErrTooManyRedirects, MaxRedirects, redact(first))
		}
		next, err := u.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("redirect from %s: %w: the Location %q is not a valid URL (%v); it was not followed", redact(u), ssrf.ErrInvalidHost, redactRaw(loc), errors.Unwrap(err))
		}
		if next, err = f.vet(next); err != nil {
			return nil, fmt.Errorf("redirect from %s: %w", redact(u), err)
		}
		u = next
	}
	defer resp.Body.Close()

	res := &Result{URL: u.String(), Status: resp.StatusCode}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	res.ContentType = mt
	if ct != "" && kindOf(mt) == kindUnsupported {
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			res.Format = FormatText // an error page in a type we do not read: the status says it all
			return res, nil
		}
		return nil, fmt.Errorf("%s: %w %q: WebFetch reads HTML, plain text, Markdown, JSON and XML only", redact(u), ErrUnsupportedContent, mt)
	}
	dec, err := decodeBody(resp)
	if err != nil {
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			res.Format = FormatText // an error page we cannot decode: the status says it all
			return res, nil
		}
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	// One byte more than the cap tells a body of exactly maxBytes from a
	// longer one. gzip is decoded as it streams, so the limit counts
	// decompressed bytes and memory stays bounded by it.
	body, err := io.ReadAll(io.LimitReader(dec, maxBytes+1))
	if err != nil {
		return nil, netError(ctx, u, err)
	}
	if int64(len(body)) > maxBytes {
		body, res.Truncated = body[:maxBytes], true
	}
	doc, err := f.convertCtx(ctx, body, ct, u)
	if errors.Is(err, errConvertStopped) {
		return nil, netError(ctx, u, ctx.Err())
	}
	if err != nil {
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			res.Format = FormatText
			return res, nil
		}
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	if res.ContentType == "" {
		res.ContentType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	res.Title, res.Content, res.Format = doc.Title, doc.Content, doc.Format
	log := f.opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log.DebugContext(ctx, "webfetch", "url", redact(u), "status", res.Status, "bytes", len(body), "truncated", res.Truncated)
	return res, nil
}

// parseURL parses the URL a fetch was asked for. A string that is not a URL
// is refused as an invalid host ([ssrf.ErrInvalidHost]), with the parser's
// reason (url.Parse's errors are *url.Error, which Unwrap strips of the
// URL it repeats): such a string is as likely a parser-confusion attack
// (http://a\@127.0.0.1/) as a typo.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a valid URL (%v); send an absolute http or https URL", ssrf.ErrInvalidHost, raw, errors.Unwrap(err))
	}
	return u, nil
}

// decodeBody returns a reader of resp's body with its Content-Encoding
// undone. Every Content-Encoding header line and every comma-separated coding
// in it counts (RFC 9110 section 8.4), applied in order and so undone in
// reverse. gzip (and its alias x-gzip) is decoded as a stream; identity is
// nothing; anything else (br, zstd, compress, deflate, an unknown token) is
// refused with [ErrUnsupportedEncoding] rather than converted as if it were
// text.
func decodeBody(resp *http.Response) (io.Reader, error) {
	var codings []string
	for _, line := range resp.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(line, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			switch c {
			case "", "identity":
			case "gzip", "x-gzip":
				codings = append(codings, "gzip")
			default:
				return nil, fmt.Errorf("%w %q: the server compressed the page with an encoding WebFetch cannot decode (it decodes gzip only); try another URL for the same content", ErrUnsupportedEncoding, strings.Join(resp.Header.Values("Content-Encoding"), ", "))
			}
		}
	}
	if len(codings) > maxContentEncodings {
		return nil, fmt.Errorf("%w: the server applied gzip %d times; WebFetch undoes at most %d codings", ErrUnsupportedEncoding, len(codings), maxContentEncodings)
	}
	var r io.Reader = resp.Body
	for range codings {
		r = &gunzip{src: r}
	}
	return r, nil
}

// gunzip decodes a gzip stream, reading its header on the first Read so that
// an empty body (a 204, a HEAD-like answer) is simply empty.
type gunzip struct {
	src io.Reader
	zr  *gzip.Reader
	err error
}

func (g *gunzip) Read(p []byte) (int, error) {
	if g.zr == nil && g.err == nil {
		g.zr, g.err = gzip.NewReader(g.src)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.zr.Read(p)
}

// errConvertStopped: the context ended while the body was being converted.
var errConvertStopped = errors.New("conversion stopped")

// convertCtx runs [Convert] (or the test hook) on its own goroutine so that
// the fetch's deadline and cancellation cover the conversion too: a hostile
// page can make it take seconds. When ctx ends first, convertCtx returns
// errConvertStopped at once; the conversion finishes in the background (its
// cost is bounded by the element limits of Convert) and its result is
// dropped. A panic in the HTML libraries comes back as an error, as it would
// have reached the runner's recover on the caller's goroutine.
func (f *Fetcher) convertCtx(ctx context.Context, body []byte, ct string, u *url.URL) (Document, error) {
	convert := Convert
	if f.opts.convert != nil {
		convert = f.opts.convert
	}
	type result struct {
		doc Document
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("converting the page failed with an internal error (panic: %v); this is a bug, try another page", v)}
			}
		}()
		d, err := convert(body, ct, u)
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.doc, r.err
	case <-ctx.Done():
		return Document{}, errConvertStopped
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// netError turns a transport failure into an error that says what happened
// without repeating the query string (which may carry tokens). Refusals by
// the dialer keep their identity.
func netError(ctx context.Context, u *url.URL, err error) error {
	if ssrf.Refused(err) {
		var be *ssrf.BlockedError
		if errors.As(err, &be) {
			return fmt.Errorf("fetching %s: %w", redact(u), be)
		}
		return fmt.Errorf("fetching %s: %w", redact(u), err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("fetching %s: timed out: %w; the server is too slow, try again later or another source", redact(u), context.DeadlineExceeded)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("fetching %s: %w", redact(u), err)
}

// maxQuoted bounds how much of a string that is not a URL a message quotes.
const maxQuoted = 200

// redactRaw is redact for a string that does not parse as a URL: it is cut
// at the first '?' or '#' and at maxQuoted bytes.
func redactRaw(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if len(s) > maxQuoted {
		s = s[:maxQuoted] + "…"
	}
	return s
}

// redact returns u without query and fragment, for messages and logs.
func redact(u *url.URL) string {
	r := *u
	r.RawQuery, r.ForceQuery, r.Fragment, r.RawFragment, r.User = "", false, "", "", nil
	return r.String()
}
