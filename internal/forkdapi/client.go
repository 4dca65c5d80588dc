package forkdapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
)

// DefaultAPITimeout bounds one create, delete or list call.
const DefaultAPITimeout = 30 * time.Second

// maxListBody bounds a list response: 16 MiB is ~100 000 sandboxes.
const maxListBody = 16 << 20

// maxSmallBody bounds create, delete and error responses.
const maxSmallBody = 1 << 20

// ExecGrace is how much longer than a command's timeout a caller of
// [Client.Exec] waits for the answer: the controller needs time to stop
// the command and answer, and the network adds latency.
const ExecGrace = 10 * time.Second

// MaxExecBody bounds an exec answer whose streams are capped at outCap
// bytes each: JSON may escape each output byte into up to six.
func MaxExecBody(outCap int64) int64 { return 12*outCap + 1<<20 }

// ClientOptions configure a [Client]. The zero value means no token, the
// system's root certificates and [DefaultAPITimeout].
type ClientOptions struct {
	// Token is sent as "Authorization: Bearer TOKEN" on every call.
	Token Token
	// CACertPEM, when set, pins the controller's certificate authority: only
	// certificates signed by these PEM certificates are accepted, and the
	// system's roots are not consulted. Certificate verification is never
	// disabled.
	CACertPEM []byte
	// APITimeout bounds one create, delete or list call; 0 means
	// DefaultAPITimeout. Exec calls are bounded by their own timeout.
	APITimeout time.Duration
}

// Client speaks the forkd controller's REST API. It is safe for concurrent
// use.
type Client struct {
	base       *url.URL
	secret     *secret
	hc         *http.Client
	apiTimeout time.Duration
}

// ErrInsecureURL is returned for a controller URL that would send the token
// in clear text to another machine.
var ErrInsecureURL = errors.New("insecure controller URL")

// NewClient returns a client for the controller at rawURL (https://, or
// http:// for a loopback host only; no userinfo, query or fragment).
func NewClient(rawURL string, opts ClientOptions) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("forkd controller URL: %w", err)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("forkd controller URL %q: want scheme://host[:port][/path] without userinfo, query or fragment", u.Redacted())
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%w: http://%s would send the bearer token in clear text; use https:// (plain http is allowed for loopback hosts only)", ErrInsecureURL, u.Host)
		}
	default:
		return nil, fmt.Errorf("%w: scheme %q; use https://", ErrInsecureURL, u.Scheme)
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(opts.CACertPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(opts.CACertPEM) {
			return nil, errors.New("forkd CA: no PEM certificate found")
		}
		tlsConf.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:                 nil, // the controller is reached directly, never through an environment proxy
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   10 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // exec responses arrive when the command ends
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &Client{
		base:   u,
		secret: &secret{v: string(opts.Token)},
		hc: &http.Client{
			Transport: tr,
			// A redirect could carry the token elsewhere; the API has none.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		apiTimeout: opts.APITimeout,
	}, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// String describes the client without its token.
func (c *Client) String() string { return "forkd client for " + c.base.String() }

// URL is the controller's URL, as adapters name it in their guarantees and
// descriptions (it carries no credentials: NewClient refuses userinfo).
func (c *Client) URL() string { return c.base.String() }

// APIError is a non-success answer of the controller.
type APIError struct {
	Op      string // create, exec, delete, list
	Status  int    // the HTTP status code
	Message string // the start of the response body, token removed
}

// Error names the operation and status, and adds what to check for
// authorization failures and controller errors.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("forkd %s: controller answered %d %s", e.Op, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		msg += " (check FORKD_TOKEN)"
	case e.Status >= 500:
		msg += " (the controller failed; retry later)"
	}
	return msg
}

// ErrUnreachable matches a call that got no answer from the controller
// (refused, reset, TLS failure): start the controller or check FORKD_URL.
// It wraps backend.ErrUnavailable.
var ErrUnreachable = fmt.Errorf("%w: forkd controller unreachable", backend.ErrUnavailable)

// ErrMalformedResponse matches responses the client cannot decode.
var ErrMalformedResponse = errors.New("malformed controller response")

// ErrNotFound matches an [APIError] whose status is 404: the controller
// has no such sandbox, workspace or snapshot.
var ErrNotFound = errors.New("not found")

// Is makes errors.Is(err, ErrNotFound) true for a 404.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

// SandboxInfo is the controller's SandboxInfo (docs/API.md): one microVM.
// CreatedAt is zero when the controller gave no usable timestamp.
type SandboxInfo struct {
	ID             string    // the controller's id, used for exec and delete
	SnapshotTag    string    // the snapshot the microVM was forked from
	Netns          string    // its network namespace; "" when it has none of its own
	GuestAddr      string    // the guest agent's address inside the namespace
	CreatedAt      time.Time // from created_at_unix; zero when missing or unusable
	PID            int       // the Firecracker process on the controller host; 0 when unknown
	MemoryLimitMiB uint64    // the cgroup memory limit; 0 when none
}

