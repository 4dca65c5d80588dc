// Package dockerinfo reads what a Docker-compatible daemon (dockerd,
// Podman's service) says of itself in GET /info, for the Docker engine
// (workspace/docker) and helikon doctor, which asks over plain HTTP.
package dockerinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// Info is what helikon reads of a daemon's GET /info.
type Info struct {
	SecurityOptions []string
	// Rootless is Podman's own field: its service (4.x) reports no
	// "rootless" security option, only this.
	Rootless bool
	// Podman is whether Podman's service answered (it names its own API
	// version in the header Libpod-Api-Version of every answer).
	Podman bool `json:"-"`
	// Raw is the answer as the daemon sent it, for the fields helikon
	// does not read here.
	Raw []byte `json:"-"`
}

// IsRootless reports whether the daemon runs as an ordinary user in a user
// namespace of its own, as dockerd (under rootlesskit) says it in its
// security options and Podman's service in its Rootless field.
func (i Info) IsRootless() bool { return i.Rootless || Rootless(i.SecurityOptions) }

// maxInfo bounds the answer read: a daemon's info is a few kilobytes.
const maxInfo = 1 << 20

// Get asks the daemon that dial reaches for its info, over HTTP/1.1. The
// official client's Info drops what it does not know (Podman's Rootless
// field and its header), so helikon asks itself; dial is the client's
// Dialer, which speaks TLS where the client does. One request: Podman's
// rootless service takes seconds to answer /info, and more for /version.
func Get(ctx context.Context, dial func(context.Context) (net.Conn, error)) (Info, error) {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/info", nil)
	if err != nil {
		return Info{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return Info{}, fmt.Errorf("GET /info: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Info{}, fmt.Errorf("GET /info: HTTP %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxInfo))
	if err != nil {
		return Info{}, fmt.Errorf("GET /info: %w", err)
	}
	var i Info
	if err := json.Unmarshal(raw, &i); err != nil {
		return Info{}, fmt.Errorf("GET /info: %w", err)
	}
	i.Podman = resp.Header.Get("Libpod-Api-Version") != ""
	i.Raw = raw
	return i, nil
}

// SecurityOptions parses a daemon's security options ("name=seccomp,
// profile=builtin", "name=rootless", "name=userns") into a map from each
// option's name to its other fields. The format is the Engine API's; the
// client library has no parser for it, so this one is ours.
func SecurityOptions(opts []string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, o := range opts {
		fields := map[string]string{}
		name := ""
		for f := range strings.SplitSeq(o, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			if k == "name" {
				name = v
				continue
			}
			fields[k] = v
		}
		if name != "" {
			out[name] = fields
		}
	}
	return out
}

// Rootless reports whether the daemon runs as an ordinary user in a user
// namespace of its own: both dockerd (under rootlesskit) and Podman's
// service report the option "rootless" then.
func Rootless(opts []string) bool {
	_, ok := SecurityOptions(opts)["rootless"]
	return ok
}

// Remapped reports whether the daemon runs its containers in a remapped
// user namespace (Docker's userns-remap reports the option "userns").
func Remapped(opts []string) bool {
	_, ok := SecurityOptions(opts)["userns"]
	return ok
}
