package forkd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/microvm"
	"github.com/paigasus/helikon/internal/forkdapi"
	"github.com/paigasus/helikon/workspace"
)

// EngineName is the engine's name, as Info.Engine and --backend spell it.
const EngineName = "forkd"

// NamePrefix starts the name of every forkd workspace helikon creates: the
// workspace of session S is NamePrefix+S.
const NamePrefix = "helikon-"

// DefaultDir is the root of a workspace inside its microVM.
const DefaultDir = "/workspace"

// setupTimeout bounds the exec that makes the root and writes the labels
// (or, on Attach, finds them): a few shell builtins and a small file.
const setupTimeout = 30 * time.Second

// maxLabelsOutput bounds what the setup exec may print: the root's path
// and a labels file of a few hundred bytes. More is not a helikon labels
// file.
const maxLabelsOutput = 16 << 10

// The controller's WorkspaceStatus values (api.rs, serde lowercase).
const (
	statusRunning   = "running"
	statusSuspended = "suspended"
	statusStale     = "stale"
)

// ErrUnreachable matches a call that got no answer from the controller
// (refused, reset, TLS failure): start the controller or check FORKD_URL.
// It is backend/microvm's (and the shared client's) ErrUnreachable, and
// wraps backend.ErrUnavailable.
var ErrUnreachable = forkdapi.ErrUnreachable

// ErrSuspended matches Attach of a workspace that another client of the
// controller suspended: its state is a snapshot, and this package does not
// resume it.
var ErrSuspended = errors.New("workspace is suspended")

// Options configure an [Engine]. The embedded options of the per-command
// backend (package backend/microvm, whose RunIn runs the workspaces'
// commands) name the controller and the snapshot (both required) and set
// what they set for each command: token, CA, timeout, output cap, egress,
// memory limit, network namespace, logger; Now gives the labels' clock.
// ReapAge and ReapConcurrency do not apply: the engine reaps workspaces
// (Remove), and per-command microVMs are reaped by backend/microvm's
// Reconcile, which leaves the workspaces' live microVMs alone.
type Options struct {
	microvm.Options
	// Dir is the workspace's root inside the microVM: DefaultDir when
	// empty. It is made at creation. A relative Dir is resolved against
	// the guest agent's working directory (/ in forkd's rootfs, the
	// sandbox's directory in the fake controller); the root's absolute
	// path, as the microVM sees it, is what Workspace.Dir reports.
	Dir string
}

// Engine creates, finds and removes the forkd workspaces of helikon's
// sessions on one controller. It is safe for concurrent use.
type Engine struct {
	b       *microvm.Backend // runs the workspaces' commands (RunIn)
	c       *forkdapi.Client // the backend's: one connection pool
	dir     string
	labels  string // the labels file, next to dir
	snap    string
	netns   bool
	memMiB  uint64
	timeout time.Duration // the command timeout, for the file operations' execs
	log     *slog.Logger
	now     func() time.Time
}

// New builds a forkd engine from opts (required: the controller's URL and
// the snapshot tag). Like backend/microvm.New it does not contact the
// controller; it probes the egress proxy when EnforceEgress is set.
//
// Guarantees, as the workspaces' Guarantees report them: filesystem and
// syscalls virtualized, network proxied only with EnforceEgress, none
// otherwise. Limits (see the package documentation): a timed-out or
// cancelled command is killed by a second exec, with what it started
// unless that cleared its environment; no standard input; the name prefix
// [NamePrefix] is trusted to mark helikon's workspaces. No live controller
// was exercised by its tests.
func New(ctx context.Context, opts *Options) (*Engine, error) {
	if opts == nil {
		return nil, errors.New("forkd workspaces: options are required: the controller URL (FORKD_URL) and a snapshot tag (FORKD_SNAPSHOT)")
	}
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir
	}
	if strings.ContainsFunc(dir, unicode.IsControl) {
		return nil, fmt.Errorf("forkd workspaces: root %q contains a control character", dir)
	}
	dir = path.Clean(dir)
	if dir == "/" || dir == "." || dir == ".." || strings.HasPrefix(dir, "../") {
		return nil, fmt.Errorf("forkd workspaces: root %q: want a directory below / (such as %s)", opts.Dir, DefaultDir)
	}
	b, err := microvm.New(ctx, &opts.Options)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		b:       b,
		c:       b.Client(),
		dir:     dir,
		labels:  path.Join(path.Dir(dir), "."+path.Base(dir)+".helikon-labels.json"),
		snap:    opts.Snapshot,
		netns:   opts.PerChildNetns,
		memMiB:  opts.MemoryLimitMiB,
		timeout: opts.Timeout,
		log:     opts.Logger,
		now:     opts.Now,
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e, nil
}

