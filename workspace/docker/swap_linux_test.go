//go:build linux

package docker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"golang.org/x/sys/unix"
)

// In the bind mode the file tools act on the project through the local
// file system. A directory of the project swapped for a link to another
// directory of it after the permission check (by a command in the
// container; here by the test, on the host side of the same bind mount,
// since the image has no atomic exchange) must not lead Read to a file a
// deny rule covers, nor Write or Edit to a policy file: the local file
// system compares the path its own walk opened with the checked targets,
// as the isolated mode's execfs does.
func TestAttackSwapAfterTheCheckBind(t *testing.T) {
	root := bindRoot(t)
	ws := create(t, newEngine(t, Options{Root: root}))
	const policy = `{"permissions": {"allow": ["Read"]}}`
	for name, content := range map[string]string{
		"private/secret": "PRIVATE-SECRET", ".claude/settings.json": policy, "r/secret": "public", "w/settings.json": policy,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pairs := [][2]string{{"r", "r.link"}, {"w", "w.link"}}
	for _, l := range [][2]string{{"private", "r.link"}, {".claude", "w.link"}} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	exchange := func(p [2]string) error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, p[0]), unix.AT_FDCWD, filepath.Join(root, p[1]), unix.RENAME_EXCHANGE)
	}
	if err := exchange(pairs[0]); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v); the swap race cannot be run", err)
	}
	if err := exchange(pairs[0]); err != nil {
		t.Fatal(err)
	}
	perms := &helikon.Permissions{
		Allow:     []helikon.Rule{helikon.MustParseRule("Read"), helikon.MustParseRule("Write"), helikon.MustParseRule("Edit")},
		Deny:      []helikon.Rule{helikon.MustParseRule("Read(/private/**)")},
		Protected: []helikon.ProtectedFile{{Path: filepath.Join(ws.Dir(), ".claude", "settings.json"), Dir: ws.Dir()}},
	}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	read, write, edit := filetool.NewRead[struct{}](ws, nil), filetool.NewWrite[struct{}](ws, nil), filetool.NewEdit[struct{}](ws, nil)
	callTool := func(tool helikon.Tool[struct{}], args string) (json.RawMessage, error) {
		return helikon.CallTool(tc, perms, tool, json.RawMessage(args))
	}

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	for _, p := range pairs {
		swapper.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				exchange(p)
				time.Sleep(time.Microsecond) // each side lasts about a call
			}
		})
	}
	var leaked, done atomic.Bool
	var reads, writes atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !done.Load() {
			out, err := callTool(read, `{"path":"r/secret"}`)
			if err == nil {
				reads.Add(1)
				if strings.Contains(string(out), "PRIVATE-SECRET") {
					leaked.Store(true)
				}
			}
		}
	})
	wg.Go(func() {
		defer done.Store(true)
		for range 1000 {
			if _, err := callTool(write, `{"path":"w/settings.json","content":"{\"by\": \"Write\", \"allow\": [\"Read\"]}"}`); err == nil {
				writes.Add(1)
			}
			if _, err := callTool(edit, `{"path":"w/settings.json","old_string":"\"Read\"","new_string":"\"Bash\""}`); err == nil {
				writes.Add(1)
			}
		}
	})
	wg.Wait()
	close(stop)
	swapper.Wait()
	t.Logf("%d reads and %d writes allowed and done", reads.Load(), writes.Load())
	if leaked.Load() {
		t.Error("Read returned private/secret, which Read(/private/**) denies, through a directory swapped for a link after the check")
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".claude", "settings.json")); string(b) != policy {
		t.Errorf("the protected .claude/settings.json was changed through a directory swapped for a link after the check: %q", b)
	}
	if reads.Load() == 0 || writes.Load() == 0 {
		t.Error("the race was not exercised: no call was allowed")
	}
}