// sandboxWire is SandboxInfo as the controller serializes it. Only the id
// is required; the rest is read leniently, since only the id is needed to
// use or destroy a sandbox.
type sandboxWire struct {
	ID             string          `json:"id"`
	SnapshotTag    string          `json:"snapshot_tag"`
	Netns          *string         `json:"netns"`
	GuestAddr      string          `json:"guest_addr"`
	CreatedAt      json.RawMessage `json:"created_at_unix"`
	PID            *uint32         `json:"pid"`
	MemoryLimitMiB *uint64         `json:"memory_limit_mib"`
}

func (w sandboxWire) info() SandboxInfo {
	s := SandboxInfo{ID: w.ID, SnapshotTag: w.SnapshotTag, GuestAddr: w.GuestAddr, CreatedAt: parseUnix(w.CreatedAt)}
	if w.Netns != nil {
		s.Netns = *w.Netns
	}
	if w.PID != nil {
		s.PID = int(*w.PID)
	}
	if w.MemoryLimitMiB != nil {
		s.MemoryLimitMiB = *w.MemoryLimitMiB
	}
	return s
}

// ExecResult is the controller's ExecResponse. The controller reports no
// timeout: the guest agent answers a command it killed for running past
// timeout_secs, or one it could not start, as exit code 1 with empty
// output. A command killed by signal N has exit code -N.
type ExecResult struct {
	Stdout   string // decoded by the guest as UTF-8, invalid bytes replaced
	Stderr   string // likewise
	ExitCode int
}

func (c *Client) apiCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	t := c.apiTimeout
	if t <= 0 {
		t = DefaultAPITimeout
	}
	return context.WithTimeout(ctx, t)
}

// call sends one request and decodes a JSON answer into out (when non-nil).
// okStatus lists extra statuses that count as success with no body.
func (c *Client) call(ctx context.Context, op, method, path string, in, out any, maxBody int64, okStatus ...int) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("forkd %s: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	u := *c.base
	u.Path += path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return 0, fmt.Errorf("forkd %s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.secret.v)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("forkd %s: %w", op, ctx.Err())
		}
		// *url.Error names the method and URL, never the headers.
		return 0, fmt.Errorf("forkd %s: %w at %s: %s", op, ErrUnreachable, c.base.Redacted(), c.secret.redact(err.Error()))
	}
	defer resp.Body.Close()
	for _, s := range okStatus {
		if resp.StatusCode == s {
			io.Copy(io.Discard, io.LimitReader(resp.Body, maxSmallBody))
			return s, nil
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.StatusCode, &APIError{Op: op, Status: resp.StatusCode, Message: c.secret.redact(sanitize(b))}
	}
	if out == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxSmallBody))
		return resp.StatusCode, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if ctx.Err() != nil {
		// An answer that raced with the deadline or cancellation may be
		// cut short; the call's outcome is the expiry, not a parse error.
		return resp.StatusCode, fmt.Errorf("forkd %s: %w", op, ctx.Err())
	}
	if err != nil {
		return resp.StatusCode, fmt.Errorf("forkd %s: reading response: %s", op, c.secret.redact(err.Error()))
	}
	if int64(len(b)) > maxBody {
		return resp.StatusCode, fmt.Errorf("forkd %s: %w: response larger than %d bytes", op, ErrMalformedResponse, maxBody)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return resp.StatusCode, fmt.Errorf("forkd %s: %w: %v", op, ErrMalformedResponse, err)
	}
	return resp.StatusCode, nil
}

// sanitize turns the start of an error body into one printable line.
func sanitize(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return ' '
		}
		return r
	}, string(b))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// CreateRequest is the body of POST /v1/sandboxes (CreateSandboxRequest).
type CreateRequest struct {
	// SnapshotTag is the snapshot to fork from (required).
	SnapshotTag string `json:"snapshot_tag"`
	// N is how many microVMs to fork, 1 to 1000; 0 means 1.
	N int `json:"n,omitempty"`
	// PerChildNetns places each microVM in its own network namespace
	// (forkd-child-N), which the controller host must have provisioned.
	PerChildNetns bool `json:"per_child_netns,omitempty"`
	// MemoryLimitMiB sets memory.max on the microVM's cgroup; 0 means none.
	MemoryLimitMiB uint64 `json:"memory_limit_mib,omitempty"`
}