// Name returns "forkd".
func (e *Engine) Name() string { return EngineName }

// Dir is the root every workspace of the engine has, as the microVM sees
// it, when the engine was given an absolute one (the default,
// [DefaultDir]), and "" for a relative one, which is resolved only inside
// each microVM: with an absolute root the engine describes its workspaces
// before they exist ([workspace.Describe]), so [workspace.Sessions] creates
// each session's microVM on its first call and can route by session (an
// MCP server gives each client its own). A workspace whose absolute root
// turns out to be a link to another directory in the microVM is refused
// when it is created or attached to, so that Dir is always its root.
func (e *Engine) Dir() string {
	if path.IsAbs(e.dir) {
		return e.dir
	}
	return ""
}

// Guarantees is what the commands of every workspace get: those of the
// per-command backend on the same controller (see [New]), labelled
// [Label]. A workspace's own Guarantees also name it.
func (e *Engine) Guarantees() backend.Guarantees {
	g := e.b.Guarantees()
	g.Label = Label
	return g
}

var _ workspace.Describer = (*Engine)(nil)

// String describes the engine without secrets.
func (e *Engine) String() string {
	return "forkd workspaces on " + strings.TrimPrefix(e.b.String(), "forkd backend ")
}

// WorkspaceName is the forkd workspace name of session.
func WorkspaceName(session string) string { return NamePrefix + session }

// SessionOf returns the session whose workspace is named name, and false
// when name is not one helikon gives.
func SessionOf(name string) (string, bool) {
	s, ok := strings.CutPrefix(name, NamePrefix)
	if !ok || workspace.ValidSession(s) != nil {
		return "", false
	}
	return s, true
}

// Create creates the workspace of session: POST /v1/workspaces, then one
// exec that makes the root and writes the labels file. A session whose
// workspace exists fails with an error matching fs.ErrExist (use Attach),
// unless that workspace is stale (its microVM died with the controller):
// a stale workspace holds nothing and is replaced. On any failure after
// the controller may have committed, the workspace is deleted.
func (e *Engine) Create(ctx context.Context, session string) (workspace.Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, fmt.Errorf("forkd workspaces: %w", err)
	}
	name := WorkspaceName(session)
	req := forkdapi.WorkspaceRequest{Name: name, SnapshotTag: e.snap, PerChildNetns: e.netns, MemoryLimitMiB: e.memMiB}
	info, err := e.c.CreateWorkspace(ctx, req)
	if status(err) == http.StatusConflict {
		if err := e.replaceStale(ctx, session, name); err != nil {
			return nil, err
		}
		info, err = e.c.CreateWorkspace(ctx, req)
	}
	if err != nil {
		if mayHaveCommitted(err) {
			return nil, e.undo(ctx, name, err)
		}
		if status(err) == http.StatusNotFound {
			// create_workspace never answers 404 (http.rs): the route is
			// missing, as before forkd v0.3.2.
			return nil, fmt.Errorf("forkd workspaces: the controller has no workspace API (POST /v1/workspaces; forkd v0.3.2 and later have it): %w", err)
		}
		return nil, fmt.Errorf("forkd workspaces: creating the workspace of session %s: %w", session, err)
	}
	labels := workspace.LabelsFor(ctx, session, e.now())
	data, err := json.Marshal(labels)
	if err != nil {
		return nil, e.undo(ctx, name, err)
	}
	// Info reports what List will: the file as read back, the controller's time.
	w := e.open(info, session, e.labelsOf(info, session, string(data)), false)
	// $1 root, $2 labels file, $3 its content. The file is replaced
	// atomically so that List never reads half of it.
	const script = `set -e; mkdir -p -- "$1"; printf '%s\n' "$3" > "$2.tmp"; mv -f -- "$2.tmp" "$2"; cd -- "$1"; pwd -P`
	out, err := w.setup(ctx, []string{"sh", "-c", script, "sh", e.dir, e.labels, string(data)})
	if err == nil {
		err = w.setRoot(ctx, out)
	}
	if err != nil {
		return nil, e.undo(ctx, name, err)
	}
	return w, nil
}

