package ssrf_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/ssrf"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

// blockedAddrs has one or more samples of every refused range.
var blockedAddrs = []struct{ addr, reason string }{
	{"0.0.0.0", "this network"},
	{"0.1.2.3", "this network"},
	{"10.0.0.1", "private"},
	{"10.255.255.255", "private"},
	{"100.64.0.1", "carrier-grade NAT"},
	{"100.127.255.254", "carrier-grade NAT"},
	{"127.0.0.1", "loopback"},
	{"127.255.255.254", "loopback"},
	{"169.254.169.254", "cloud metadata"},
	{"169.254.0.1", "link-local"},
	{"168.63.129.16", "Azure WireServer"},
	{"172.16.0.1", "private"},
	{"172.31.255.255", "private"},
	{"192.0.0.8", "IETF protocol"},
	{"192.0.0.192", "cloud metadata (Oracle Cloud)"},
	{"::ffff:192.0.0.192", "IPv4-mapped cloud metadata"},
	{"192.0.2.1", "documentation"},
	{"192.31.196.1", "AS112"},
	{"192.52.193.1", "AMT"},
	{"192.88.99.1", "6to4 relay"},
	{"192.168.1.1", "private"},
	{"192.175.48.1", "AS112"},
	{"198.18.0.1", "benchmarking"},
	{"198.19.255.255", "benchmarking"},
	{"198.51.100.7", "documentation"},
	{"203.0.113.9", "documentation"},
	{"224.0.0.1", "multicast"},
	{"239.255.255.250", "multicast"},
	{"240.0.0.1", "reserved"},
	{"255.255.255.255", "broadcast"},
	{"::", "unspecified"},
	{"::1", "loopback"},
	{"::127.0.0.1", "IPv4-compatible"},
	{"::8.8.8.8", "IPv4-compatible"},
	{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
	{"::ffff:10.1.2.3", "IPv4-mapped private"},
	{"::ffff:169.254.169.254", "IPv4-mapped cloud metadata"},
	{"::ffff:0:127.0.0.1", "IPv4-translated"},
	{"64:ff9b::7f00:1", "NAT64"},
	{"64:ff9b::808:808", "NAT64"},
	{"64:ff9b:1::a00:1", "NAT64"},
	{"100::1", "discard-only"},
	{"2001::1", "Teredo"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
	{"2001:2::1", "IETF protocol"},
	{"2001:10::1", "IETF protocol"},
	{"2001:db8::1", "documentation"},
	{"3fff::1", "documentation"},
	{"2620:4f:8000::1", "AS112"},
	{"2002:7f00:1::1", "6to4 embedding loopback"},
	{"2002:a00:1::1", "6to4 embedding private"},
	{"2002:a9fe:a9fe::1", "6to4 embedding cloud metadata"},
	{"fc00::1", "unique local"},
	{"fd00:ec2::254", "cloud metadata"},
	{"fd12:3456::1", "unique local"},
	{"fe80::1", "link-local"},
	{"fe80::1%eth0", "link-local"},
	{"fec0::1", "site-local"},
	{"ff02::1", "multicast"},
	{"ff05::1%lo", "multicast"},
	{"4000::1", "outside IPv6 global unicast"},
	{"5f00::1", "outside IPv6 global unicast"},
	{"::1%lo", "loopback"},
}

var allowedAddrs = []string{
	"1.1.1.1", "8.8.8.8", "93.184.216.34", "100.63.255.255", "100.128.0.0",
	"172.15.255.255", "172.32.0.0", "192.0.1.1", "198.20.0.0", "223.255.255.255",
	"::ffff:8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001:81b::200e",
	"2002:808:808::1", "2001:200::1", "2620:4f:8001::1",
}

func TestCheckRefusesEverySpecialRange(t *testing.T) {
	for _, tc := range blockedAddrs {
		err := ssrf.Check(netip.MustParseAddr(tc.addr))
		var be *ssrf.BlockedError
		if !errors.As(err, &be) || !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("Check(%s) = %v, want a *BlockedError", tc.addr, err)
			continue
		}
		if !strings.Contains(be.Reason, tc.reason) {
			t.Errorf("Check(%s) reason %q, want it to mention %q", tc.addr, be.Reason, tc.reason)
		}
		if ssrf.Allowed(netip.MustParseAddr(tc.addr)) {
			t.Errorf("Allowed(%s) = true", tc.addr)
		}
	}
}

func TestCheckAllowsPublicUnicast(t *testing.T) {
	for _, a := range allowedAddrs {
		if err := ssrf.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", a, err)
		}
	}
	if err := ssrf.Check(netip.Addr{}); err == nil {
		t.Error("Check(zero Addr) = nil, want a refusal")
	}
}

