// Package forkdfake is a fake forkd controller for tests: it speaks the
// REST API of package backend/forkd, runs exec requests as real local
// processes (there is no KVM here), and can be made slow, failing or
// malformed per endpoint, and served over TLS with a private CA.
//
// It is test infrastructure: it contains nothing and must never be used to
// run untrusted commands.
package forkdfake

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Endpoints, as used in the behaviour maps.
const (
	Create = "create"
	Exec   = "exec"
	Delete = "delete"
	List   = "list"
)

// Call is one request the controller received.
type Call struct {
	Endpoint string // Create, Exec, Delete or List
	Method   string // the HTTP method
	Path     string // the URL path, such as /v1/sandboxes/ID/exec
	Auth     string // the Authorization header as received
}

// Entry is one sandbox the controller holds. CreatedAt is the raw JSON of
// created_at_unix (a number, or anything else to test unageable entries).
type Entry struct {
	ID          string          `json:"id"`           // the sandbox id
	SnapshotTag string          `json:"snapshot_tag"` // the snapshot it was forked from
	CreatedAt   json.RawMessage `json:"created_at_unix,omitempty"`
}

// Controller is a fake forkd controller. Set the behaviour fields before
// serving or under Lock/Unlock.
type Controller struct {
	// Token is the bearer token it requires.
	Token string

	mu sync.Mutex
	// Fail makes an endpoint answer with this status.
	Fail map[string]int
	// FailBody is the body of failing answers; "$AUTH" is replaced by the
	// request's Authorization header (a controller that echoes secrets).
	FailBody string
	// Malformed makes an endpoint answer 200 with a body that is not the
	// expected JSON.
	Malformed map[string]string
	// Delay makes an endpoint wait before answering (honouring the
	// client going away).
	Delay map[string]time.Duration
	// FailDeleteIDs makes deletes of these ids fail with 500.
	FailDeleteIDs map[string]bool
	// CreateCommitsThenFails keeps the sandbox but answers create with 500:
	// the leak Reconcile exists for.
	CreateCommitsThenFails bool
	// ExtraOnCreate adds this many unrequested sandboxes to a create answer.
	ExtraOnCreate int
	// OnCall, when set, is called with the endpoint of every request as it
	// arrives (to cancel a client at a known point, for instance).
	OnCall func(endpoint string)

	calls     []Call
	sandboxes map[string]*Entry
	order     []string
	next      int
}

// New returns a controller requiring token.
func New(token string) *Controller {
	return &Controller{Token: token, sandboxes: map[string]*Entry{}}
}

// Set changes behaviour safely while serving.
func (c *Controller) Set(f func(c *Controller)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// Calls returns the requests received so far.
func (c *Controller) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.calls...)
}

// Live returns the ids of the sandboxes that exist.
func (c *Controller) Live() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, id := range c.order {
		if _, ok := c.sandboxes[id]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// Add inserts a sandbox directly (for reconcile tests).
func (c *Controller) Add(e Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sandboxes[e.ID] = &e
	c.order = append(c.order, e.ID)
}

// Handler returns the API handler.
func (c *Controller) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes", c.wrap(Create, c.create))
	mux.HandleFunc("GET /v1/sandboxes", c.wrap(List, c.list))
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", c.wrap(Exec, c.exec))
	mux.HandleFunc("DELETE /v1/sandboxes/{id}", c.wrap(Delete, c.delete))
	return mux
}

