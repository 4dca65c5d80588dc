// Package forkdfake is a fake forkd controller for tests. It follows the
// controller of github.com/deeplethe/forkd at commit
// e88c730b32fb980b6c0c9536d2a6e8012f855960 (v0.5.3 and two fixes), read
// from these files, field by field:
//
//   - docs/API.md: routes, status codes, SandboxInfo, ErrorBody;
//   - crates/forkd-controller/src/api.rs: CreateSandboxRequest,
//     SandboxInfo, ExecRequest, ExecResponse, CreateWorkspaceRequest,
//     WorkspaceInfo, WorkspaceStatus, ErrorBody (serde names, defaults,
//     optional and skipped fields);
//   - crates/forkd-controller/src/http.rs: the router and the handlers
//     create_sandbox, list_sandboxes, get_sandbox, delete_sandbox,
//     exec_sandbox, create_workspace, list_workspaces, get_workspace,
//     delete_workspace, and their validation (is_safe_tag, n in 1..=1000)
//     and error helpers (bad_request 400, not_found 404 "X not found",
//     conflict 409, server_error 500, all with {"error": "..."});
//   - crates/forkd-controller/src/auth.rs: "Authorization: Bearer TOKEN"
//     on every route but /healthz, 401 {"error": "missing bearer token"}
//     or {"error": "invalid bearer token"};
//   - crates/forkd-controller/src/state.rs: lists are sorted by key (a
//     BTreeMap: sandbox id, workspace name);
//   - crates/forkd-vmm/src/lib.rs (exec_at, ExecResponse) and
//     rootfs-init/forkd-agent.py (the guest agent): an exec runs
//     subprocess.run(args, capture_output=True, timeout=timeout_secs) in
//     the guest; output is decoded as UTF-8 with replacement; a timeout
//     kills the direct child only and is answered, through the
//     controller, as {"stdout": "", "stderr": "", "exit_code": 1} (the
//     agent's "error" field is dropped by the controller), as is a program
//     that cannot be started; a child killed by signal N has exit code -N.
//
// Request bodies are decoded as axum 0.7's Json extractor does: a body
// larger than 2 MB (its DefaultBodyLimit) is 413, a body that is not JSON
// is 400, JSON of the wrong shape (a missing required field, a
// wrong type) is 422, both with a plain-text message; a request without
// "Content-Type: application/json" is 415. Unknown fields are ignored, as
// serde does by default.
//
// Where it departs from a real controller, because there is no KVM here:
// each sandbox is a directory on this machine, not a microVM. An exec runs
// as a real local process whose working directory is the sandbox's
// directory (so files written by one exec are there for the next, within
// one sandbox only), with PATH as its only environment variable. Absolute
// paths reach this machine's file system; tests must use relative paths
// (workspace/forkd's tests give their engine a relative root, which lands
// in the directory of the workspace's live sandbox).
// Deleting a sandbox kills the process groups of its execs and removes its
// directory. Snapshots are registered with [Controller.AddSnapshot] (the
// snapshot routes are not served); a workspace's resume, and the eval,
// ping and branch routes, are not served. A workspace's suspend is served
// (suspend_workspace in http.rs, without the snapshot: the live sandbox is
// destroyed with its directory), so that tests can put a workspace in the
// state another client of the controller would leave it in, and
// [Controller.Restart] stands in for a controller that restarted after its
// microVMs died.
//
// It also injects faults per endpoint (failures, delays, malformed
// answers) and serves TLS with a private CA. It is test infrastructure: it
// contains nothing and must never be used to run untrusted commands.
package forkdfake

