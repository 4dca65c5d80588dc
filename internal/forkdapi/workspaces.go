package forkdapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// WorkspaceInfo is the controller's WorkspaceInfo: a named microVM the
// controller tracks across suspend and resume (routes /v1/workspaces,
// which the forkd CLI's "workspace" commands use; docs/API.md does not
// list them).
type WorkspaceInfo struct {
	Name              string    // unique per controller: 1-64 of [A-Za-z0-9_-]
	SourceSnapshotTag string    // the snapshot it was created from
	Status            string    // "running", "suspended" or "stale"
	LiveSandboxID     string    // the sandbox to exec in; "" unless running
	CreatedAt         time.Time // from created_at_unix; zero when unusable
}

type workspaceWire struct {
	Name              string          `json:"name"`
	SourceSnapshotTag string          `json:"source_snapshot_tag"`
	Status            string          `json:"status"`
	LiveSandboxID     *string         `json:"live_sandbox_id"`
	CreatedAt         json.RawMessage `json:"created_at_unix"`
}

func (w workspaceWire) info() WorkspaceInfo {
	ws := WorkspaceInfo{Name: w.Name, SourceSnapshotTag: w.SourceSnapshotTag, Status: w.Status, CreatedAt: parseUnix(w.CreatedAt)}
	if w.LiveSandboxID != nil {
		ws.LiveSandboxID = *w.LiveSandboxID
	}
	return ws
}

// WorkspaceRequest is the body of POST /v1/workspaces
// (CreateWorkspaceRequest).
type WorkspaceRequest struct {
	// Name names the workspace (required): 1-64 of [A-Za-z0-9_-], unique
	// on the controller.
	Name string `json:"name"`
	// SnapshotTag is the snapshot to fork from (required).
	SnapshotTag string `json:"snapshot_tag"`
	// PerChildNetns places the microVM in its own network namespace.
	PerChildNetns bool `json:"per_child_netns,omitempty"`
	// MemoryLimitMiB sets memory.max on the microVM's cgroup; 0 means none.
	MemoryLimitMiB uint64 `json:"memory_limit_mib,omitempty"`
}

// CreateWorkspace forks a microVM and tracks it under a name: POST
// /v1/workspaces, answered by 201 and a WorkspaceInfo. A name in use is an
// [APIError] with status 409.
func (c *Client) CreateWorkspace(ctx context.Context, req WorkspaceRequest) (WorkspaceInfo, error) {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	var out workspaceWire
	if _, err := c.call(ctx, "create workspace", http.MethodPost, "/v1/workspaces", req, &out, maxSmallBody); err != nil {
		return WorkspaceInfo{}, err
	}
	ws := out.info()
	if ws.Name != req.Name || !ValidID(ws.LiveSandboxID) {
		// The workspace may exist: the caller deletes it by name.
		return ws, fmt.Errorf("forkd create workspace: %w: asked for %q, got name %q with live sandbox %q", ErrMalformedResponse, req.Name, ws.Name, ws.LiveSandboxID)
	}
	return ws, nil
}

// GetWorkspace returns one workspace: GET /v1/workspaces/{name}. A name
// the controller does not know is an error matching [ErrNotFound].
func (c *Client) GetWorkspace(ctx context.Context, name string) (WorkspaceInfo, error) {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	var out workspaceWire
	if _, err := c.call(ctx, "get workspace", http.MethodGet, "/v1/workspaces/"+url.PathEscape(name), nil, &out, maxSmallBody); err != nil {
		return WorkspaceInfo{}, err
	}
	if out.Name != name {
		return WorkspaceInfo{}, fmt.Errorf("forkd get workspace: %w: asked for %q, got %q", ErrMalformedResponse, name, out.Name)
	}
	return out.info(), nil
}

// ListWorkspaces returns the controller's workspaces: GET /v1/workspaces,
// answered by a JSON array of WorkspaceInfo.
func (c *Client) ListWorkspaces(ctx context.Context) ([]WorkspaceInfo, error) {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	var entries []workspaceWire
	if _, err := c.call(ctx, "list workspaces", http.MethodGet, "/v1/workspaces", nil, &entries, maxListBody); err != nil {
		return nil, err
	}
	out := make([]WorkspaceInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.info())
	}
	return out, nil
}

// DeleteWorkspace destroys the workspace's microVM and forgets it: DELETE
// /v1/workspaces/{name}, answered by 204. A 404 counts as already gone.
func (c *Client) DeleteWorkspace(ctx context.Context, name string) error {
	ctx, cancel := c.apiCtx(ctx)
	defer cancel()
	_, err := c.call(ctx, "delete workspace", http.MethodDelete, "/v1/workspaces/"+url.PathEscape(name), nil, nil, maxSmallBody, http.StatusNotFound)
	return err
}
