package prelaunch

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestDiscardEarlyKills: a launcher Early started and nobody took is
// killed and reaped by DiscardEarly. Early being once per program, this
// runs in a child test process.
func TestDiscardEarlyKills(t *testing.T) {
	if os.Getenv("PRELAUNCH_DISCARD_CHILD") == "1" {
		Early(os.TempDir())
		<-early.started
		p := early.p
		if p == nil {
			t.Fatal("Early did not start the launcher")
		}
		DiscardEarly()
		if p.Signal(syscall.SIGKILL) != os.ErrProcessDone {
			t.Fatal("DiscardEarly did not reap the launcher")
		}
		if ws, err := p.Wait(); err != nil || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("the launcher ended with %v (%v), not killed", ws, err)
		}
		if TakeEarly(os.TempDir()) != nil {
			t.Fatal("a discarded launcher was taken")
		}
		return
	}
	userNamespaces(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiscardEarlyKills$")
	cmd.Env = append(os.Environ(), "PRELAUNCH_DISCARD_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