import (
	"bytes"
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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Endpoints, as used in the behaviour maps.
const (
	Create          = "create"           // POST /v1/sandboxes
	List            = "list"             // GET /v1/sandboxes
	Get             = "get"              // GET /v1/sandboxes/{id}
	Exec            = "exec"             // POST /v1/sandboxes/{id}/exec
	Delete          = "delete"           // DELETE /v1/sandboxes/{id}
	CreateWorkspace = "create-workspace" // POST /v1/workspaces
	ListWorkspaces  = "list-workspaces"  // GET /v1/workspaces
	GetWorkspace    = "get-workspace"    // GET /v1/workspaces/{name}
	DeleteWorkspace = "delete-workspace" // DELETE /v1/workspaces/{name}
	Suspend         = "suspend"          // POST /v1/workspaces/{name}/suspend
)

// Call is one request the controller received.
type Call struct {
	Endpoint string // one of the endpoint constants
	Method   string // the HTTP method
	Path     string // the URL path, such as /v1/sandboxes/ID/exec
	Auth     string // the Authorization header as received
	Body     []byte // the request body
}

// SandboxInfo is the controller's SandboxInfo (api.rs), as it serializes
// it: every field present, Options as null.
type SandboxInfo struct {
	ID                   string  `json:"id"`
	SnapshotTag          string  `json:"snapshot_tag"`
	Netns                *string `json:"netns"`
	GuestAddr            string  `json:"guest_addr"`
	CreatedAtUnix        uint64  `json:"created_at_unix"`
	PID                  *uint32 `json:"pid"`
	MemoryLimitMiB       *uint64 `json:"memory_limit_mib"`
	HasBranched          bool    `json:"has_branched"`
	LastBranchMemoryPath *string `json:"last_branch_memory_path"`
	BranchCount          uint32  `json:"branch_count"`
}

// WorkspaceInfo is the controller's WorkspaceInfo (api.rs). Status is
// "running", "suspended" or "stale".
type WorkspaceInfo struct {
	ID                   string  `json:"id"`
	Name                 string  `json:"name"`
	SourceSnapshotTag    string  `json:"source_snapshot_tag"`
	CurrentStateTag      *string `json:"current_state_tag,omitempty"`
	Status               string  `json:"status"`
	LiveSandboxID        *string `json:"live_sandbox_id,omitempty"`
	CreatedAtUnix        uint64  `json:"created_at_unix"`
	LastActiveUnix       uint64  `json:"last_active_unix"`
	LastBranchMemoryPath *string `json:"last_branch_memory_path,omitempty"`
}

// ExecResponse is the controller's ExecResponse (api.rs).
type ExecResponse struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int64  `json:"exit_code"`
}

// Controller is a fake forkd controller. Set the behaviour fields before
// serving or with Set.
type Controller struct {
	// Token is the bearer token it requires; empty means none (a controller
	// started without --token-file).
	Token string

	mu sync.Mutex
	// Fail makes an endpoint answer with this status.
	Fail map[string]int
	// FailBody is the body of failing answers; "$AUTH" is replaced by the
	// request's Authorization header (a controller that echoes secrets).
	FailBody string
	// Malformed makes an endpoint answer its success status with this body.
	Malformed map[string]string
	// Delay makes an endpoint wait before answering (honouring the client
	// going away).
	Delay map[string]time.Duration
	// FailDeleteIDs makes deletes of these sandbox ids or workspace names
	// fail with 500.
	FailDeleteIDs map[string]bool
	// CreateCommitsThenFails keeps the created sandboxes or workspace but
	// answers 500: the leak reconciling exists for.
	CreateCommitsThenFails bool
	// ExtraOnCreate adds this many unrequested sandboxes to a create answer.
	ExtraOnCreate int
	// OnCall, when set, is called with the endpoint of every request as it
	// arrives (to cancel a client at a known point, for instance).
	OnCall func(endpoint string)
	// Now is the clock for created_at_unix; nil means time.Now.
	Now func() time.Time

	calls      []Call
	snapshots  map[string]string // tag -> "" when bootable, else why not
	sandboxes  map[string]*sandbox
	workspaces map[string]*WorkspaceInfo
	seq        uint32
	dir        string // holds one directory per sandbox; made on first use
}

type sandbox struct {
	info  SandboxInfo
	dir   string
	pgids map[int]bool // process groups of execs that were started
}

// New returns a controller requiring token, with no snapshots.
func New(token string) *Controller {
	return &Controller{Token: token, snapshots: map[string]string{}, sandboxes: map[string]*sandbox{}, workspaces: map[string]*WorkspaceInfo{}}
}