// metadataAddrs are the places cloud instances hand out credentials or
// configuration, in every spelling a dual-stack socket or a NAT64/6to4
// gateway would carry to them.
var metadataAddrs = []string{
	"169.254.169.254",        // AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack IMDS
	"::ffff:169.254.169.254", // IPv4-mapped
	"::a9fe:a9fe",            // IPv4-compatible
	"64:ff9b::a9fe:a9fe",     // NAT64
	"2002:a9fe:a9fe::1",      // 6to4
	"fd00:ec2::254",          // AWS IMDS over IPv6
	"fd00:ec2::23",           // AWS EKS Pod Identity Agent over IPv6
	"169.254.170.2",          // AWS ECS task credentials
	"169.254.170.23",         // AWS EKS Pod Identity Agent
	"169.254.0.23",           // Tencent Cloud
	"169.254.1.1",            // any IPv4 link-local address
	"fd20:ce::254",           // GCP metadata over IPv6
	"100.100.100.200",        // Alibaba Cloud
	"168.63.129.16",          // Azure WireServer
	"::ffff:168.63.129.16",
	"192.0.0.192", // Oracle Cloud (older metadata address)
	"::ffff:192.0.0.192",
	"::c000:c0",
	"64:ff9b::c000:c0",
	"2002:c000:c0::1",
	// 169.254.169.254 in the local-use NAT64 prefix 64:ff9b:1::/48 (RFC
	// 8215), as RFC 6052 places it for each prefix length an operator may
	// carve from it: /96, /64, /56 and /48 (byte 8, the u octet, skipped).
	"64:ff9b:1::a9fe:a9fe",
	"64:ff9b:1:0:a9:fea9:fe00:0",
	"64:ff9b:1:a9:fe:a9fe::",
	"64:ff9b:1:a9fe:a9:fe00::",
	"64:ff9b:1::c000:c0",
	"64:ff9b:1:c000:0:c000::",
}

func TestCheckMetadataRefusesOnlyMetadata(t *testing.T) {
	for _, a := range metadataAddrs {
		if err := ssrf.CheckMetadata(netip.MustParseAddr(a)); !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("CheckMetadata(%s) = %v, want blocked", a, err)
		}
		if err := ssrf.Check(netip.MustParseAddr(a)); !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("Check(%s) = %v, want blocked", a, err)
		}
	}
	for _, a := range []string{"127.0.0.1", "10.0.0.1", "::1", "8.8.8.8", "192.168.1.1", "fe80::1", "fd12::1", "100.64.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::a00:1", "192.0.0.193", "64:ff9b:1:7f00:1::"} {
		if err := ssrf.CheckMetadata(netip.MustParseAddr(a)); err != nil {
			t.Errorf("CheckMetadata(%s) = %v, want nil", a, err)
		}
	}
}

// numericSpellings are host spellings that inet_aton or browsers read as
// loopback or private IPv4 addresses.
var numericSpellings = []string{
	"2130706433", "0x7f000001", "0X7F000001", "0177.0.0.1", "0177.1", "127.1", "127.0.1",
	"0x7f.0.0.1", "0x7f.1", "017700000001", "127.000.000.001", "10.1", "0", "0x0",
	"167772161", "3232235777", "127.0.0.1.5", "foo.0x7f", "example.123", "1.2.3.4.5",
	"2852039166", // 169.254.169.254
	"4294967295", "127.0.0.1.",
}

func TestCheckHostRefusesNumericSpellings(t *testing.T) {
	for _, h := range numericSpellings {
		if err := ssrf.CheckHost(h); !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("CheckHost(%q) = %v, want blocked", h, err)
		}
	}
	for _, h := range []string{"example.com", "8.8.8.8", "[2606:4700::1111]", "a-b.example", "xn--bcher-kva.example", "123.example.com", "0x.example"} {
		if err := ssrf.CheckHost(h); err != nil {
			t.Errorf("CheckHost(%q) = %v, want nil", h, err)
		}
	}
	for _, h := range []string{"", "exa mple.com", "-bad.com", "a..b", "[::1", "[not:ip]", strings.Repeat("a", 64) + ".com"} {
		if err := ssrf.CheckHost(h); err == nil {
			t.Errorf("CheckHost(%q) = nil, want an error", h)
		}
	}
}

