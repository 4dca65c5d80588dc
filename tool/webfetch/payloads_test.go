package webfetch

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/net/idna"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

// payloadsFile holds the public SSRF vectors with the outcome due in each
// mode; its header documents the format and the sources.
const payloadsFile = "testdata/ssrf-payloads-public.txt"

// payload is one line of payloadsFile.
type payload struct {
	line     int
	category string
	expect   [2]string // by mode: default, AllowPrivate; deny, pass, any or -
	source   string
	url      string // as written, with its esc:, redirNNN: or redirloop: form
	env      string
}

// parsePayloads reads the file format: '#' comments, then five
// TAB-separated fields and an optional sixth.
func parsePayloads(path string) ([]payload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []payload
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 5 && len(fields) != 6 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 5 or 6", path, n, len(fields))
		}
		p := payload{line: n, category: fields[0], expect: [2]string{fields[1], fields[2]}, source: fields[3], url: fields[4]}
		if len(fields) == 6 {
			p.env = fields[5]
		}
		for _, e := range p.expect {
			if !slices.Contains([]string{"deny", "pass", "any", "-"}, e) {
				return nil, fmt.Errorf("%s:%d: expectation %q", path, n, e)
			}
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// unescape decodes the esc: form: \t \r \n \\ and \xHH.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("trailing backslash in %q", s)
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("short \\x escape in %q", s)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape in %q", s)
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
}

// redirector answers /r/NNN/<base64url target> with status NNN and that
// Location, and /loop/N with a redirect to /loop/N-1 down to a page at
// /loop/0. It runs on the public stand-in address.
func redirector(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/r/"); ok {
		code, enc, _ := strings.Cut(rest, "/")
		status, err1 := strconv.Atoi(code)
		target, err2 := base64.RawURLEncoding.DecodeString(enc)
		if err1 != nil || err2 != nil || status < 300 || status > 399 {
			http.Error(w, "bad redirector path", http.StatusBadRequest)
			return
		}
		w.Header()["Location"] = []string{string(target)}
		w.WriteHeader(status)
		return
	}
	if n, ok := strings.CutPrefix(r.URL.Path, "/loop/"); ok {
		if k, err := strconv.Atoi(n); err == nil && k > 0 {
			http.Redirect(w, r, fmt.Sprintf("/loop/%d", k-1), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "end of the redirect chain")
		return
	}
	http.NotFound(w, r)
}

// expandURL turns a url field into the URL to fetch: esc: decoded,
// redirNNN:TARGET and redirloop:N pointed at the redirector (at base, such
// as http://redirector.test:PORT), TARGET expanded first so chains nest.
func expandURL(field, base string) (string, error) {
	switch {
	case strings.HasPrefix(field, "esc:"):
		return unescape(field[len("esc:"):])
	case strings.HasPrefix(field, "redirloop:"):
		n, err := strconv.Atoi(field[len("redirloop:"):])
		if err != nil || n < 0 {
			return "", fmt.Errorf("bad redirloop count in %q", field)
		}
		return fmt.Sprintf("%s/loop/%d", base, n), nil
	case strings.HasPrefix(field, "redir"):
		code, target, ok := strings.Cut(field[len("redir"):], ":")
		if _, err := strconv.Atoi(code); !ok || err != nil || len(code) != 3 {
			break // an ordinary URL whose scheme starts with "redir"
		}
		inner, err := expandURL(target, base)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s/r/%s/%s", base, code, base64.RawURLEncoding.EncodeToString([]byte(inner))), nil
	}
	return field, nil
}