// AddSnapshot registers snapshot tags that sandboxes can be forked from.
func (c *Controller) AddSnapshot(tags ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tags {
		c.snapshots[t] = ""
	}
}

// AddUnbootableSnapshot registers a snapshot tag whose artifacts are
// incomplete: forking from it answers 409 naming reason (such as
// "missing memory.bin").
func (c *Controller) AddUnbootableSnapshot(tag, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshots[tag] = reason
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
	return slices.Clone(c.calls)
}

// Endpoints returns the endpoints of the calls served so far, in order and
// comma-separated ("create,exec,delete"), as tests compare them.
func (c *Controller) Endpoints() string {
	var s []string
	for _, call := range c.Calls() {
		s = append(s, call.Endpoint)
	}
	return strings.Join(s, ",")
}

// Live returns the ids of the sandboxes that exist, sorted.
func (c *Controller) Live() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.sandboxes))
	for id := range c.sandboxes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Workspaces returns the names of the workspaces that exist, sorted.
func (c *Controller) Workspaces() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.workspaces))
	for n := range c.workspaces {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Dir returns the directory that stands in for sandbox id's microVM, or ""
// when there is no such sandbox.
func (c *Controller) Dir(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sb, ok := c.sandboxes[id]; ok {
		return sb.dir
	}
	return ""
}

// Add inserts a sandbox directly, as one the controller forked earlier (for
// reconcile tests). Its directory is made on first exec.
func (c *Controller) Add(info SandboxInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sandboxes[info.ID] = &sandbox{info: info, pgids: map[int]bool{}}
}

// AddWorkspace inserts a workspace directly (for reap tests). When it is
// running, its live sandbox is added too.
func (c *Controller) AddWorkspace(ws WorkspaceInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.workspaces[ws.Name] = &ws
	if ws.LiveSandboxID != nil {
		c.sandboxes[*ws.LiveSandboxID] = &sandbox{info: SandboxInfo{ID: *ws.LiveSandboxID, SnapshotTag: ws.SourceSnapshotTag, GuestAddr: guestAddr, CreatedAtUnix: ws.CreatedAtUnix}, pgids: map[int]bool{}}
	}
}

// netnsOffset is http.rs's pick_netns_offset: the smallest offset such
// that forkd-child-(offset+1) to forkd-child-(offset+n) are not the
// namespace of a live sandbox. Called with c.mu held.
func (c *Controller) netnsOffset(n int) int {
	used := map[int]bool{}
	for _, sb := range c.sandboxes {
		if sb.info.Netns != nil {
			var k int
			if _, err := fmt.Sscanf(*sb.info.Netns, "forkd-child-%d", &k); err == nil {
				used[k] = true
			}
		}
	}
	for offset := 0; ; offset++ {
		clash := false
		for i := offset + 1; i < offset+n+1; i++ {
			clash = clash || used[i]
		}
		if !clash {
			return offset
		}
	}
}

// setNetns places sandbox id in namespace forkd-child-k and returns its
// info. Called with c.mu held.
func (c *Controller) setNetns(id string, k int) SandboxInfo {
	ns := fmt.Sprintf("forkd-child-%d", k)
	c.sandboxes[id].info.Netns = &ns
	return c.sandboxes[id].info
}

// guestAddr is what the controller reports for every child: "all children
// share the parent snapshot's MAC/IP" (http.rs, create_sandbox).
const guestAddr = "10.42.0.2:8888"

// Handler returns the API handler.
func (c *Controller) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) })
	mux.HandleFunc("POST /v1/sandboxes", c.wrap(Create, c.create))
	mux.HandleFunc("GET /v1/sandboxes", c.wrap(List, c.list))
	mux.HandleFunc("GET /v1/sandboxes/{id}", c.wrap(Get, c.get))
	mux.HandleFunc("DELETE /v1/sandboxes/{id}", c.wrap(Delete, c.delete))
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", c.wrap(Exec, c.exec))
	mux.HandleFunc("POST /v1/workspaces", c.wrap(CreateWorkspace, c.createWorkspace))
	mux.HandleFunc("GET /v1/workspaces", c.wrap(ListWorkspaces, c.listWorkspaces))
	mux.HandleFunc("GET /v1/workspaces/{name}", c.wrap(GetWorkspace, c.getWorkspace))
	mux.HandleFunc("DELETE /v1/workspaces/{name}", c.wrap(DeleteWorkspace, c.deleteWorkspace))
	mux.HandleFunc("POST /v1/workspaces/{name}/suspend", c.wrap(Suspend, c.suspendWorkspace))
	return mux
}