func TestVetURL(t *testing.T) {
	cases := []struct {
		raw  string
		want error // nil: accepted
	}{
		{"https://example.com/a?b=c#d", nil},
		{"http://example.com:8080/", nil},
		{"HTTPS://EXAMPLE.COM/", nil},
		{"https://bücher.example/", nil},
		{"https://8.8.8.8/", nil},
		{"file:///etc/passwd", ssrf.ErrScheme},
		{"gopher://127.0.0.1:25/", ssrf.ErrScheme},
		{"ftp://example.com/", ssrf.ErrScheme},
		{"javascript:alert(1)", ssrf.ErrScheme},
		{"data:text/html,hi", ssrf.ErrScheme},
		{"example.com/path", ssrf.ErrScheme},
		{"//example.com/path", ssrf.ErrScheme},
		{"http:example.com", ssrf.ErrInvalidHost},
		{"http:///path", ssrf.ErrInvalidHost},
		{"https://user:pass@example.com/", ssrf.ErrCredentials},
		{"https://user@example.com/", ssrf.ErrCredentials},
		{"http://example.com@127.0.0.1/", ssrf.ErrCredentials},
		{"http://127.0.0.1#@example.com/", ssrf.ErrBlocked},
		{"http://127.0.0.1?@example.com/", ssrf.ErrBlocked},
		{"http://127.0.0.1/#@example.com", ssrf.ErrBlocked},
		{"http://localhost.:80/", nil}, // a name: caught at connect time
		{"http://[::1]/", ssrf.ErrBlocked},
		{"http://[::ffff:127.0.0.1]/", ssrf.ErrBlocked},
		{"http://[::ffff:7f00:1]/", ssrf.ErrBlocked},
		{"http://[fe80::1%25eth0]/", ssrf.ErrBlocked},
		{"http://[::1%25lo]:8080/", ssrf.ErrBlocked},
		{"http://[fd00:ec2::254]/latest/meta-data/", ssrf.ErrBlocked},
		{"http://169.254.169.254/latest/meta-data/", ssrf.ErrBlocked},
		{"http://2130706433/", ssrf.ErrBlocked},
		{"http://0x7f000001/", ssrf.ErrBlocked},
		{"http://0177.0.0.1/", ssrf.ErrBlocked},
		{"http://127.1/", ssrf.ErrBlocked},
		{"http://0/", ssrf.ErrBlocked},
		{"http://%31%32%37.0.0.1/", ssrf.ErrInvalidHost},
		{"http://127.0.0.1\\@example.com/", ssrf.ErrInvalidHost},
		{"http://exa mple.com/", ssrf.ErrInvalidHost},
		{"http://ex_ample..com/", ssrf.ErrInvalidHost},
	}
	for _, tc := range cases {
		_, err := ssrf.ParseURL(tc.raw)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("ParseURL(%q) = %v, want accepted", tc.raw, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("ParseURL(%q) = %v, want %v", tc.raw, err, tc.want)
		case tc.want != nil && !ssrf.Refused(err):
			t.Errorf("Refused(%v) = false", err)
		}
	}
}

func TestVetURLWritesBackASCIIHost(t *testing.T) {
	u, err := ssrf.ParseURL("https://bücher.example:8443/x")
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "xn--bcher-kva.example:8443" {
		t.Errorf("host = %q, want the punycode form with the port", u.Host)
	}
}

// chain runs the guard's Control and then the tripwire, as a real dialer
// would: when the guard refuses, the tripwire is never reached.
func chain(guard, trip func(string, string, syscall.RawConn) error) func(string, string, syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if err := guard(network, address, c); err != nil {
			return err
		}
		return trip(network, address, c)
	}
}

func TestControlRefusesEveryRangeBeforeConnect(t *testing.T) {
	// Addresses that are not on this machine: a broken guard must not send a
	// single packet there, so NoConnect stands behind it.
	for _, tc := range blockedAddrs {
		a := netip.MustParseAddr(tc.addr)
		if a.Is4() && a.IsMulticast() || a.Is6() && a.IsMulticast() || a == netip.IPv4Unspecified() {
			continue // the kernel refuses these for TCP itself: no proof either way
		}
		d := net.Dialer{Timeout: time.Second, Control: chain(ssrf.Control(nil), ssrftest.NoConnect(t))}
		_, err := d.DialContext(context.Background(), "tcp", netip.AddrPortFrom(a, 80).String())
		if !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("dial %s: %v, want blocked", tc.addr, err)
		}
	}
}