// TestPayloadURLFormsExpand: the esc:, redirNNN: (nested) and redirloop:
// forms of the payload file become the URLs the harness fetched.
func TestPayloadURLFormsExpand(t *testing.T) {
	const base = "http://r.test:1"
	for in, want := range map[string]string{
		`esc:http://a/\t\r\n\\\x41`:       "http://a/\t\r\n\\A",
		"redirloop:3":                     base + "/loop/3",
		"redir302:http://x/":              base + "/r/302/" + base64.RawURLEncoding.EncodeToString([]byte("http://x/")),
		"redir301:redir307:http://x/":     base + "/r/301/" + base64.RawURLEncoding.EncodeToString([]byte(base+"/r/307/"+base64.RawURLEncoding.EncodeToString([]byte("http://x/")))),
		"http://plain/":                   "http://plain/",
		"redirect://not-a-chain/":         "redirect://not-a-chain/",
		`http://127.1.1.1:80\@127.2.2.2/`: `http://127.1.1.1:80\@127.2.2.2/`,
	} {
		if got, err := expandURL(in, base); err != nil || got != want {
			t.Errorf("expandURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`esc:\q`, `esc:\x4`, `esc:\`, "redirloop:x"} {
		if _, err := expandURL(bad, base); err == nil {
			t.Errorf("expandURL(%q) accepted", bad)
		}
	}
}

// payloadZone stands in for public DNS: each name of payloadsFile that a
// URL's host can be, with the answer the real name has (as its source
// documents it, or as its service publishes it), public hosts answered
// with the public stand-in address. It is fresh for each mode, so the
// rebinding name starts over.
func payloadZone(t *testing.T) *ssrftest.Resolver {
	t.Helper()
	var res ssrftest.Resolver
	pub := publicAddr.String()
	set := func(name string, answers ...string) { res.Set(name, answers...) }
	set("redirector.test", pub)
	set("allowed.example", pub)
	// Names that resolve to loopback (PayloadsAllTheThings, "Bypass using
	// DNS", and the services themselves).
	set("localhost", "127.0.0.1,::1")
	set("ip6-localhost", "::1")
	set("ip6-loopback", "::1")
	set("localtest.me", "127.0.0.1,::1")
	set("localh.st", "127.0.0.1")
	set("spoofed.burpcollaborator.net", "127.0.0.1")
	set("spoofed.redacted.oastify.com", "127.0.0.1")
	set("company.127.0.0.1.nip.io", "127.0.0.1")
	set("127.0.0.1.nip.io", "127.0.0.1")
	ss, err := idna.Lookup.ToASCII("ß.localdomain.pw") // ip.py's loopback domain
	if err != nil {
		t.Fatal(err)
	}
	set(ss, "127.0.0.1")
	// Cloud metadata names, as the clouds answer them inside an instance.
	set("169.254.169.254.nip.io", "169.254.169.254")
	set("instance-data", "169.254.169.254")
	set("metadata.google.internal", "169.254.169.254")
	set("metadata", "169.254.169.254")
	set("rancher-metadata", "169.254.169.250")
	// 1u.ms answers "make-A-rebind-B-rr" with A, then B: a public address
	// first, the metadata address on the next lookup.
	set("make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms", pub, "169.254.169.254")
	return &res
}

// metadataV4Test and isMetadataTest are what the tripwire of the
// AllowPrivate mode refuses to let through, restated apart from package
// ssrf: the IPv4 metadata endpoints, alone or embedded in an IPv6 address at
// the offset of 6to4 or of any RFC 6052 prefix length, and the IPv6 ones.
var metadataV4Test = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("168.63.129.16/32"), netip.MustParsePrefix("192.0.0.192/32"),
}

func isMetadataTest(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if a.Is6() {
		if netip.MustParsePrefix("fd00:ec2::/32").Contains(a) || a == netip.MustParseAddr("fd20:ce::254") {
			return true
		}
		b := a.As16()
		for _, o := range [][4]int{{2, 3, 4, 5}, {4, 5, 6, 7}, {5, 6, 7, 9}, {6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}, {12, 13, 14, 15}} {
			if isMetadataTest(netip.AddrFrom4([4]byte{b[o[0]], b[o[1]], b[o[2]], b[o[3]]})) {
				return true
			}
		}
		return false
	}
	for _, p := range metadataV4Test {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// payloadTripwire is the base dialer's Control in the payload test, behind
// the guard. The public stand-in server is the one place a connection may
// go; any other address the mode allows (a public host, or with
// AllowPrivate a private one) is stopped as unreachable, so no packet
// leaves for a real service; an address the mode forbids fails the test.
type payloadTripwire struct {
	private bool
	server  netip.AddrPort
	mu      sync.Mutex
	hits    []string // forbidden addresses the guard let through
}

func (w *payloadTripwire) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("payload tripwire: %q: %w", address, err)
	}
	a := ap.Addr().WithZone("").Unmap()
	if a == w.server.Addr() && ap.Port() == w.server.Port() {
		return nil
	}
	forbidden := a != publicAddr
	if w.private {
		forbidden = isMetadataTest(a)
	}
	if forbidden {
		w.mu.Lock()
		w.hits = append(w.hits, address)
		w.mu.Unlock()
		return fmt.Errorf("payload tripwire: %s connection to %s stopped: forbidden in this mode", network, address)
	}
	return fmt.Errorf("payload tripwire: %s connection to %s stopped: %s", network, address, errUnreachable)
}

// errUnreachable ends the message of a connection the mode allows but the
// test does not make.
const errUnreachable = "allowed, but not reachable in the test"

func (w *payloadTripwire) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.hits
	w.hits = nil
	return h
}