// replaceStale deletes the existing workspace name when it is stale, and
// fails with fs.ErrExist otherwise.
func (e *Engine) replaceStale(ctx context.Context, session, name string) error {
	old, err := e.c.GetWorkspace(ctx, name)
	if err != nil {
		return fmt.Errorf("forkd workspaces: session %s has a workspace (%s), which could not be read: %w", session, name, err)
	}
	if old.Status != statusStale {
		return fmt.Errorf("forkd workspaces: session %s already has workspace %s (%s): %w; attach to it, or remove it first", session, name, old.Status, fs.ErrExist)
	}
	e.log.Info("forkd workspaces: replacing a stale workspace (its microVM died with the controller)", "name", name)
	if err := e.c.DeleteWorkspace(ctx, name); err != nil {
		return fmt.Errorf("forkd workspaces: removing stale workspace %s: %w", name, err)
	}
	return nil
}

// undo deletes the workspace name after a failed create, ignoring the
// caller's cancellation, and returns cause with what became of it.
func (e *Engine) undo(ctx context.Context, name string, cause error) error {
	err := e.c.DeleteWorkspace(context.WithoutCancel(ctx), name)
	if err != nil {
		e.log.Warn("forkd workspaces: deleting a workspace whose creation failed", "name", name, "err", err)
		return fmt.Errorf("forkd workspaces: creating %s: %w (deleting it failed too: %v; helikon workspaces reap removes it)", name, cause, err)
	}
	return fmt.Errorf("forkd workspaces: creating %s: %w (whatever it made on the controller was deleted)", name, cause)
}

// status is the HTTP status of a controller's answer, 0 when err is not
// one.
func status(err error) int {
	if ae, ok := errors.AsType[*forkdapi.APIError](err); ok {
		return ae.Status
	}
	return 0
}

// mayHaveCommitted reports whether a failed create may have left a
// workspace: anything but the controller's refusal (4xx), which it answers
// before it spawns.
func mayHaveCommitted(err error) bool {
	s := status(err)
	return s < 400 || s > 499
}

// Attach opens the running workspace of session (GET
// /v1/workspaces/{name}, then one exec that finds the root and reads the
// labels). No workspace is an error matching workspace.ErrNotFound, a
// stale one too (and workspace.ErrGone), a suspended one [ErrSuspended].
func (e *Engine) Attach(ctx context.Context, session string) (workspace.Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, fmt.Errorf("forkd workspaces: %w", err)
	}
	name := WorkspaceName(session)
	info, err := e.c.GetWorkspace(ctx, name)
	if errors.Is(err, forkdapi.ErrNotFound) {
		return nil, fmt.Errorf("forkd workspaces: session %s: %w", session, workspace.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("forkd workspaces: attaching to %s: %w", name, err)
	}
	switch info.Status {
	case statusRunning:
	case statusSuspended:
		return nil, fmt.Errorf("forkd workspaces: %s: %w by another client of the controller; resume it (forkd workspace resume %s) and attach again, or remove it", name, ErrSuspended, name)
	case statusStale:
		return nil, fmt.Errorf("forkd workspaces: session %s: %w: %w: %s is stale, its microVM died when the controller restarted, with its files; creating the session's workspace replaces it", session, workspace.ErrNotFound, workspace.ErrGone, name)
	default:
		return nil, fmt.Errorf("forkd workspaces: %s has status %q, which this client does not know", name, info.Status)
	}
	w := e.open(info, session, nil, true)
	// $1 root, $2 labels file (read first: a relative one is next to a
	// relative root). A root that is gone fails the exec.
	const script = `l=$(cat -- "$2" 2>/dev/null) || l=; cd -- "$1" || exit 3; pwd -P; printf '%s\n' "$l"`
	out, err := w.setup(ctx, []string{"sh", "-c", script, "sh", e.dir, e.labels})
	if err != nil {
		return nil, fmt.Errorf("forkd workspaces: attaching to %s: %w (an engine attaches with the root it created with)", name, err)
	}
	first, rest, _ := strings.Cut(out, "\n")
	if err := w.setRoot(ctx, first); err != nil {
		return nil, fmt.Errorf("forkd workspaces: attaching to %s: %w", name, err)
	}
	w.info.Labels = e.labelsOf(info, session, rest)
	return w, nil
}

