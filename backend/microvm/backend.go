package microvm

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/internal/capture"
	"github.com/paigasus/helikon/internal/forkdapi"
)

// Label is the Guarantees label of the microVM backend.
const Label = "forkd (firecracker microvm, experimental)"

// DefaultReapAge is the age past which [Backend.Reconcile] destroys a
// sandbox of this backend's snapshot. It must exceed the longest command
// plus clock skew between this machine and the controller.
const DefaultReapAge = 5 * time.Minute

// DefaultReapConcurrency is how many deletes Reconcile runs at once: enough
// to clear a backlog quickly, few enough not to flood the controller.
const DefaultReapConcurrency = 4

// probeTimeout bounds the build-time egress proxy probe.
const probeTimeout = 5 * time.Second

// Options configure a [Backend]. Zero values mean the defaults.
type Options struct {
	// URL of the controller: https://host:port, or http:// for loopback.
	URL string
	// Token is the controller's bearer token.
	Token Token
	// Snapshot is the snapshot tag every microVM is forked from (required).
	Snapshot string
	// PerChildNetns asks the controller to place each microVM in its own
	// network namespace (forkd-child-N), which the controller host must
	// have provisioned (forkd's scripts/netns-setup.sh). Without it the
	// microVMs share the controller host's tap device.
	PerChildNetns bool
	// MemoryLimitMiB is the memory limit of each microVM's cgroup on the
	// controller host; 0 means none.
	MemoryLimitMiB uint64
	// CACertPEM pins the controller's CA (see ClientOptions).
	CACertPEM []byte
	// Timeout is the longest a command may run; a Request may shorten it.
	// 0 means backend.DefaultTimeout.
	Timeout time.Duration
	// OutputCap is the cap per captured stream; 0 means
	// backend.DefaultOutputCap. A request may lower it, not raise it.
	OutputCap int64
	// APITimeout bounds create, delete and list calls; 0 means
	// DefaultAPITimeout.
	APITimeout time.Duration
	// Egress is the filter the operator's egress proxy enforces. It is
	// reported in the guarantees' features; the backend cannot push it to
	// a proxy it does not run.
	Egress *egress.Filter
	// EnforceEgress is the egress proxy endpoint (host:port or
	// http://[user:pass@]host:port) the microVMs' network namespaces route
	// through. When set, New probes that the proxy answers and fails if it
	// does not; commands get HTTP_PROXY, HTTPS_PROXY and ALL_PROXY pointing
	// at it; and the network guarantee reads proxied. Setting it is an
	// attestation by the operator that the namespaces allow no other route:
	// the backend cannot check the controller host's firewall.
	EnforceEgress string
	// ReapAge is the age past which Reconcile destroys a sandbox of this
	// snapshot; 0 means DefaultReapAge.
	ReapAge time.Duration
	// ReapConcurrency bounds concurrent deletes in Reconcile; 0 means
	// DefaultReapConcurrency.
	ReapConcurrency int
	// Now returns the current time for Reconcile; nil means time.Now.
	Now func() time.Time
	// Logger receives a record for every destroy that failed; nil means
	// slog.Default(). The token is never logged.
	Logger *slog.Logger
}

// Backend runs each command in a fresh Firecracker microVM forked from a
// snapshot by a forkd controller, and destroys the microVM afterwards.
//
// What it guarantees: the command runs in a microVM (filesystem and
// syscalls virtualized: the host's files and kernel are out of reach); each
// run gets its own microVM, forked for it and destroyed on every path
// (success, failure, timeout, cancellation), with a destroy that ignores the
// caller's cancellation; the bearer token never appears in errors, logs or
// formatted values; the controller is reached over verified TLS (or
// plain HTTP on loopback only).
//
// What it does NOT guarantee: network containment, unless EnforceEgress is
// set and the controller host's network namespaces route everything through
// the egress proxy (the backend checks the proxy answers, not the routes).
// A microVM whose create call committed on the controller but whose id
// never reached the client (a timeout after commit, a garbled answer) leaks
// until [Backend.Reconcile] reaps it. The Env allowlist, resource limits and
// stdin of a Request do not apply: the microVM has its own environment and
// resources, and the API has no stdin. A live controller was not exercised
// by this package's tests (they need KVM); they run against a fake that
// speaks the same API.
type Backend struct {
	client *Client
	opts   Options // Token cleared: the client holds it
	// proxy is HTTP_PROXY for the microVM, which may contain credentials:
	// a pointer, so that %v of a Backend prints its address, not them.
	proxy *string
	guar  backend.Guarantees
}

