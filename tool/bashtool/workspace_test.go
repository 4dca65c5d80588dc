package bashtool_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/workspace/local"
)

// newWorkspaceTool returns the Bash tool on a local workspace over the host
// backend, and that backend's own tool, both in one directory.
func newWorkspaceTool(tb testing.TB) (onWorkspace, onBackend *bashtool.Tool[app], ws *local.Workspace) {
	tb.Helper()
	dir := tb.TempDir()
	b, err := host.New(dir, &host.Options{Timeout: 7 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	e, err := local.New(dir, b)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := e.Create(context.Background(), "bash")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close(context.Background()) })
	ws = w.(*local.Workspace)
	if onWorkspace, err = bashtool.New[app](ws, nil); err != nil {
		tb.Fatal(err)
	}
	if onBackend, err = bashtool.New[app](b, nil); err != nil {
		tb.Fatal(err)
	}
	return onWorkspace, onBackend, ws
}

// A workspace is the Bash tool's backend: the tool takes its root from the
// workspace (so a relative redirect is a target inside it), tells the model
// the backend's time limit, and runs commands where the file tools act.
func TestWorkspaceIsTheBackend(t *testing.T) {
	tool, _, ws := newWorkspaceTool(t)
	if !strings.Contains(tool.Description(), "7s") {
		t.Errorf("the description does not give the backend's 7s limit: %s", tool.Description())
	}
	tg, err := tool.Targets(json.RawMessage(`{"command":"echo hi > out.txt"}`))
	if err != nil || len(tg.Paths) != 1 || tg.Paths[0].Path != ws.Dir()+"/out.txt" || tg.Unresolved != "" {
		t.Errorf("targets of a relative redirect: %+v, %v; want %s/out.txt", tg, err, ws.Dir())
	}
	out, err := invoke(t, tool, `{"command":"echo hi > out.txt && pwd -P"}`)
	if err != nil || strings.TrimSpace(out["stdout"].(string)) != ws.Dir() {
		t.Fatalf("ran in %v (%v), want %s", out["stdout"], err, ws.Dir())
	}
	if fi, err := ws.Stat(t.Context(), "out.txt"); err != nil || fi.Size() != 3 {
		t.Errorf("the file the command wrote, seen by the workspace: %v, %v", fi, err)
	}
	ws.Close(t.Context())
	if _, err := invoke(t, tool, `{"command":"true"}`); helikon.KindOf(err) != helikon.KindOther || !strings.Contains(err.Error(), "workspace is gone") {
		t.Errorf("a call after Close: %v, want an other error saying the workspace is gone", err)
	}
}

// BenchmarkRoundTripWorkspace runs `true` through the Bash tool on a local
// workspace and on its bare host backend, alternately in one loop, and
// reports the workspace's cost as a ratio of medians (x-backend-p50): the
// workspace layer must not slow the round trip.
func BenchmarkRoundTripWorkspace(b *testing.B) {
	onWorkspace, onBackend, _ := newWorkspaceTool(b)
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	args := json.RawMessage(`{"command":"true"}`)
	var wsT, bT []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := onBackend.Invoke(tc, args); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := onWorkspace.Invoke(tc, args); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		bT = append(bT, t1.Sub(t0))
		wsT = append(wsT, t2.Sub(t1))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds())
	}
	b.ReportMetric(median(bT), "backend-p50-ns")
	b.ReportMetric(median(wsT), "workspace-p50-ns")
	b.ReportMetric(median(wsT)/median(bT), "x-backend-p50")
}
