package ossandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// TestProcessStaysConfinedForItsWholeLife is the attack of a process that
// waits until it was started and then writes outside the root: the write
// must fail as it fails for a command of Run.
func TestProcessStaysConfinedForItsWholeLife(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	outside := filepath.Join(os.TempDir(), "helikon-process-escape-"+filepath.Base(t.TempDir()))
	t.Cleanup(func() { os.Remove(outside) })
	p, err := b.Start(t.Context(), &backend.StartRequest{Request: backend.Request{
		Command: `read go; echo escaped > ` + outside + ` && echo wrote || echo refused`}})
	if err != nil {
		t.Fatal(err)
	}
	p.Input().Write([]byte("go\n"))
	ctx, cancel := context.WithTimeout(t.Context(), 20e9)
	defer cancel()
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	out := p.Output().Read(0, 0)
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("a started process wrote outside its root (%s): %q", outside, out.Data)
	}
	t.Logf("output: %q", out.Data)
}