// List reports the controller's workspaces whose names helikon gives
// ([NamePrefix] and a valid session), with the host and user labels read
// from each running one. A workspace whose labels cannot be read is
// listed without them.
func (e *Engine) List(ctx context.Context) ([]workspace.Info, error) {
	all, err := e.c.ListWorkspaces(ctx)
	if err != nil {
		return nil, fmt.Errorf("forkd workspaces: listing: %w", err)
	}
	var out []workspace.Info
	for _, ws := range all {
		session, ok := SessionOf(ws.Name)
		if !ok {
			continue
		}
		var file string
		if ws.Status == statusRunning && ws.LiveSandboxID != "" {
			file = e.readLabels(ctx, ws)
		}
		out = append(out, e.infoOf(ws, session, e.labelsOf(ws, session, file)))
	}
	return out, nil
}

// readLabels returns the labels file of a running workspace, "" when it
// cannot be read.
func (e *Engine) readLabels(ctx context.Context, ws forkdapi.WorkspaceInfo) string {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout+forkdapi.ExecGrace)
	defer cancel()
	res, err := e.c.Exec(ctx, ws.LiveSandboxID, []string{"cat", "--", e.labels}, int(setupTimeout/time.Second), forkdapi.MaxExecBody(maxLabelsOutput))
	if err != nil || res.ExitCode != 0 || len(res.Stdout) > maxLabelsOutput {
		e.log.Debug("forkd workspaces: labels not readable", "name", ws.Name, "err", err)
		return ""
	}
	return res.Stdout
}

// Remove deletes the workspace named id (DELETE /v1/workspaces/{id}) and
// the microVM it holds. A workspace already gone is not an error; a name
// helikon does not give is refused, so that reaping never touches another
// tool's workspace.
func (e *Engine) Remove(ctx context.Context, id string) error {
	if _, ok := SessionOf(id); !ok {
		return fmt.Errorf("forkd workspaces: %q is not the name of a helikon workspace (%s<session>)", id, NamePrefix)
	}
	if err := e.c.DeleteWorkspace(ctx, id); err != nil {
		return fmt.Errorf("forkd workspaces: removing %s: %w", id, err)
	}
	return nil
}

// labelsOf builds a workspace's labels: helikon's mark and the session
// from its name, the creation time from the controller, and only the host
// and user from the labels file read inside the microVM (file), which a
// command in the workspace could have rewritten.
func (e *Engine) labelsOf(ws forkdapi.WorkspaceInfo, session, file string) map[string]string {
	labels := map[string]string{workspace.LabelManaged: "true", workspace.LabelSession: session}
	if !ws.CreatedAt.IsZero() {
		labels[workspace.LabelCreated] = strconv.FormatInt(ws.CreatedAt.Unix(), 10)
	}
	var claimed map[string]string
	if json.Unmarshal([]byte(file), &claimed) == nil {
		for _, k := range []string{workspace.LabelHost, workspace.LabelUser} {
			if v := claimed[k]; plainLabel(v) {
				labels[k] = v
			}
		}
	}
	return labels
}

// plainLabel accepts a label value read from inside a workspace: short,
// printable, non-empty.
func plainLabel(v string) bool {
	return v != "" && len(v) <= 253 && !strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) })
}

// infoOf describes the controller's workspace ws.
func (e *Engine) infoOf(ws forkdapi.WorkspaceInfo, session string, labels map[string]string) workspace.Info {
	return workspace.Info{ID: ws.Name, Engine: EngineName, Session: session, Labels: labels, Created: ws.CreatedAt, State: ws.Status}
}