func (c *Controller) wrap(endpoint string, h func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		c.mu.Lock()
		c.calls = append(c.calls, Call{endpoint, r.Method, r.URL.Path, r.Header.Get("Authorization"), body})
		delay, status, failBody, onCall := c.Delay[endpoint], c.Fail[endpoint], c.FailBody, c.OnCall
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
		if c.Token != "" {
			presented := strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				presented = ""
			}
			switch {
			case presented == "":
				writeError(w, http.StatusUnauthorized, "missing bearer token")
				return
			case presented != c.Token:
				writeError(w, http.StatusUnauthorized, "invalid bearer token")
				return
			}
		}
		if status != 0 {
			if failBody == "" {
				failBody = `{"error":"injected failure"}`
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, strings.ReplaceAll(failBody, "$AUTH", r.Header.Get("Authorization")))
			return
		}
		h(w, r, body)
	}
}

// malformed answers with the injected body for endpoint, if any.
func (c *Controller) malformed(w http.ResponseWriter, endpoint string, status int) bool {
	c.mu.Lock()
	bad := c.Malformed[endpoint]
	c.mu.Unlock()
	if bad == "" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, bad)
	return true
}

// maxBody is axum 0.7's DefaultBodyLimit, which the Json extractor
// applies and the controller does not raise (no DefaultBodyLimit layer in
// http.rs or lib.rs): 2 MB.
const maxBody = 2 << 20

// decodeJSON reads a request body as axum's Json extractor does, writing
// the rejection and returning false when it fails.
func decodeJSON(w http.ResponseWriter, r *http.Request, body []byte, v any) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(mt) != "application/json" {
		writeText(w, http.StatusUnsupportedMediaType, "Expected request with `Content-Type: application/json`")
		return false
	}
	if len(body) > maxBody {
		writeText(w, http.StatusRequestEntityTooLarge, "Failed to buffer the request body: length limit exceeded")
		return false
	}
	if !json.Valid(body) {
		writeText(w, http.StatusBadRequest, "Failed to parse the request body as JSON")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error())
		return false
	}
	return true
}