func (c *Controller) wrap(endpoint string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.calls = append(c.calls, Call{endpoint, r.Method, r.URL.Path, r.Header.Get("Authorization")})
		delay, status, body, bad, onCall := c.Delay[endpoint], c.Fail[endpoint], c.FailBody, c.Malformed[endpoint], c.OnCall
		c.mu.Unlock()
		if onCall != nil {
			onCall(endpoint)
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if r.Header.Get("Authorization") != "Bearer "+c.Token {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		if status != 0 {
			if body == "" {
				body = `{"error":"injected failure"}`
			}
			body = strings.ReplaceAll(body, "$AUTH", r.Header.Get("Authorization"))
			http.Error(w, body, status)
			return
		}
		if bad != "" && endpoint != Create {
			w.Write([]byte(bad))
			return
		}
		h(w, r)
	}
}

func (c *Controller) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SnapshotTag string `json:"snapshot_tag"`
		N           int    `json:"n"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SnapshotTag == "" || in.N < 1 || in.N > 64 {
		http.Error(w, `{"error":"want {snapshot_tag, n}"}`, http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	var out struct {
		Sandboxes []map[string]string `json:"sandboxes"`
	}
	for range in.N + c.ExtraOnCreate {
		c.next++
		id := "sb-" + strconv.Itoa(c.next)
		c.sandboxes[id] = &Entry{ID: id, SnapshotTag: in.SnapshotTag, CreatedAt: json.RawMessage(strconv.FormatInt(time.Now().Unix(), 10))}
		c.order = append(c.order, id)
		out.Sandboxes = append(out.Sandboxes, map[string]string{"id": id})
	}
	commitThenFail, bad := c.CreateCommitsThenFails, c.Malformed[Create]
	c.mu.Unlock()
	if commitThenFail {
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	}
	if bad != "" {
		w.Write([]byte(bad))
		return
	}
	writeJSON(w, out)
}

func (c *Controller) list(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	out := []*Entry{}
	for _, id := range c.order {
		if e, ok := c.sandboxes[id]; ok {
			out = append(out, e)
		}
	}
	b, _ := json.Marshal(out)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (c *Controller) exec(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c.mu.Lock()
	_, ok := c.sandboxes[id]
	c.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":"no such sandbox"}`, http.StatusNotFound)
		return
	}
	var in struct {
		Args        []string `json:"args"`
		TimeoutSecs int      `json:"timeout_secs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in.Args) == 0 || in.TimeoutSecs < 1 {
		http.Error(w, `{"error":"want {args, timeout_secs}"}`, http.StatusBadRequest)
		return
	}
	// A real process stands in for the microVM.
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(in.TimeoutSecs)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.Args[0], in.Args[1:]...)
	cmd.WaitDelay = time.Second
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := struct {
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		ExitCode *int   `json:"exit_code"`
		TimedOut bool   `json:"timed_out,omitempty"`
	}{Stdout: string(stdout.b), Stderr: string(stderr.b)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		out.TimedOut = true
	case err == nil:
		out.ExitCode = new(int)
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		code := ee.ExitCode()
		out.ExitCode = &code
	case errors.As(err, &ee):
	default:
		code := 127
		out.ExitCode = &code
		out.Stderr += err.Error()
	}
	writeJSON(w, out)
}

// limitedBuffer keeps the first 64 MiB of output.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<20 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *Controller) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.FailDeleteIDs[id] {
		http.Error(w, `{"error":"delete failed"}`, http.StatusInternalServerError)
		return
	}
	if _, ok := c.sandboxes[id]; !ok {
		http.Error(w, `{"error":"no such sandbox"}`, http.StatusNotFound)
		return
	}
	delete(c.sandboxes, id)
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Server is a running fake controller.
type Server struct {
	*httptest.Server
	// CAPEM is the private CA that signed the server's certificate (TLS
	// servers only).
	CAPEM []byte
}

// Start serves c over plain HTTP on loopback.
func (c *Controller) Start() *Server {
	return &Server{Server: httptest.NewServer(c.Handler())}
}

// StartTLS serves c over TLS on loopback with a certificate for 127.0.0.1
// and localhost signed by a fresh private CA.
func (c *Controller) StartTLS() (*Server, error) {
	caPEM, cert, err := NewCA("forkdfake test CA", "127.0.0.1", "localhost")
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(c.Handler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	// Handshake failures are what the client tests provoke; keep them quiet.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return &Server{Server: srv, CAPEM: caPEM}, nil
}

// NewCA creates a private CA and a server certificate it signed for hosts
// (IP addresses or DNS names). It returns the CA certificate as PEM.
func NewCA(name string, hosts ...string) ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return caPEM, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}, nil
}

// String describes the controller (never its token).
func (c *Controller) String() string {
	return fmt.Sprintf("forkdfake controller (%d sandboxes)", len(c.Live()))
}
