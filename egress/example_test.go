package egress_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"

	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/ssrf"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

// A proxy that lets clients reach one allowed host and nothing else. Here a
// loopback server stands in for the allowed site, and CheckAddr lets that one
// loopback address through (the default check admits public addresses only).
func ExampleProxy() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		fmt.Fprint(w, "hello from "+host)
	}))
	defer site.Close()
	siteAddr := netip.MustParseAddrPort(site.Listener.Addr().String())
	port := strconv.Itoa(int(siteAddr.Port()))

	var names ssrftest.Resolver
	names.Set("api.example.com", siteAddr.Addr().String())
	names.Set("metadata.example.com", "169.254.169.254")
	p := &egress.Proxy{
		Filter:   egress.DenyAll().AllowDomains("example.com").DenyDomains("ads.example.com"),
		Resolver: &names,
		Logger:   slog.New(slog.DiscardHandler), // refusals are logged; keep the example quiet
		CheckAddr: func(a netip.Addr) error {
			if a == siteAddr.Addr() {
				return nil
			}
			return ssrf.Check(a)
		},
	}
	p.Filter.Ports = []int{int(siteAddr.Port())}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go p.Serve(ln)
	defer p.Shutdown(context.Background())

	proxyURL := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	for _, host := range []string{"api.example.com", "ads.example.com", "example.org", "metadata.example.com"} {
		resp, err := client.Get("http://" + host + ":" + port + "/")
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			fmt.Printf("%s: %s\n", host, body)
		} else {
			fmt.Printf("%s: %d %s\n", host, resp.StatusCode, resp.Header.Get(egress.DeniedHeader))
		}
	}
	// The proxy never looked up the names the filter refused.
	fmt.Println(names.Calls("ads.example.com"), names.Calls("metadata.example.com"))
	// Output:
	// api.example.com: hello from api.example.com
	// ads.example.com: 403 host in deny list
	// example.org: 403 host not in allow list
	// metadata.example.com: 403 resolves to a non-public address
	// 0 1
}