// isSafeTag is http.rs's is_safe_tag: 1-64 ASCII alphanumerics, '-', '_'.
func isSafeTag(tag string) bool {
	if tag == "" || len(tag) > 64 {
		return false
	}
	for _, r := range tag {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (c *Controller) now() uint64 {
	if c.Now != nil {
		return uint64(c.Now().Unix())
	}
	return uint64(time.Now().Unix())
}

// newID is http.rs's new_sandbox_id: "sb-{unix seconds:x}-{seq:04x}".
// Called with c.mu held.
func (c *Controller) newID() string {
	id := fmt.Sprintf("sb-%x-%04x", c.now(), c.seq)
	c.seq++
	return id
}

// newSandbox records a sandbox forked from tag. Called with c.mu held.
func (c *Controller) newSandbox(tag string, memLimit *uint64) SandboxInfo {
	pid := uint32(os.Getpid())
	info := SandboxInfo{ID: c.newID(), SnapshotTag: tag, GuestAddr: guestAddr, CreatedAtUnix: c.now(), PID: &pid, MemoryLimitMiB: memLimit}
	c.sandboxes[info.ID] = &sandbox{info: info, pgids: map[int]bool{}}
	return info
}

func (c *Controller) create(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		SnapshotTag    *string `json:"snapshot_tag"`
		N              *uint64 `json:"n"`
		PerChildNetns  bool    `json:"per_child_netns"`
		MemoryLimitMiB *uint64 `json:"memory_limit_mib"`
		Prewarm        bool    `json:"prewarm"`
		LiveFork       bool    `json:"live_fork"`
		Hugepages      bool    `json:"hugepages"`
	}
	if !decodeJSON(w, r, body, &req) {
		return
	}
	if req.SnapshotTag == nil {
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `snapshot_tag`")
		return
	}
	n := uint64(1)
	if req.N != nil {
		n = *req.N
	}
	switch {
	case n == 0:
		writeError(w, http.StatusBadRequest, "n must be ≥ 1")
		return
	case n > 1000:
		writeError(w, http.StatusBadRequest, "n must be ≤ 1000 (sanity cap)")
		return
	case !isSafeTag(*req.SnapshotTag):
		writeError(w, http.StatusBadRequest, "snapshot_tag must be 1-64 chars, ASCII alnum or dash/underscore")
		return
	}
	c.mu.Lock()
	unbootable, known := c.snapshots[*req.SnapshotTag]
	if !known {
		c.mu.Unlock()
		writeError(w, http.StatusNotFound, "snapshot "+*req.SnapshotTag+" not found")
		return
	}
	if unbootable != "" {
		c.mu.Unlock()
		writeError(w, http.StatusConflict, fmt.Sprintf("snapshot `%s` is not bootable: %s", *req.SnapshotTag, unbootable))
		return
	}
	infos := []SandboxInfo{}
	offset := 0
	if req.PerChildNetns {
		offset = c.netnsOffset(int(n) + c.ExtraOnCreate)
	}
	for i := range int(n) + c.ExtraOnCreate {
		info := c.newSandbox(*req.SnapshotTag, req.MemoryLimitMiB)
		if req.PerChildNetns {
			info = c.setNetns(info.ID, offset+i+1)
		}
		infos = append(infos, info)
	}
	commitThenFail := c.CreateCommitsThenFails
	c.mu.Unlock()
	c.answerCreated(w, Create, commitThenFail, "restore_many", infos)
}

// answerCreated answers a create that committed: 201 with v, or 500 when
// the controller is to fail after committing (at the step named).
func (c *Controller) answerCreated(w http.ResponseWriter, endpoint string, commitThenFail bool, step string, v any) {
	if commitThenFail {
		writeError(w, http.StatusInternalServerError, step+": injected failure after commit")
		return
	}
	if c.malformed(w, endpoint, http.StatusCreated) {
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

func (c *Controller) list(w http.ResponseWriter, _ *http.Request, _ []byte) {
	if c.malformed(w, List, http.StatusOK) {
		return
	}
	c.mu.Lock()
	out := make([]SandboxInfo, 0, len(c.sandboxes))
	for _, sb := range c.sandboxes {
		out = append(out, sb.info)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b SandboxInfo) int { return strings.Compare(a.ID, b.ID) })
	writeJSON(w, http.StatusOK, out)
}

func (c *Controller) get(w http.ResponseWriter, r *http.Request, _ []byte) {
	id := r.PathValue("id")
	c.mu.Lock()
	sb, ok := c.sandboxes[id]
	var info SandboxInfo
	if ok {
		info = sb.info
	}
	c.mu.Unlock()
	c.answerGet(w, Get, ok, "sandbox "+id, info)
}

// answerGet answers a GET of one thing: 404 "WHAT not found" when it does
// not exist, v otherwise.
func (c *Controller) answerGet(w http.ResponseWriter, endpoint string, ok bool, what string, v any) {
	if !ok {
		writeError(w, http.StatusNotFound, what+" not found")
		return
	}
	if c.malformed(w, endpoint, http.StatusOK) {
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (c *Controller) delete(w http.ResponseWriter, r *http.Request, _ []byte) {
	id := r.PathValue("id")
	c.mu.Lock()
	if c.FailDeleteIDs[id] {
		c.mu.Unlock()
		writeError(w, http.StatusInternalServerError, "registry remove: injected failure")
		return
	}
	sb, ok := c.sandboxes[id]
	delete(c.sandboxes, id)
	c.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "sandbox "+id+" not found")
		return
	}
	sb.destroy()
	w.WriteHeader(http.StatusNoContent)
}

// destroy stands in for dropping the Vm: every process of the sandbox dies
// and its disk is gone.
func (sb *sandbox) destroy() {
	for pgid := range sb.pgids {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if sb.dir != "" {
		os.RemoveAll(sb.dir)
	}
}

// sandboxDir returns the directory of sandbox id, making it on first use.
func (c *Controller) sandboxDir(id string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sb, ok := c.sandboxes[id]
	if !ok {
		return "", errNotFound
	}
	if sb.dir != "" {
		return sb.dir, nil
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "forkdfake-")
		if err != nil {
			return "", err
		}
		c.dir = d
	}
	sb.dir = filepath.Join(c.dir, id)
	return sb.dir, os.Mkdir(sb.dir, 0o755)
}

var errNotFound = errors.New("not found")

func (c *Controller) exec(w http.ResponseWriter, r *http.Request, body []byte) {
	id := r.PathValue("id")
	c.mu.Lock()
	_, ok := c.sandboxes[id]
	c.mu.Unlock()
	// exec_sandbox looks the sandbox up before the Json extractor's result
	// is used; axum runs the extractor first, so a bad body is rejected
	// before the 404.
	var req struct {
		Args        *[]string `json:"args"`
		TimeoutSecs *uint64   `json:"timeout_secs"`
	}
	if !decodeJSON(w, r, body, &req) {
		return
	}
	if req.Args == nil {
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `args`")
		return
	}
	if !ok {
		writeError(w, http.StatusNotFound, "sandbox "+id+" not found")
		return
	}
	if len(*req.Args) == 0 {
		writeError(w, http.StatusBadRequest, "args must contain at least one element")
		return
	}
	timeout := uint64(30) // default_exec_timeout
	if req.TimeoutSecs != nil {
		timeout = *req.TimeoutSecs
	}
	dir, err := c.sandboxDir(id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "exec: "+err.Error())
		return
	}
	out := c.run(id, dir, *req.Args, time.Duration(min(timeout, 1<<32))*time.Second)
	if c.malformed(w, Exec, http.StatusOK) {
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// run does what the guest agent does for an exec action. It does not stop
// when the client goes away: neither does the controller's blocking task.
func (c *Controller) run(id, dir string, args []string, timeout time.Duration) ExecResponse {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	// Its own process group, so that deleting the sandbox can kill what it
	// left running; the timeout kills the direct child only, as
	// subprocess.run does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// subprocess.run waits for the child, not for grandchildren holding its
	// pipes, after a timeout.
	cmd.WaitDelay = 100 * time.Millisecond
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return ExecResponse{ExitCode: 1} // FileNotFoundError in the agent
	}
	c.mu.Lock()
	if sb, ok := c.sandboxes[id]; ok {
		sb.pgids[cmd.Process.Pid] = true
	}
	c.mu.Unlock()
	err := cmd.Wait()
	if ctx.Err() != nil {
		return ExecResponse{ExitCode: 1} // TimeoutExpired in the agent
	}
	out := ExecResponse{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.ExitCode = -int64(ws.Signal())
		} else {
			out.ExitCode = int64(ee.ExitCode())
		}
	} else if err != nil {
		out.ExitCode = 1
	}
	return out
}

// limitedBuffer keeps the first 64 MiB of output.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<20 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// String decodes the output as the agent does (bytes.decode("utf-8",
// "replace")).
func (l *limitedBuffer) String() string { return string(bytes.ToValidUTF8(l.b, []byte("\uFFFD"))) }

func (c *Controller) createWorkspace(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name           *string `json:"name"`
		SnapshotTag    *string `json:"snapshot_tag"`
		PerChildNetns  bool    `json:"per_child_netns"`
		MemoryLimitMiB *uint64 `json:"memory_limit_mib"`
	}
	if !decodeJSON(w, r, body, &req) {
		return
	}
	switch {
	case req.Name == nil:
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `name`")
		return
	case req.SnapshotTag == nil:
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `snapshot_tag`")
		return
	case !isSafeTag(*req.Name):
		writeError(w, http.StatusBadRequest, "workspace name must be 1-64 chars, ASCII alnum or dash/underscore")
		return
	case !isSafeTag(*req.SnapshotTag):
		writeError(w, http.StatusBadRequest, "snapshot_tag must be 1-64 chars, ASCII alnum or dash/underscore")
		return
	}
	c.mu.Lock()
	if _, ok := c.workspaces[*req.Name]; ok {
		c.mu.Unlock()
		writeError(w, http.StatusConflict, fmt.Sprintf("workspace %s already exists; DELETE first", *req.Name))
		return
	}
	if unbootable, known := c.snapshots[*req.SnapshotTag]; !known || unbootable != "" {
		c.mu.Unlock()
		// spawn_one_for_workspace bails (it checks only that vmstate
		// exists, then restore fails), and create_workspace answers 500.
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("spawn workspace sandbox: snapshot %s not found", *req.SnapshotTag))
		return
	}
	info := c.newSandbox(*req.SnapshotTag, req.MemoryLimitMiB)
	if req.PerChildNetns {
		// spawn_one_for_workspace: one child at pick_netns_offset.
		info = c.setNetns(info.ID, c.netnsOffset(1)+1)
	}
	now := c.now()
	ws := &WorkspaceInfo{
		ID:                "ws-" + info.ID[:min(len(info.ID), 16)],
		Name:              *req.Name,
		SourceSnapshotTag: *req.SnapshotTag,
		Status:            "running",
		LiveSandboxID:     &info.ID,
		CreatedAtUnix:     now,
		LastActiveUnix:    now,
	}
	c.workspaces[ws.Name] = ws
	out, commitThenFail := *ws, c.CreateCommitsThenFails
	c.mu.Unlock()
	c.answerCreated(w, CreateWorkspace, commitThenFail, "persist workspace", out)
}

