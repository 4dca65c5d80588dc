// Package webfetch is the WebFetch tool: it fetches an http or https URL
// through the SSRF guard of package ssrf and returns the page's main content
// as Markdown.
//
// [New] builds the tool for a runner; [NewFetcher] and [Fetcher.Fetch] are
// the same fetch without the tool contract (the helikon CLI's fetch command
// uses them), and [Convert] is the extraction step alone: readability
// (codeberg.org/readeck/go-readability/v2, a port of Mozilla's
// Readability.js) then github.com/JohannesKaufmann/html-to-markdown/v2.
//
// # Guarantees
//
// With the default options:
//
//   - only http and https URLs without credentials are fetched; numeric host
//     spellings (2130706433, 0x7f.1, 127.1) are refused outright, and so
//     are the ports of other protocols browsers refuse ([BlockedPorts]:
//     SMTP, IRC, SSH, ...);
//   - no connection is made to a non-public address: the address is checked
//     in the dialer's Control hook, right before connect(2), for every
//     address tried, on every redirect hop, so DNS rebinding and answers
//     mixing public and private records cannot get through, and a host with
//     any refused record is refused whole;
//   - redirects are followed by hand, at most [MaxRedirects], each hop
//     vetted again (scheme, credentials, port, host lists, address); a
//     Location that does not parse as a URL is refused, naming the hop;
//   - proxy environment variables are ignored;
//   - names that never leave the machine or its link (localhost and
//     *.localhost of RFC 6761, the /etc/hosts loopback names such as
//     localhost.localdomain and ip6-localhost, mDNS *.local) are refused
//     before any request unless Options.AllowPrivate is set, also through a
//     proxy, which would resolve them itself;
//   - the body is decoded only from gzip (the one coding WebFetch asks for,
//     stacked at most twice); a response in any other Content-Encoding (br,
//     zstd, compress, deflate, unknown) fails with [ErrUnsupportedEncoding]
//     instead of being converted as if it were text;
//   - the whole fetch, body and its conversion included, is bounded by
//     Options.Timeout, and the body by Options.MaxBytes counted after
//     decompression, so a slow drip or a gzip bomb costs at most that time
//     and that memory; response headers are capped at 1 MiB; HTML built to
//     make conversion expensive (hundreds of thousands of elements, nesting
//     deeper than 512) is returned as plain text extracted in one pass (see
//     [Convert]);
//   - every refusal (guard, scheme, a URL that does not parse, host lists,
//     redirect limit, the per-run budget) is a [helikon.DeniedError]
//     decided before connecting to the refused address; a url with no
//     scheme at all (example.com/x) is invalid arguments, the model's to
//     fix; network failures and timeouts are other errors (the timeout
//     wrapping [context.DeadlineExceeded]).
//     Messages name the reason and never include response bodies or query
//     strings.
//
// # Limits
//
// The guard judges destination addresses only: a public server that
// forwards requests inwards is out of its sight. Options.AllowPrivate opens
// every non-public address except cloud metadata endpoints (all of IPv4
// link-local among them, 192.0.0.192, and their IPv6 spellings, NAT64
// included; see ssrf.CheckMetadata). With
// Options.Proxy set, the proxy decides which addresses are reached (the
// helikon egress proxy applies the same classifier). Permission rules such
// as WebFetch(example.com) see the requested URL's host only; the tool's own
// host lists also cover redirect hops. Extraction is heuristic: readability
// runs on the page as it came and may keep a stray block or drop a short
// page's content; where it finds no article the whole body minus
// navigation, scripts, styles, footers and cookie banners is converted, then
// the page's plain text, and a page with no text at all fails with
// [ErrNoContent] rather than returning empty content. On Mozilla
// Readability's corpus of real pages its output scores at least as well as
// readability's alone (BENCHMARKS.md). JavaScript is not run, so pages that
// render their content in the browser come back mostly empty or as
// [ErrNoContent]. PDFs, images and archives are refused.
package webfetch