func TestControlRefusesLoopbackListener(t *testing.T) {
	w4 := ssrftest.NewTripwire(t, "127.0.0.1:0")
	d := net.Dialer{Control: ssrf.Control(nil)}
	for _, addr := range []string{
		w4.Addr().String(),
		fmt.Sprintf("0.0.0.0:%d", w4.Port()), // Linux connects 0.0.0.0 to the local host
		fmt.Sprintf("[::ffff:127.0.0.1]:%d", w4.Port()),
	} {
		if _, err := d.DialContext(context.Background(), "tcp", addr); !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("dial %s: %v, want blocked", addr, err)
		}
	}
	w4.AssertUntouched(t)
}

func TestDialerRefusesLoopbackSpellings(t *testing.T) {
	w4 := ssrftest.NewTripwire(t, "127.0.0.1:0")
	w6 := ssrftest.NewTripwire(t, "[::1]:0")
	p4, p6 := w4.Port(), w6.Port()
	var r ssrftest.Resolver
	r.Set("public.test", "127.0.0.1")
	r.Set("public6.test", "::1")
	r.Set("mapped.test", "::ffff:127.0.0.1")
	r.Set("localhost", "::1,127.0.0.1")
	var d ssrf.Dialer
	d.Resolver = &r
	targets := []string{
		fmt.Sprintf("127.0.0.1:%d", p4),
		fmt.Sprintf("127.0.0.1.:%d", p4),
		fmt.Sprintf("0.0.0.0:%d", p4),
		fmt.Sprintf("[::ffff:127.0.0.1]:%d", p4),
		fmt.Sprintf("public.test:%d", p4),
		fmt.Sprintf("PUBLIC.test.:%d", p4),
		fmt.Sprintf("mapped.test:%d", p4),
		fmt.Sprintf("[::1]:%d", p6),
		fmt.Sprintf("[::1%%lo]:%d", p6),
		fmt.Sprintf("[::]:%d", p6),
		fmt.Sprintf("public6.test:%d", p6),
		fmt.Sprintf("localhost:%d", p4),
	}
	for _, s := range numericSpellings {
		targets = append(targets, fmt.Sprintf("%s:%d", s, p4))
	}
	for _, addr := range targets {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		if !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("dial %s: %v, want blocked", addr, err)
		}
	}
	w4.AssertUntouched(t)
	w6.AssertUntouched(t)
}

// testCheck lets 127.0.0.2 pass as if it were public, so that an allowed
// server can live on this machine, and judges everything else as Check does.
func testCheck(a netip.Addr) error {
	if a.Unmap() == netip.MustParseAddr("127.0.0.2") {
		return nil
	}
	return ssrf.Check(a)
}

func TestDialerRefusesMultiRecordAnswerWithOneBlocked(t *testing.T) {
	public := ssrftest.NewTripwire(t, "127.0.0.2:0")
	private := ssrftest.NewTripwire(t, fmt.Sprintf("127.0.0.1:%d", public.Port()))
	var r ssrftest.Resolver
	r.Set("multi.test", "127.0.0.2,127.0.0.1")
	r.Set("multi-rev.test", "127.0.0.1,127.0.0.2")
	d := ssrf.Dialer{Resolver: &r, Check: testCheck}
	for _, host := range []string{"multi.test", "multi-rev.test"} {
		_, err := d.DialContext(context.Background(), "tcp", fmt.Sprintf("%s:%d", host, public.Port()))
		var be *ssrf.BlockedError
		if !errors.As(err, &be) || be.Host != host || be.Addr != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("dial %s: %v, want blocked naming the host and 127.0.0.1", host, err)
		}
	}
	// Refused before connecting anywhere: not even the allowed record.
	public.AssertUntouched(t)
	private.AssertUntouched(t)
}