func (c *Controller) listWorkspaces(w http.ResponseWriter, _ *http.Request, _ []byte) {
	if c.malformed(w, ListWorkspaces, http.StatusOK) {
		return
	}
	c.mu.Lock()
	out := make([]WorkspaceInfo, 0, len(c.workspaces))
	for _, ws := range c.workspaces {
		out = append(out, *ws)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b WorkspaceInfo) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
}

func (c *Controller) getWorkspace(w http.ResponseWriter, r *http.Request, _ []byte) {
	name := r.PathValue("name")
	c.mu.Lock()
	ws, ok := c.workspaces[name]
	var out WorkspaceInfo
	if ok {
		out = *ws
	}
	c.mu.Unlock()
	c.answerGet(w, GetWorkspace, ok, "workspace "+name, out)
}

// deleteWorkspace kills the live sandbox and forgets the workspace; a
// failure to remove the sandbox from the registry is ignored, as in
// delete_workspace.
func (c *Controller) deleteWorkspace(w http.ResponseWriter, r *http.Request, _ []byte) {
	name := r.PathValue("name")
	c.mu.Lock()
	if c.FailDeleteIDs[name] {
		c.mu.Unlock()
		writeError(w, http.StatusInternalServerError, "injected failure")
		return
	}
	ws, ok := c.workspaces[name]
	if !ok {
		c.mu.Unlock()
		writeError(w, http.StatusNotFound, "workspace "+name+" not found")
		return
	}
	var sb *sandbox
	if ws.LiveSandboxID != nil {
		sb = c.sandboxes[*ws.LiveSandboxID]
		delete(c.sandboxes, *ws.LiveSandboxID)
	}
	delete(c.workspaces, name)
	c.mu.Unlock()
	if sb != nil {
		sb.destroy()
	}
	w.WriteHeader(http.StatusNoContent)
}

