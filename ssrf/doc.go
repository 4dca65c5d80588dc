// Package ssrf is the server-side request forgery guard shared by WebFetch
// and the egress proxy: an address classifier, host and URL vetting, and a
// dialer that checks every address at connect time.
//
// The pieces, from the primitive up:
//
//   - [Check] (and [Allowed]) classify one [netip.Addr]: only public unicast
//     IPv4 and IPv6 inside 2000::/3 minus the special-purpose ranges pass.
//     [CheckMetadata] is the lax classifier that refuses only cloud
//     metadata endpoints (all of IPv4 link-local among them, and their
//     IPv4-mapped, 6to4 and NAT64 spellings), for callers that allow
//     private addresses.
//   - [CheckHost] vets a host without resolving it: IP literals are
//     classified and numeric spellings such as 2130706433 or 0x7f.1 are
//     refused outright.
//   - [VetURL] and [ParseURL] vet a URL: scheme http or https, no
//     credentials, a valid host that passes [CheckHost]. [VetURLWith]
//     takes the classifier for IP literals ([CheckMetadata] to allow
//     private ones).
//   - [Control] is a [net.Dialer] Control function that classifies every
//     address the dialer attempts, right before connect(2).
//   - [Dialer] resolves names itself, refuses a host when any of its
//     records is refused, and connects through [Control].
//
// # Guarantees
//
// A connection made through [Dialer] (or a [net.Dialer] whose Control is
// [Control]) is never attempted to an address the classifier refuses, no
// matter how the name resolves or re-resolves (DNS rebinding), how many
// records an answer has, or how the address is spelt (IPv4-mapped IPv6,
// zones, numeric shorthands). Refusals are decided before connecting and
// match [ErrBlocked], [ErrScheme], [ErrCredentials] or [ErrInvalidHost]
// ([Refused] tests for all four); network failures never do. The system
// resolver is outside this: to sort a multi-address answer it connects a
// UDP socket to each address, which sends no packet (see [Dialer]).
//
// # Limits
//
// The guard decides by destination address only. It does not stop a public
// host from forwarding a request inwards (an open proxy or redirector on
// the internet), it does not see through tunnels the operating system routes
// transparently (VPNs, or NAT64 prefixes other than 64:ff9b::/96 and
// 64:ff9b:1::/48), and it does not follow HTTP redirects: an HTTP client
// must vet every hop with [VetURL] and must not send requests through a
// proxy, which would hide the destination from the dialer. Host allow and deny lists are not part of this
// package; see internal/hostmatch.
package ssrf