// New builds a microVM backend. It does not contact the controller; it does
// probe the egress proxy when EnforceEgress is set, and fails (wrapping
// backend.ErrUnavailable) when the proxy does not answer like an HTTP proxy.
// opts is required: it names the controller and the snapshot.
func New(ctx context.Context, opts *Options) (*Backend, error) {
	if opts == nil {
		return nil, errors.New("forkd: options are required: the controller URL (FORKD_URL) and a snapshot tag (FORKD_SNAPSHOT)")
	}
	if opts.Snapshot == "" {
		return nil, errors.New("forkd: a snapshot tag is required (FORKD_SNAPSHOT)")
	}
	if opts.URL == "" {
		return nil, errors.New("forkd: a controller URL is required (FORKD_URL)")
	}
	if opts.Egress != nil {
		if err := opts.Egress.Validate(); err != nil {
			return nil, fmt.Errorf("forkd: egress filter: %w", err)
		}
	}
	client, err := forkdapi.NewClient(opts.URL, forkdapi.ClientOptions{Token: opts.Token, CACertPEM: opts.CACertPEM, APITimeout: opts.APITimeout})
	if err != nil {
		return nil, err
	}
	b := &Backend{client: client, opts: *opts, proxy: new(string)}
	b.opts.Token = ""
	b.guar = backend.Guarantees{
		Filesystem: backend.IsolationVirtualized,
		Network:    backend.IsolationNone,
		Syscalls:   backend.IsolationVirtualized,
		Label:      Label,
		Features:   []string{"controller " + client.URL(), "snapshot " + opts.Snapshot},
	}
	if opts.EnforceEgress != "" {
		hostport, user, err := parseProxyEndpoint(opts.EnforceEgress)
		if err != nil {
			return nil, err
		}
		if err := probeProxy(ctx, hostport, user); err != nil {
			return nil, fmt.Errorf("%w: forkd: egress proxy %s: %w; refusing to report proxied egress", backend.ErrUnavailable, hostport, err)
		}
		*b.proxy = "http://" + hostport
		if user != nil {
			*b.proxy = "http://" + user.String() + "@" + hostport
		}
		b.guar.Network = backend.IsolationProxied
		b.guar.Features = append(b.guar.Features, "egress through proxy "+hostport)
	}
	if opts.Egress != nil {
		b.guar.Features = append(b.guar.Features, "egress policy: "+opts.Egress.String())
	}
	return b, nil
}

// String describes the backend without secrets.
func (b *Backend) String() string {
	return "forkd backend (" + b.client.URL() + ", snapshot " + b.opts.Snapshot + ")"
}

// Client returns the backend's controller client (package workspace/forkd
// shares it, so that one controller is reached through one connection
// pool).
func (b *Backend) Client() *Client { return b.client }

// Guarantees reports virtualized filesystem and syscalls, and a network
// that is proxied when EnforceEgress was set and its probe passed, none
// otherwise.
func (b *Backend) Guarantees() backend.Guarantees {
	g := b.guar
	g.Features = append([]string(nil), g.Features...)
	return g
}

func (b *Backend) logger() *slog.Logger {
	if b.opts.Logger != nil {
		return b.opts.Logger
	}
	return slog.Default()
}

// Run forks a microVM, runs the request in it, and destroys it.
func (b *Backend) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	if _, err := b.argv(req, ""); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	boxes, err := b.client.Create(ctx, b.createRequest())
	// Destroy whatever was created, on every path, even when ctx is
	// cancelled: a cancelled caller must not leak a microVM.
	defer b.destroy(context.WithoutCancel(ctx), boxes)
	if err != nil {
		return nil, err
	}
	res, err := b.RunIn(ctx, boxes[0].ID, "", req)
	if res != nil {
		res.Duration = time.Since(start)
	}
	return res, err
}

// RunIn runs the request in the existing sandbox id (a controller
// workspace's live microVM, which outlives the call), starting in the
// guest directory dir when it is not empty: the command runs as sh -c 'cd
// -- DIR && exec "$@"', and a directory that cannot be entered is exit code
// 127 with the shell's message. It neither forks nor destroys a microVM. A
// sandbox the controller does not know is an error matching [ErrNotFound].
//
// The guest agent kills only the direct child of a command that runs past
// its timeout: what that child started in the background keeps running in
// the microVM (Run destroys the microVM; a workspace keeps it).
func (b *Backend) RunIn(ctx context.Context, id, dir string, req *backend.Request) (*backend.Result, error) {
	args, err := b.argv(req, dir)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := backend.EffectiveTimeout(b.opts.Timeout, req.Timeout)
	outCap := capture.Cap(b.opts.OutputCap, req.OutputCap)
	secs := int((timeout + time.Second - 1) / time.Second)
	execCtx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+forkdapi.ExecGrace)
	defer cancel()
	execStart := time.Now()
	out, err := b.client.Exec(execCtx, id, args, secs, forkdapi.MaxExecBody(outCap))
	res := &backend.Result{}
	defer func() { res.Duration = time.Since(execStart) }()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("forkd exec: %w", ctx.Err())
		}
		if errors.Is(execCtx.Err(), context.DeadlineExceeded) {
			res.TimedOut = true
			return res, nil
		}
		return nil, err
	}
	res.TimedOut = forkdapi.TimedOut(out, time.Since(execStart), secs)
	if !res.TimedOut {
		setExit(res, out.ExitCode)
	}
	stdout, stderr := backend.NewCappedBuffer(outCap), backend.NewCappedBuffer(outCap)
	stdout.Write([]byte(out.Stdout))
	stderr.Write([]byte(out.Stderr))
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	if err := deliver(req.Stdout, stdout, &res.Stdout); err != nil {
		return res, err
	}
	if err := deliver(req.Stderr, stderr, &res.Stderr); err != nil {
		return res, err
	}
	return res, nil
}