// suspendWorkspace is suspend_workspace (http.rs) without the snapshot: a
// workspace that is not running is 400, a name the controller does not
// know 404; the live sandbox is destroyed and the workspace is suspended
// with the state tag the controller derives ("ws-NAME-state", 500 when
// that is not a safe tag).
func (c *Controller) suspendWorkspace(w http.ResponseWriter, r *http.Request, body []byte) {
	name := r.PathValue("name")
	var req struct {
		Diff bool `json:"diff"`
	}
	if !decodeJSON(w, r, body, &req) {
		return
	}
	c.mu.Lock()
	ws, ok := c.workspaces[name]
	if !ok {
		c.mu.Unlock()
		writeError(w, http.StatusNotFound, "workspace "+name+" not found")
		return
	}
	if ws.Status != "running" {
		c.mu.Unlock()
		// {:?} of WorkspaceStatus: the variant's name.
		writeError(w, http.StatusBadRequest, fmt.Sprintf("workspace %s is %s, not Running — suspend requires a live sandbox", name, strings.ToUpper(ws.Status[:1])+ws.Status[1:]))
		return
	}
	stateTag := "ws-" + name + "-state"
	if !isSafeTag(stateTag) {
		c.mu.Unlock()
		writeError(w, http.StatusInternalServerError, "derived state tag failed validation (workspace name pathological?)")
		return
	}
	sbID := *ws.LiveSandboxID
	sb, ok := c.sandboxes[sbID]
	if !ok {
		c.mu.Unlock()
		writeError(w, http.StatusNotFound, "workspace's live sandbox "+sbID+" is gone")
		return
	}
	delete(c.sandboxes, sbID)
	memPath := "/var/lib/forkd/snapshots/" + stateTag + "/memory.bin"
	ws.Status, ws.LiveSandboxID, ws.CurrentStateTag = "suspended", nil, &stateTag
	ws.LastActiveUnix, ws.LastBranchMemoryPath = c.now(), &memPath
	out := *ws
	c.mu.Unlock()
	sb.destroy()
	writeJSON(w, http.StatusOK, out)
}