// TestPublicSSRFPayloads runs every vector of payloadsFile through the
// WebFetch tool in both modes, with a resolver standing in for public DNS
// and a redirector on the public stand-in address. deny must be a denied
// refusal, pass must not be refused by policy, and in every case (any
// included) no connection may be attempted to an address the mode forbids.
// Lines the test cannot run are skipped with their reason and counted.
func TestPublicSSRFPayloads(t *testing.T) {
	payloads, err := parsePayloads(payloadsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(payloads) < 600 {
		t.Fatalf("%s: %d payloads; the file was cut short", payloadsFile, len(payloads))
	}
	srv := newPublicServer(t, http.HandlerFunc(redirector))
	server := netip.AddrPortFrom(publicAddr, srv.port())
	base := fmt.Sprintf("http://redirector.test:%d", srv.port())
	skips := map[string]int{}
	ran := map[string]int{}
	for mode, private := range []bool{false, true} {
		name := [2]string{"default", "AllowPrivate"}[mode]
		res := payloadZone(t)
		trip := &payloadTripwire{private: private, server: server}
		o := Options{Resolver: res, AllowPrivate: private, control: trip.control}
		if !private {
			o.check = testCheck
		}
		tool, err := New[struct{}](&o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range payloads {
			want := p.expect[mode]
			if want == "-" {
				continue
			}
			if p.env != "" {
				skips["sets environment variables for a CLI run ("+p.env+"); the in-process test has no environment of its own to give"]++
				continue
			}
			raw, err := expandURL(p.url, base)
			if err != nil {
				t.Errorf("%s:%d: %v", payloadsFile, p.line, err)
				continue
			}
			_, err = invoke(tool, Args{URL: raw})
			ran[name]++
			where := fmt.Sprintf("%s:%d (%s, %s) %s, %q", payloadsFile, p.line, p.category, p.source, name, p.url)
			if hits := trip.take(); len(hits) > 0 {
				t.Errorf("%s: the guard let a connection to %v through", where, hits)
			}
			var dns *net.DNSError
			if errors.As(err, &dns) && dns.IsNotFound && want != "any" {
				t.Errorf("%s: %q is not in the test's DNS zone; add its real answer to payloadZone", where, dns.Name)
				continue
			}
			switch denied := helikon.KindOf(err) == helikon.KindDenied; {
			case want == "deny" && !denied:
				t.Errorf("%s: %v, want a denied refusal", where, err)
			case want == "deny" && !Refused(err):
				t.Errorf("%s: denied, but %v is not a refusal Refused reports", where, err)
			case want == "pass" && denied:
				t.Errorf("%s: %v, must not be refused by policy", where, err)
			case want == "pass" && err != nil && !strings.Contains(err.Error(), errUnreachable):
				t.Errorf("%s: %v, want the page or a connection stopped only because the test cannot reach it", where, err)
			}
		}
	}
	if n := srv.requests.Load(); n == 0 {
		t.Error("the redirector got no request: the redirect payloads did not run")
	}
	skipped := 0
	for reason, n := range skips {
		skipped += n
		t.Logf("skipped %d line(s): %s", n, reason)
	}
	t.Logf("%d payloads: %d run in the default mode, %d with AllowPrivate, %d skipped", len(payloads), ran["default"], ran["AllowPrivate"], skipped)
}