func TestDialerRebindingSecondAnswerRefused(t *testing.T) {
	public := ssrftest.NewTripwire(t, "127.0.0.2:0")
	private := ssrftest.NewTripwire(t, fmt.Sprintf("127.0.0.1:%d", public.Port()))
	var r ssrftest.Resolver
	r.Set("rebind.test", "127.0.0.2", "127.0.0.1")
	d := ssrf.Dialer{Resolver: &r, Check: testCheck}
	addr := fmt.Sprintf("rebind.test:%d", public.Port())
	c, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	c.Close()
	if _, err := d.DialContext(context.Background(), "tcp", addr); !errors.Is(err, ssrf.ErrBlocked) {
		t.Fatalf("second dial after rebinding: %v, want blocked", err)
	}
	private.AssertUntouched(t)
}

func TestDialerBaseControlSeesOnlyAllowedAddresses(t *testing.T) {
	var r ssrftest.Resolver
	r.Set("meta.test", "169.254.169.254")
	r.Set("ula.test", "fd00:ec2::254")
	r.Set("ten.test", "10.0.0.1")
	d := ssrf.Dialer{
		Resolver: &r,
		Dialer:   &net.Dialer{Timeout: time.Second, Control: ssrftest.NoConnect(t)},
	}
	for _, addr := range []string{"meta.test:80", "ula.test:80", "ten.test:80", "169.254.169.254:80", "[fd00:ec2::254]:80", "2852039166:80"} {
		if _, err := d.DialContext(context.Background(), "tcp", addr); !errors.Is(err, ssrf.ErrBlocked) {
			t.Errorf("dial %s: %v, want blocked", addr, err)
		}
	}
}

func TestDialerAllowsPermittedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("ok"))
			c.Close()
		}
	}()
	var r ssrftest.Resolver
	r.Set("allowed.test", "127.0.0.2")
	d := ssrf.Dialer{Resolver: &r, Check: testCheck}
	c, err := d.DialContext(context.Background(), "tcp", fmt.Sprintf("allowed.test:%d", ln.Addr().(*net.TCPAddr).Port))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil || string(buf) != "ok" {
		t.Fatalf("read %q, %v", buf, err)
	}
}

func TestDialerErrors(t *testing.T) {
	var d ssrf.Dialer
	for _, tc := range []struct{ network, addr string }{
		{"unix", "/tmp/x"}, {"tcp", "no-port"}, {"tcp", "host:99999"}, {"ip", "1.2.3.4:1"},
	} {
		if _, err := d.DialContext(context.Background(), tc.network, tc.addr); err == nil || ssrf.Refused(err) {
			t.Errorf("dial %s %s: %v, want a plain error", tc.network, tc.addr, err)
		}
	}
	var r ssrftest.Resolver
	d.Resolver = &r
	if _, err := d.DialContext(context.Background(), "tcp", "unknown.test:80"); err == nil || ssrf.Refused(err) {
		t.Errorf("dial unknown name: %v, want a lookup error that is not a refusal", err)
	}
}

func FuzzCheck(f *testing.F) {
	for _, tc := range blockedAddrs {
		f.Add(netip.MustParseAddr(tc.addr).AsSlice())
	}
	for _, a := range allowedAddrs {
		f.Add(netip.MustParseAddr(a).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		err := ssrf.Check(a)
		// Properties that must hold whatever the classifier's tables say.
		u := a.Unmap()
		mustBlock := u.IsLoopback() || u.IsPrivate() || u.IsLinkLocalUnicast() || u.IsLinkLocalMulticast() ||
			u.IsMulticast() || u.IsUnspecified() || u.IsInterfaceLocalMulticast()
		if u.Is6() && !netip.MustParsePrefix("2000::/3").Contains(u) {
			mustBlock = true
		}
		if mustBlock && err == nil {
			t.Fatalf("Check(%s) allowed a non-public address", a)
		}
		if (ssrf.Check(u) == nil) != (err == nil) {
			t.Fatalf("Check(%s) and Check(%s) disagree", a, u)
		}
		if err != nil && !errors.Is(err, ssrf.ErrBlocked) {
			t.Fatalf("Check(%s) = %v, not ErrBlocked", a, err)
		}
		// The lax classifier refuses a subset of what the strict one does,
		// and judges every spelling of an address alike.
		merr := ssrf.CheckMetadata(a)
		if merr != nil && err == nil {
			t.Fatalf("CheckMetadata refuses %s but Check allows it", a)
		}
		if merr != nil && !errors.Is(merr, ssrf.ErrBlocked) {
			t.Fatalf("CheckMetadata(%s) = %v, not ErrBlocked", a, merr)
		}
		if (ssrf.CheckMetadata(u) == nil) != (merr == nil) || (ssrf.CheckMetadata(a.WithZone("eth0")) == nil) != (merr == nil) {
			t.Fatalf("CheckMetadata disagrees on spellings of %s", a)
		}
	})
}

func FuzzVetURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/", "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://a@b/",
		"http://127.0.0.1#@example.com", "file:///etc/passwd", "http://0x7f.1/", "http://[fe80::1%25lo]/",
		"http://bücher.example/", "http://127.0.0.1.nip.io/",
		"http://①②⑦.⓪.⓪.①/", "http://169。254。169。254/", "http://[64:ff9b:1::a9fe:a9fe]/", "http://192.0.0.192/",
		"http://[::ffff:192.0.0.192]/", "http://[64:ff9b:1:a9fe:a9:fe00::]/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// With private literals allowed, what passes is no metadata address.
		if lu, err := url.Parse(raw); err == nil {
			lerr := ssrf.VetURLWith(lu, ssrf.CheckMetadata)
			if a, perr := netip.ParseAddr(lu.Hostname()); lerr == nil && perr == nil && ssrf.CheckMetadata(a) != nil {
				t.Fatalf("VetURLWith(CheckMetadata) accepted metadata literal %s in %q", a, raw)
			}
			noResolving(t, raw, lerr)
		}
		u, err := ssrf.ParseURL(raw)
		noResolving(t, raw, err)
		if err != nil {
			return
		}
		// An accepted URL is http(s), has no credentials and, when its host
		// is an IP literal (or anything the C library would read as one),
		// that address is public.
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			t.Fatalf("accepted scheme %q in %q", u.Scheme, raw)
		}
		if u.User != nil {
			t.Fatalf("accepted credentials in %q", raw)
		}
		h := u.Hostname()
		if h == "" {
			t.Fatalf("accepted empty host in %q", raw)
		}
		if a, err := netip.ParseAddr(h); err == nil && !ssrf.Allowed(a) {
			t.Fatalf("accepted blocked literal %s in %q", a, raw)
		}
		if ip := net.ParseIP(h); ip != nil {
			if a, _ := netip.AddrFromSlice(ip); !ssrf.Allowed(a) {
				t.Fatalf("accepted blocked literal %s in %q", a, raw)
			}
		}
		if a, ok := inetAton(h); ok && !ssrf.Allowed(a) {
			t.Fatalf("accepted %q, which inet_aton reads as %s", h, a)
		}
		// Re-vetting the accepted URL's string form must agree.
		if _, err := ssrf.ParseURL(u.String()); err != nil {
			t.Fatalf("accepted %q but not its normal form %q: %v", raw, u.String(), err)
		}
	})
}

// noResolving fails t when a refusal of VetURL, which never looks a name
// up, says that something resolves, or names a literal without its address.
func noResolving(t *testing.T, raw string, err error) {
	t.Helper()
	var be *ssrf.BlockedError
	if !errors.As(err, &be) {
		return
	}
	if strings.Contains(err.Error(), "resolves to") {
		t.Fatalf("vetting %q: %q says something resolved; nothing was looked up", raw, err)
	}
	if be.Literal && (be.Host == "" || !be.Addr.IsValid()) {
		t.Fatalf("vetting %q: literal refusal %+v without its host and address", raw, be)
	}
}