// createRequest is the create body for one microVM of this backend.
func (b *Backend) createRequest() CreateRequest {
	return CreateRequest{SnapshotTag: b.opts.Snapshot, N: 1, PerChildNetns: b.opts.PerChildNetns, MemoryLimitMiB: b.opts.MemoryLimitMiB}
}

// setExit records the controller's exit code: -N is the guest agent's
// report of death by signal N.
func setExit(res *backend.Result, code int) {
	if code < 0 {
		res.Signal = -code
		return
	}
	res.ExitCode = &code
}

// deliver writes captured output to w when the caller passed one, and
// stores it in the result otherwise.
func deliver(w interface{ Write([]byte) (int, error) }, buf *backend.CappedBuffer, dst *[]byte) error {
	if w == nil {
		*dst = append([]byte(nil), buf.Bytes()...)
		return nil
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("forkd: writing command output: %w", err)
	}
	return nil
}

func (b *Backend) destroy(ctx context.Context, boxes []SandboxInfo) {
	for _, s := range boxes {
		if !forkdapi.ValidID(s.ID) {
			continue
		}
		if err := b.client.Delete(ctx, s.ID); err != nil {
			b.logger().Warn("forkd: destroying microvm failed; Reconcile will reap it", "id", s.ID, "err", err)
		}
	}
}

// cdScript enters the directory named by its first argument and runs the
// rest as a command: a workspace's commands start in its root, and the
// exec API has no working directory.
const cdScript = `cd -- "$1" || exit 127; shift; exec "$@"`

// argv builds the exec arguments: sh -c for a command line, the vector as
// given otherwise, behind env(1) for SetEnv and the proxy variables, behind
// cdScript when dir is set.
func (b *Backend) argv(req *backend.Request, dir string) ([]string, error) {
	var cmd []string
	switch {
	case req.Command != "" && len(req.Argv) > 0:
		return nil, errors.New("forkd: request has both Command and Argv")
	case req.Command != "":
		cmd = []string{"sh", "-c", req.Command}
	case len(req.Argv) > 0:
		cmd = req.Argv
	default:
		return nil, errors.New("forkd: request has neither Command nor Argv")
	}
	var set []string
	if *b.proxy != "" {
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			set = append(set, k+"="+*b.proxy)
		}
	}
	for _, kv := range req.SetEnv {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t\n") {
			return nil, fmt.Errorf("forkd: SetEnv entry %q is not NAME=value", kv)
		}
		set = append(set, kv)
	}
	if len(set) > 0 {
		// env(1) reads NAME=value words up to the first that has no "=": a
		// program name containing "=" would be taken for one more variable.
		if strings.Contains(cmd[0], "=") {
			return nil, fmt.Errorf("forkd: program name %q contains '='", cmd[0])
		}
		cmd = append(append([]string{"env", "--"}, set...), cmd...)
	}
	if dir != "" {
		cmd = append([]string{"sh", "-c", cdScript, "sh", dir}, cmd...)
	}
	return cmd, nil
}

// parseProxyEndpoint accepts host:port or http://[user:pass@]host:port and
// returns the host:port, checked by the egress proxy's own strict parser.
func parseProxyEndpoint(s string) (string, *url.Userinfo, error) {
	authority, user := s, (*url.Userinfo)(nil)
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "http" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return "", nil, errors.New("forkd: egress proxy endpoint: want host:port or http://[user:pass@]host:port")
		}
		authority, user = u.Host, u.User
	}
	host, port, err := egress.ParseAuthority(authority, 0)
	if err != nil {
		return "", nil, fmt.Errorf("forkd: egress proxy endpoint: want host:port: %w", err)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), user, nil
}

// probeHost is a name that can never resolve (RFC 2606 .invalid): a proxy
// enforcing any policy answers a CONNECT to it with 403 (policy), 502
// (lookup failed), 407 (credentials) or 400, never 200.
const probeHost = "helikon-egress-probe.invalid:443"

// probeProxy checks that an HTTP proxy answers at hostport.
func probeProxy(ctx context.Context, hostport string, user *url.Userinfo) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return fmt.Errorf("not reachable: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	head := "CONNECT " + probeHost + " HTTP/1.1\r\nHost: " + probeHost + "\r\n"
	if user != nil {
		pw, _ := user.Password()
		head += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user.Username()+":"+pw)) + "\r\n"
	}
	if _, err := c.Write([]byte(head + "\r\n")); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return fmt.Errorf("did not answer like an HTTP proxy: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return errors.New("tunnelled to an unresolvable name: not a policy-enforcing proxy")
	}
	if resp.StatusCode == http.StatusProxyAuthRequired {
		return errors.New("requires credentials; give them as http://user:pass@host:port")
	}
	return nil
}
