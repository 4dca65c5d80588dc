package egress_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon/egress"
)

// TestFramingTricksNeverReachADeniedHost: requests whose framing parsers
// disagree about (Content-Length with Transfer-Encoding, obs-fold, bare LF,
// HTTP/1.0 keep-alive, a request hidden in a chunked body, a Host header that
// names another host than the absolute-form URL) and over-long lines. Every
// request the proxy reads is checked on its own, whatever came before it on
// the connection, so a smuggled request to a denied host is refused (403),
// never forwarded; the upstream sees only the allowed request, with the
// checked Host; the denied name is never resolved.
func TestFramingTricksNeverReachADeniedHost(t *testing.T) {
	up, seen := httpUpstream(t)
	port := portOf(t, up)
	ps := strconv.Itoa(port)
	res := newResolver(map[string]string{"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"})
	p := &egress.Proxy{Filter: egress.DenyAll().AllowDomains("allowed.test").WithPorts(port), Resolver: res, CheckAddr: allowLoopback}
	egress.SetDialTripwire(p, loopbackOnly(t))
	addr := startProxy(t, p)
	allowed := "http://allowed.test:" + ps + "/a"
	smuggled := "GET http://denied.test:" + ps + "/smuggled HTTP/1.1\r\nHost: denied.test\r\n\r\n"
	cases := []struct {
		name, raw string
		statuses  []int
	}{
		{"content-length then chunked", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, []int{200, 403}},
		{"chunked then content-length", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n0\r\n\r\n" + smuggled, []int{200, 403}},
		{"obs-fold", "GET " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nX-A: b\r\n c\r\n\r\n" + smuggled, []int{200, 403}},
		{"obs-folded transfer-encoding", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + smuggled, []int{200, 403}},
		{"unknown transfer-encoding", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n" + smuggled, []int{501}},
		{"two content-lengths", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 0\r\nContent-Length: 50\r\n\r\n" + smuggled, []int{400}},
		{"space before colon", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, []int{400}},
		{"bare LF", "GET " + allowed + " HTTP/1.1\nHost: allowed.test\n\n" + smuggled, []int{200, 403}},
		{"HTTP/1.0 keep-alive, lying Host", "GET " + allowed + " HTTP/1.0\r\nHost: denied.test\r\nConnection: keep-alive\r\n\r\n" + smuggled, []int{200, 403}},
		{"HTTP/0.9", "GET " + allowed + "\r\n\r\n" + smuggled, []int{400}},
		{"request inside a chunked body", "POST " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(smuggled)), 16) + "\r\n" + smuggled + "\r\n0\r\n\r\n", []int{200}},
		{"absolute form to a denied host, Host allowed", "GET http://denied.test:" + ps + "/a HTTP/1.1\r\nHost: allowed.test:" + ps + "\r\n\r\n", []int{403}},
		{"CONNECT denied, Host allowed", "CONNECT denied.test:" + ps + " HTTP/1.1\r\nHost: allowed.test:" + ps + "\r\n\r\n", []int{403}},
		{"very long request line", "GET " + allowed + "/" + strings.Repeat("a", 64<<10) + " HTTP/1.1\r\nHost: allowed.test\r\n\r\n", []int{431}},
		{"very long header line", "GET " + allowed + " HTTP/1.1\r\nHost: allowed.test\r\nX-Long: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", []int{431}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialProxy(t, addr)
			if _, err := io.WriteString(rc.c, tc.raw); err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.statuses {
				resp, err := http.ReadResponse(rc.r, nil)
				if err != nil {
					t.Fatalf("response %d: %v, want status %d", i, err, want)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Fatalf("response %d: status %d (%s), want %d", i, resp.StatusCode, resp.Header.Get(egress.DeniedHeader), want)
				}
			}
		})
	}
	// Every forwarded request was answered above, so what the upstream saw
	// is already in the channel.
	for len(seen) > 0 {
		if s := <-seen; s.Host != "allowed.test:"+ps || s.URI != "/a" {
			t.Errorf("the upstream saw %+v; only the allowed request may reach it", s)
		}
	}
	if n := res.count("denied.test"); n != 0 {
		t.Errorf("denied.test resolved %d times", n)
	}
}