// inetAton is an independent model of glibc's inet_aton: one to four parts,
// each decimal, 0-octal or 0x-hex, the last part filling the remaining
// bytes. It exists only to check CheckHost against.
func inetAton(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		var v uint64
		for _, c := range strings.ToLower(digits) {
			d := strings.IndexRune("0123456789abcdef", c)
			if d < 0 || d >= base {
				return netip.Addr{}, false
			}
			v = v*uint64(base) + uint64(d)
			if v > 0xffffffff {
				return netip.Addr{}, false
			}
		}
		vals = append(vals, v)
	}
	var n uint64
	switch len(vals) {
	case 1:
		n = vals[0]
	case 2:
		if vals[0] > 0xff || vals[1] > 0xffffff {
			return netip.Addr{}, false
		}
		n = vals[0]<<24 | vals[1]
	case 3:
		if vals[0] > 0xff || vals[1] > 0xff || vals[2] > 0xffff {
			return netip.Addr{}, false
		}
		n = vals[0]<<24 | vals[1]<<16 | vals[2]
	case 4:
		for _, v := range vals {
			if v > 0xff {
				return netip.Addr{}, false
			}
		}
		n = vals[0]<<24 | vals[1]<<16 | vals[2]<<8 | vals[3]
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// TestBlockedErrorMessagesSayWhatHappened: a literal is not said to
// "resolve" (nothing was looked up) and is named as written; a name that was
// looked up is; a metadata refusal under CheckMetadata does not tell to use
// a public address, nor name a range private addresses may be in.
func TestBlockedErrorMessagesSayWhatHappened(t *testing.T) {
	var r ssrftest.Resolver
	r.Set("internal.test", "127.0.0.1")
	r.Set("meta.test", "169.254.169.254")
	strict := &ssrf.Dialer{Resolver: &r, Dialer: &net.Dialer{Control: ssrftest.NoConnect(t)}}
	lax := &ssrf.Dialer{Resolver: &r, Check: ssrf.CheckMetadata, Dialer: &net.Dialer{Control: ssrftest.NoConnect(t)}}
	vet := func(raw string, check func(netip.Addr) error) error {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return ssrf.VetURLWith(u, check)
	}
	dial := func(d *ssrf.Dialer, addr string) error {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		return err
	}
	const public = "only public internet addresses can be reached"
	cases := []struct {
		name    string
		err     error
		want    []string
		notWant []string
	}{
		{"literal", vet("http://127.0.0.1/", nil), []string{"127.0.0.1 (loopback)", public}, []string{"resolves to"}},
		{"bracketed literal", vet("http://[::ffff:127.0.0.1]/", nil), []string{"::ffff:127.0.0.1 (IPv4-mapped loopback)"}, []string{"resolves to"}},
		{"unicode digits", vet("http://①②⑦.⓪.⓪.①/", nil), []string{`"①②⑦.⓪.⓪.①" is 127.0.0.1 (loopback)`}, []string{"resolves to"}},
		{"ideographic full stops", vet("http://169。254。169。254/", ssrf.CheckMetadata), []string{`"169。254。169。254" is 169.254.169.254`}, []string{"resolves to", public}},
		{"dialed literal", dial(strict, "127.0.0.1:80"), []string{"127.0.0.1 (loopback)"}, []string{"resolves to"}},
		{"dialed name", dial(strict, "internal.test:80"), []string{"internal.test resolves to 127.0.0.1 (loopback)", public}, nil},
		{"metadata literal, private allowed", vet("http://[::ffff:169.254.169.254]/", ssrf.CheckMetadata), []string{"cloud metadata endpoint", "even with private addresses allowed"}, []string{public, "link-local", "IPv4-mapped"}},
		{"metadata in local-use NAT64, private allowed", vet("http://[64:ff9b:1::a9fe:a9fe]/", ssrf.CheckMetadata), []string{"cloud metadata endpoint 169.254.169.254"}, []string{public, "64:ff9b:1::/48", "NAT64"}},
		{"metadata name, private allowed", dial(lax, "meta.test:80"), []string{"meta.test resolves to 169.254.169.254 (cloud metadata endpoint"}, []string{public}},
		{"metadata literal dialed, private allowed", dial(lax, "[fd00:ec2::254]:80"), []string{"fd00:ec2::254 (cloud metadata endpoint)"}, []string{public, "unique local", "resolves to"}},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, ssrf.ErrBlocked) {
			t.Errorf("%s: %v, want blocked", tc.name, tc.err)
			continue
		}
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q, want it to say %q", tc.name, msg, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(msg, w) {
				t.Errorf("%s: %q, must not say %q", tc.name, msg, w)
			}
		}
	}
}

// rfc6052 places v4 in the NAT64 prefix pfx (of length bits, a length RFC
// 6052 allows) as section 2.2 says, skipping the u octet (bits 64 to 71),
// with the remaining bits taken from fill. It is written apart from the
// package's own table, to check it.
func rfc6052(pfx netip.Addr, bits int, v4 [4]byte, fill [16]byte) netip.Addr {
	b := fill
	p := pfx.As16()
	copy(b[:bits/8], p[:bits/8])
	i := bits / 8
	for _, o := range v4 {
		if i == 8 {
			i++
		}
		b[i] = o
		i++
	}
	return netip.AddrFrom16(b)
}

// metadataV4 restates the IPv4 metadata endpoints, for the fuzzer.
var metadataV4 = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("168.63.129.16/32"), netip.MustParsePrefix("192.0.0.192/32"),
}