// Create forks microVMs from a snapshot: POST /v1/sandboxes, answered by
// 201 and a JSON array of SandboxInfo. When the answer is unusable (an
// entry without a valid id, more or fewer entries than asked), the
// sandboxes it does name are returned with the error so that the caller can
// destroy them.
func (c *Client) Create(ctx context.Context, req CreateRequest) ([]SandboxInfo, error) {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	if req.N == 0 {
		req.N = 1
	}
	var out []sandboxWire
	if _, err := c.call(ctx, "create", http.MethodPost, "/v1/sandboxes", req, &out, maxSmallBody); err != nil {
		return nil, err
	}
	var boxes []SandboxInfo
	var bad error
	for _, w := range out {
		if !ValidID(w.ID) {
			bad = fmt.Errorf("forkd create: %w: sandbox id %q", ErrMalformedResponse, w.ID)
			continue
		}
		boxes = append(boxes, w.info())
	}
	if bad != nil {
		return boxes, bad
	}
	if len(out) != req.N {
		return boxes, fmt.Errorf("forkd create: %w: asked for %d sandboxes, got %d", ErrMalformedResponse, req.N, len(out))
	}
	return boxes, nil
}

// Get returns one sandbox: GET /v1/sandboxes/{id}. A sandbox the
// controller does not know is an error matching [ErrNotFound].
func (c *Client) Get(ctx context.Context, id string) (SandboxInfo, error) {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	var out sandboxWire
	if _, err := c.call(ctx, "get", http.MethodGet, "/v1/sandboxes/"+url.PathEscape(id), nil, &out, maxSmallBody); err != nil {
		return SandboxInfo{}, err
	}
	if out.ID != id {
		return SandboxInfo{}, fmt.Errorf("forkd get: %w: asked for sandbox %q, got %q", ErrMalformedResponse, id, out.ID)
	}
	return out.info(), nil
}

// ValidID reports whether id is one a controller plausibly issues: ids go
// into URL paths (escaped anyway) and into logs, so anything else in an
// answer is refused, and an adapter never sends a delete for it.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return false
		}
	}
	return id != "." && id != ".."
}

// Exec runs args in the sandbox: POST /v1/sandboxes/{id}/exec with
// {"args": args, "timeout_secs": n}, answered by {"stdout", "stderr",
// "exit_code"}. maxBody bounds the response ([MaxExecBody]). ctx bounds
// the call; it is the caller's job to give it more time than timeoutSecs
// ([ExecGrace]). A sandbox the
// controller does not know is an error matching [ErrNotFound].
func (c *Client) Exec(ctx context.Context, id string, args []string, timeoutSecs int, maxBody int64) (*ExecResult, error) {
	in := struct {
		Args        []string `json:"args"`
		TimeoutSecs int      `json:"timeout_secs"`
	}{args, timeoutSecs}
	var out struct {
		Stdout   *string `json:"stdout"`
		Stderr   *string `json:"stderr"`
		ExitCode *int    `json:"exit_code"`
	}
	if _, err := c.call(ctx, "exec", http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/exec", in, &out, maxBody); err != nil {
		return nil, err
	}
	if out.Stdout == nil || out.Stderr == nil || out.ExitCode == nil {
		return nil, fmt.Errorf("forkd exec: %w: want stdout, stderr and exit_code", ErrMalformedResponse)
	}
	return &ExecResult{Stdout: *out.Stdout, Stderr: *out.Stderr, ExitCode: *out.ExitCode}, nil
}

// TimedOut reports whether an exec answer is the guest agent's report of a
// command it killed at timeoutSecs. The controller's answer has no timeout
// flag: the agent answers a timeout as exit code 1 with empty output, so an
// answer of that shape that took at least timeoutSecs is taken for one. (A
// command that printed nothing and exited 1 just as the timeout fell would
// be misread; a command the agent could not start answers the same shape
// at once, and is not.)
func TimedOut(out *ExecResult, elapsed time.Duration, timeoutSecs int) bool {
	return out.ExitCode == 1 && out.Stdout == "" && out.Stderr == "" && elapsed >= time.Duration(timeoutSecs)*time.Second
}

// Delete destroys the sandbox: DELETE /v1/sandboxes/{id}, answered by 204.
// A 404 counts as already gone.
func (c *Client) Delete(ctx context.Context, id string) error {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	_, err := c.call(ctx, "delete", http.MethodDelete, "/v1/sandboxes/"+url.PathEscape(id), nil, nil, maxSmallBody, http.StatusNotFound)
	return err
}

// List returns the controller's sandboxes: GET /v1/sandboxes, answered by a
// JSON array of SandboxInfo. An entry whose created_at_unix is missing,
// not a number or not positive has a zero CreatedAt.
func (c *Client) List(ctx context.Context) ([]SandboxInfo, error) {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	var entries []sandboxWire
	if _, err := c.call(ctx, "list", http.MethodGet, "/v1/sandboxes", nil, &entries, maxListBody); err != nil {
		return nil, err
	}
	infos := make([]SandboxInfo, 0, len(entries))
	for _, e := range entries {
		infos = append(infos, e.info())
	}
	return infos, nil
}

// parseUnix reads a positive Unix time in seconds (an integer or a
// fraction); anything else yields the zero time.
func parseUnix(raw json.RawMessage) time.Time {
	if len(raw) == 0 || raw[0] == '"' || raw[0] == 'n' {
		return time.Time{}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 1 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1<<40 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9))
}
