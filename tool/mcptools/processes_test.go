package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/mcptools"
)

// TestHTTPSessionsEachHaveTheirOwnProcesses: a client cannot read another
// client's background command by its id nor see it listed, and a client
// that ends its session has its processes ended, the other's staying.
func TestHTTPSessionsEachHaveTheirOwnProcesses(t *testing.T) {
	dir := t.TempDir()
	b, err := host.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	procs := &process.Sessions{Backend: b}
	defer procs.CloseAll()
	bash, err := bashtool.New[app](b, &bashtool.Options{Processes: procs})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := bashtool.NewOutputTool[app](procs)
	list, _ := bashtool.NewListTool[app](procs)
	srv, err := mcptools.NewServer(helikon.MustToolset[app](bash, out, list), &mcptools.ServerOptions[app]{
		SessionEnded: func(s string) { _ = procs.Close(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, srv, nil)
	ctx := context.Background()
	var srcs [2]*mcptools.Source[app]
	var ids [2]string
	for i := range srcs {
		src, err := mcptools.Connect[app](ctx, mcptools.HTTP(url, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = src
		res, err := invoke(toolsByName(t, src)["Bash"], `{"command": "echo $$ > pid`+strconv.Itoa(i)+`; exec sleep 300", "run_in_background": true}`)
		if err != nil {
			t.Fatal(err)
		}
		var o bashtool.Output
		_ = json.Unmarshal(res, &o)
		ids[i] = o.ShellID
	}
	if ids[0] != ids[1] {
		t.Fatalf("ids %q and %q: each session's table counts from its start", ids[0], ids[1])
	}
	// Client 1's p1 is its own: the listing shows one command, not two.
	res, err := invoke(toolsByName(t, srcs[1])["BashList"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var l bashtool.ListResult
	_ = json.Unmarshal(res, &l)
	if len(l.Shells) != 1 {
		t.Fatalf("client 1 lists %v, want its own command only", l.Shells)
	}
	t0, err := procs.TableFor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(t0.List()) != 0 {
		t.Fatalf("a call without a session sees %v", t0.List())
	}
	pid := func(i int) string {
		for range 100 {
			if b, err := os.ReadFile(filepath.Join(dir, "pid"+strconv.Itoa(i))); err == nil && len(b) > 1 {
				return "/proc/" + strings.TrimSpace(string(b))
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("command %d wrote no pid", i)
		return ""
	}
	p0, p1 := pid(0), pid(1)
	srcs[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(p0); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command of the ended session (%s) still runs", p0)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(p1); err != nil {
		t.Fatalf("the other session's command ended with the first session: %v", err)
	}
	srcs[1].Close()
}