// FuzzCheckMetadataEmbedded: a metadata IPv4 address is refused by both
// classifiers in every IPv6 spelling that carries it to the IPv4 host:
// mapped, compatible, 6to4, the well-known NAT64 /96 and the local-use
// NAT64 prefix at each length an operator may carve from it.
func FuzzCheckMetadataEmbedded(f *testing.F) {
	f.Add([]byte{169, 254, 169, 254}, []byte{})
	f.Add([]byte{192, 0, 0, 192}, []byte{0xff, 0xff})
	f.Add([]byte{100, 100, 100, 200}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{10, 0, 0, 1}, []byte{})
	f.Fuzz(func(t *testing.T, raw, fillRaw []byte) {
		if len(raw) != 4 {
			return
		}
		v4 := [4]byte(raw)
		var fill [16]byte
		copy(fill[:], fillRaw)
		meta := false
		for _, p := range metadataV4 {
			meta = meta || p.Contains(netip.AddrFrom4(v4))
		}
		spelt := []netip.Addr{
			netip.AddrFrom4(v4),
			netip.AddrFrom16(netip.AddrFrom4(v4).As16()),
			rfc6052(netip.IPv6Unspecified(), 96, v4, [16]byte{}),
			rfc6052(netip.MustParseAddr("64:ff9b::"), 96, v4, fill),
			netip.AddrFrom16([16]byte{0x20, 0x02, v4[0], v4[1], v4[2], v4[3], fill[6], fill[7], fill[8], fill[9], fill[10], fill[11], fill[12], fill[13], fill[14], fill[15]}),
		}
		for _, bits := range []int{48, 56, 64, 96} {
			spelt = append(spelt, rfc6052(netip.MustParseAddr("64:ff9b:1::"), bits, v4, fill))
		}
		for _, a := range spelt {
			merr := ssrf.CheckMetadata(a)
			if meta && merr == nil {
				t.Fatalf("CheckMetadata(%s) allowed metadata address %s", a, netip.AddrFrom4(v4))
			}
			if merr != nil && ssrf.Check(a) == nil {
				t.Fatalf("CheckMetadata refuses %s but Check allows it", a)
			}
			var be *ssrf.BlockedError
			if merr != nil && (!errors.As(merr, &be) || !be.Metadata || strings.Contains(merr.Error(), "only public internet")) {
				t.Fatalf("CheckMetadata(%s) = %v, want a metadata refusal", a, merr)
			}
			if a.Is6() && !a.Is4In6() && ssrf.Check(a) == nil && !netip.MustParsePrefix("2002::/16").Contains(a) {
				t.Fatalf("Check(%s) allowed an address that embeds IPv4", a)
			}
		}
	})
}

// TestDialerOpensNoSocketForARefusedAnswer: every socket the Dialer
// connects passes its base Control right before connect(2) (net calls it
// from the socket's dial, for each address tried), so a spy there sees
// every connect(2) the Dialer makes. For an answer with a refused record it
// sees none, not even for the allowed record; the resolver here does not
// sort, so nothing else connects either. (With the system resolver, the
// RFC 6724 sort's UDP probes are outside this: see the Dialer's doc.)
func TestDialerOpensNoSocketForARefusedAnswer(t *testing.T) {
	var r ssrftest.Resolver
	r.Set("mixed.test", "127.0.0.2,169.254.169.254")
	r.Set("mixed6.test", "::ffff:127.0.0.2,fd00:ec2::254,10.0.0.1")
	var seen []string
	spy := func(network, address string, _ syscall.RawConn) error {
		seen = append(seen, address)
		return fmt.Errorf("spy: no connection in this test")
	}
	for _, check := range []func(netip.Addr) error{testCheck, ssrf.CheckMetadata} {
		d := ssrf.Dialer{Resolver: &r, Check: check, Dialer: &net.Dialer{Control: spy}}
		for _, host := range []string{"mixed.test", "mixed6.test"} {
			// Each answer holds a metadata record, refused by both checks.
			if _, err := d.DialContext(context.Background(), "tcp", host+":80"); !errors.Is(err, ssrf.ErrBlocked) {
				t.Errorf("dial %s: %v, want blocked", host, err)
			}
		}
	}
	if len(seen) > 0 {
		t.Errorf("the Dialer connected sockets to %v for answers it refused", seen)
	}
}
