package forkdfake

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func do(t *testing.T, srv *Server, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The answers of suspend_workspace and Registry::reconcile (http.rs,
// state.rs at e88c730) and of axum's body limit.
func TestSuspendRestartAndBodyLimit(t *testing.T) {
	c := New("t")
	c.AddSnapshot("snap")
	srv := c.Start()
	defer srv.Close()
	if code, _ := do(t, srv, "POST", "/v1/workspaces/none/suspend", `{}`); code != 404 {
		t.Errorf("suspend of an unknown workspace: %d, want 404", code)
	}
	if code, body := do(t, srv, "POST", "/v1/workspaces", `{"name":"w","snapshot_tag":"snap"}`); code != 201 || !strings.Contains(body, `"status":"running"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := do(t, srv, "POST", "/v1/workspaces/w/suspend", `{}`)
	if code != 200 || !strings.Contains(body, `"status":"suspended"`) || !strings.Contains(body, `"current_state_tag":"ws-w-state"`) || strings.Contains(body, "live_sandbox_id") {
		t.Errorf("suspend: %d %s", code, body)
	}
	if len(c.Live()) != 0 {
		t.Errorf("the suspended workspace's sandbox lives: %v", c.Live())
	}
	if code, body := do(t, srv, "POST", "/v1/workspaces/w/suspend", `{}`); code != 400 || !strings.Contains(body, "is Suspended, not Running") {
		t.Errorf("second suspend: %d %s", code, body)
	}
	do(t, srv, "POST", "/v1/workspaces", `{"name":"r","snapshot_tag":"snap"}`)
	c.Restart()
	if _, body := do(t, srv, "GET", "/v1/workspaces/r", ""); !strings.Contains(body, `"status":"stale"`) || strings.Contains(body, "live_sandbox_id") {
		t.Errorf("after Restart: %s", body)
	}
	if _, body := do(t, srv, "GET", "/v1/workspaces/w", ""); !strings.Contains(body, `"status":"suspended"`) {
		t.Errorf("a suspended workspace after Restart: %s", body)
	}
	big := `{"name":"b","snapshot_tag":"snap","pad":"` + strings.Repeat("x", 2<<20) + `"}`
	if code, _ := do(t, srv, "POST", "/v1/workspaces", big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 2 MiB: %d, want 413", code)
	}
}

// pick_netns_offset (http.rs): a workspace with its own namespace takes
// the first free forkd-child-N, after the live sandboxes' ones.
func TestNetnsOffset(t *testing.T) {
	c := New("t")
	c.AddSnapshot("snap")
	srv := c.Start()
	defer srv.Close()
	if code, body := do(t, srv, "POST", "/v1/sandboxes", `{"snapshot_tag":"snap","n":2,"per_child_netns":true}`); code != 201 || !strings.Contains(body, `"netns":"forkd-child-1"`) || !strings.Contains(body, `"netns":"forkd-child-2"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	do(t, srv, "POST", "/v1/workspaces", `{"name":"w","snapshot_tag":"snap","per_child_netns":true}`)
	_, body := do(t, srv, "GET", "/v1/workspaces/w", "")
	var id string
	if i := strings.Index(body, `"live_sandbox_id":"`); i >= 0 {
		id, _, _ = strings.Cut(body[i+len(`"live_sandbox_id":"`):], `"`)
	}
	if _, sb := do(t, srv, "GET", "/v1/sandboxes/"+id, ""); !strings.Contains(sb, `"netns":"forkd-child-3"`) {
		t.Errorf("the workspace's sandbox: %s, want forkd-child-3", sb)
	}
}