// Restart stands in for a controller that restarted after its microVMs
// died (a crash of the host, say): Registry::reconcile (state.rs) prunes
// every sandbox whose Firecracker process is dead, here all of them, and
// marks every running workspace whose live sandbox is gone as stale, with
// no live sandbox.
func (c *Controller) Restart() {
	c.mu.Lock()
	boxes := c.sandboxes
	c.sandboxes = map[string]*sandbox{}
	for _, ws := range c.workspaces {
		if ws.Status == "running" {
			ws.Status, ws.LiveSandboxID = "stale", nil
		}
	}
	c.mu.Unlock()
	for _, sb := range boxes {
		sb.destroy()
	}
}

// writeJSON answers as axum's Json does: application/json, compact, UTF-8
// unescaped (serde_json does not escape <, > or &).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// writeError answers with the controller's ErrorBody.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// writeText answers with a plain-text rejection, as axum's extractors do.
func writeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

// shutdown kills what every sandbox left running and removes their
// directories.
func (c *Controller) shutdown() {
	c.mu.Lock()
	boxes := c.sandboxes
	c.sandboxes = map[string]*sandbox{}
	c.workspaces = map[string]*WorkspaceInfo{}
	dir := c.dir
	c.mu.Unlock()
	for _, sb := range boxes {
		sb.destroy()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Server is a running fake controller.
type Server struct {
	*httptest.Server
	// CAPEM is the private CA that signed the server's certificate (TLS
	// servers only).
	CAPEM []byte
	ctl   *Controller
}

// Close stops the server, kills what the sandboxes left running and removes
// their directories.
func (s *Server) Close() {
	s.Server.Close()
	s.ctl.shutdown()
}

// Start serves c over plain HTTP on loopback.
func (c *Controller) Start() *Server {
	return &Server{Server: httptest.NewServer(c.Handler()), ctl: c}
}

// NewTLS returns a controller requiring token that knows the snapshots
// tags, served over TLS ([Controller.StartTLS]) until t ends: the start of
// most client tests.
func NewTLS(t testing.TB, token string, tags ...string) (*Controller, *Server) {
	t.Helper()
	c := New(token)
	c.AddSnapshot(tags...)
	srv, err := c.StartTLS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return c, srv
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
	return &Server{Server: srv, CAPEM: caPEM, ctl: c}, nil
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
