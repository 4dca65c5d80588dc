//go:build linux

package filetool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"golang.org/x/sys/unix"
)

// The attack of issue 36, class 2: a command of the workspace swaps a
// directory for a link inside the root, in a loop, while Read, Write and
// Edit calls go through the permission pipeline. The rules deny reading
// private/** and the policy-file guard protects .claude/settings.json; the
// calls name r/secret and w/settings.json, which the check sees as allowed
// whenever r and w are directories. A call that the swap leads to the
// link's target after its check must be refused (or fail), never read
// private/secret or change .claude/settings.json.
//
// The swap is atomic (renameat2 RENAME_EXCHANGE): at every instant r is the
// directory or a link to private, w the directory or a link to .claude.
// With the walk's descriptor check or the write's own comparison of the
// path it resolved with the checked targets removed, the secret is read and
// the policy file written by Write and by Edit within a few hundred calls.
func TestSwapAfterThePermissionCheckIsRefused(t *testing.T) {
	e := newEnv(t)
	const (
		policy    = `{"permissions": {"allow": ["Read"]}}`
		secretTxt = "PRIVATE-SECRET"
	)
	for name, content := range map[string]string{
		"private/secret":        secretTxt,
		".claude/settings.json": policy,
		"r/secret":              "public",
		"w/settings.json":       policy,
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(e.root, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(e.root, name), []byte(content), 0o644))
	}
	pairs := [][2]string{{"r", "r.link"}, {"w", "w.link"}}
	must(t, os.Symlink("private", filepath.Join(e.root, "r.link")))
	must(t, os.Symlink(".claude", filepath.Join(e.root, "w.link")))
	exchange := func(p [2]string) error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(e.root, p[0]), unix.AT_FDCWD, filepath.Join(e.root, p[1]), unix.RENAME_EXCHANGE)
	}
	if err := exchange(pairs[0]); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v); the swap race cannot be run", err)
	}
	must(t, exchange(pairs[0]))

	perms := &helikon.Permissions{
		Allow:     []helikon.Rule{helikon.MustParseRule("Read"), helikon.MustParseRule("Write"), helikon.MustParseRule("Edit")},
		Deny:      []helikon.Rule{helikon.MustParseRule("Read(/private/**)")},
		Protected: []helikon.ProtectedFile{{Path: filepath.Join(e.root, ".claude", "settings.json"), Dir: e.root}},
	}
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	callTool := func(tool helikon.Tool[app], args string) (json.RawMessage, error) {
		return helikon.CallTool(tc, perms, tool, json.RawMessage(args))
	}

	stop := make(chan struct{})
	var swaps atomic.Int64
	var swapper sync.WaitGroup
	for _, p := range pairs {
		swapper.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if exchange(p) == nil {
					swaps.Add(1)
				}
				// Each side of the swap lasts about as long as a call: a
				// walk through the directory then survives often enough
				// for the check to allow the call.
				time.Sleep(time.Microsecond)
			}
		})
	}

	var mu sync.Mutex
	outcomes := map[string]int{}
	samples := map[string]string{} // one error of each outcome, for the log
	note := func(what string, err error) {
		mu.Lock()
		if err != nil {
			samples[what] = err.Error()
		}
		outcomes[what]++
		mu.Unlock()
	}
	// How a call ended: allowed and done, denied (by the rules before it
	// ran, or by the tool naming the path the link led to), or failed
	// otherwise (a swap seen in the walk, the edit's text not found).
	kind := func(err error) string {
		switch {
		case err == nil:
			return "done"
		case helikon.KindOf(err) == helikon.KindDenied:
			return "denied"
		case errors.Is(err, syscall.EAGAIN):
			return "swapped"
		}
		return "failed"
	}
	exercised := func(tool string) bool {
		mu.Lock()
		defer mu.Unlock()
		return outcomes[tool+" done"] > 0 && outcomes[tool+" denied"] > 0
	}
	// Write's content is marked as Write's, Edit's change is "Bash": the
	// policy file shows which tool reached it.
	written := `{"permissions": {"allow": ["Read"]}, "by": "Write"}`
	var leaked, byWrite, byEdit atomic.Bool
	breached := func() {
		b, _ := os.ReadFile(filepath.Join(e.root, ".claude", "settings.json"))
		if strings.Contains(string(b), `"Write"`) {
			byWrite.Store(true)
		}
		if strings.Contains(string(b), `"Bash"`) {
			byEdit.Store(true)
		}
	}
	var wg sync.WaitGroup
	writersDone := make(chan struct{})
	// Reads are cheap: one goroutine makes them for as long as the
	// writers run.
	wg.Go(func() {
		for {
			select {
			case <-writersDone:
				return
			default:
			}
			out, err := callTool(e.read, `{"path":"r/secret"}`)
			if err == nil && strings.Contains(string(out), secretTxt) {
				leaked.Store(true)
			}
			note("Read "+kind(err), err)
		}
	})
	var writers sync.WaitGroup
	for range 2 {
		writers.Go(func() {
			// At least 1000 rounds, until each tool has been both
			// allowed and refused, at most 5000; how the swaps and the
			// calls interleave is up to the scheduler.
			for i := 0; i < 1000 || !(exercised(filetool.ReadName) && exercised(filetool.WriteName) && exercised(filetool.EditName)) && i < 5000; i++ {
				_, err := callTool(e.write, `{"path":"w/settings.json","content":`+jsonString(written)+`}`)
				note("Write "+kind(err), err)
				// The edit is undone by the next round's Write.
				_, err = callTool(e.edit, `{"path":"w/settings.json","old_string":"\"Read\"","new_string":"\"Bash\""}`)
				note("Edit "+kind(err), err)
				breached()
			}
		})
	}
	writers.Wait()
	close(writersDone)
	wg.Wait()
	close(stop)
	swapper.Wait()
	t.Logf("%d swaps; outcomes %v; errors seen %q", swaps.Load(), outcomes, samples)
	if leaked.Load() {
		t.Errorf("Read returned %s, which Read(/private/**) denies, through a directory swapped for a link after the check", "private/secret")
	}
	breached()
	if byWrite.Load() {
		t.Error("Write changed the protected .claude/settings.json through a directory swapped for a link after the check")
	}
	if byEdit.Load() {
		t.Error("Edit changed the protected .claude/settings.json through a directory swapped for a link after the check")
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, ".claude", "settings.json")); string(b) != policy && !byWrite.Load() && !byEdit.Load() {
		t.Errorf("the protected .claude/settings.json was changed: %q", b)
	}
	for _, tool := range []string{filetool.ReadName, filetool.WriteName, filetool.EditName} {
		if !exercised(tool) {
			t.Errorf("the race was not exercised for %s: it was not both allowed and refused", tool)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
