// Package egress decides where sandboxed code may connect, and enforces it
// with an HTTP forward proxy.
//
// A [Filter] is a value: allow-all or deny-all, allowed and denied domain
// patterns (deny wins), allowed ports (80 and 443 by default) and whether
// destinations may resolve to private addresses (no by default). Domain
// patterns are matched by package internal/hostmatch, the same
// implementation WebFetch uses, so a pattern means the same everywhere.
//
// A [Proxy] enforces a Filter for HTTP CONNECT tunnels and absolute-form
// plain HTTP requests. It checks the filter on the requested name before any
// DNS lookup (a denied name is never resolved), then checks every resolved
// address with the SSRF classifier of package ssrf when it dials.
//
// What is guaranteed: a client that goes through the proxy reaches only
// destinations the filter allows, on allowed ports, at addresses that passed
// the address check; every request on a kept-alive connection is checked on
// its own; a refused name is never resolved.
//
// What is NOT guaranteed: the proxy filters only what is sent to it. A
// program that ignores HTTP_PROXY, speaks UDP (DNS, QUIC) or opens raw TCP
// is not stopped by the proxy; that takes a layer below it that forces all
// traffic through the proxy: a network namespace whose only route is the
// proxy. (Landlock's TCP rules filter by port, not address, so on their own
// they would still let a command reach any host on the proxy's port.) The proxy does not see inside CONNECT tunnels: a client that
// tunnels to an allowed name and then sends a different Host or SNI inside
// TLS reaches whatever the allowed name's addresses serve (domain fronting
// on a shared CDN is not prevented). Allowing a domain allows all of its
// subdomains too; *.domain allows the subdomains but not the domain itself.
package egress
