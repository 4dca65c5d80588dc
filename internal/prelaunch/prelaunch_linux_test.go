package prelaunch

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain stands in for the launcher's side when this test binary is
// re-executed as one (Arg0): it reports its user id and its configuration on
// the socket, as package launcher would read them, and exits.
func TestMain(m *testing.M) {
	if os.Args[0] == Arg0 && os.Getenv(Env) == "1" {
		cfg, _ := io.ReadAll(os.NewFile(ConfigFD, "config"))
		sock := os.NewFile(SocketFD, "socket")
		wd, _ := os.Getwd()
		_, _ = sock.WriteString(strings.Join([]string{strconv.Itoa(os.Getuid()), wd, string(cfg)}, "|"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func userNamespaces(t *testing.T) {
	t.Helper()
	p, err := Spawn(t.TempDir())
	if err != nil {
		t.Skipf("no user namespaces here: %v", err)
	}
	p.Kill()
}

// reply writes cfg to p's configuration pipe and returns what the stand-in
// launcher answered.
func reply(t *testing.T, p *Process, cfg string) string {
	t.Helper()
	if _, err := p.Config.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	p.Config.Close()
	buf := make([]byte, 4096)
	n, err := p.Sock.Read(buf)
	if err != nil {
		t.Fatalf("no answer from the launcher: %v", err)
	}
	if ws, err := p.Wait(); err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("launcher: status %v, %v", ws, err)
	}
	p.Sock.Close()
	return string(buf[:n])
}

// TestSpawn: the launcher starts in root, as root of a user namespace of
// its own, and reads the configuration written to its pipe.
func TestSpawn(t *testing.T) {
	userNamespaces(t)
	root := t.TempDir()
	p, err := Spawn(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reply(t, p, "cfg"), "0|"+root+"|cfg"; got != want {
		t.Errorf("launcher answered %q, want %q", got, want)
	}
}

// TestEarly: the launcher Early started is taken once, and only for its
// own root; DiscardEarly kills one that was not taken. Early is once per
// program, so the cases run in order in one test.
func TestEarly(t *testing.T) {
	userNamespaces(t)
	if TakeEarly("/") != nil {
		t.Fatal("TakeEarly returned a launcher before Early was called")
	}
	DiscardEarly() // nothing to discard: must not block
	root := t.TempDir()
	Early(root)
	Early(filepath.Join(root, "again")) // ignored: once per program
	if p := TakeEarly(filepath.Join(root, "other")); p != nil {
		t.Fatal("TakeEarly took a launcher started over another root")
	}
	p := TakeEarly(root)
	if p == nil {
		t.Fatal("TakeEarly did not take the launcher started over its root")
	}
	if TakeEarly(root) != nil {
		t.Error("TakeEarly took the same launcher twice")
	}
	DiscardEarly() // taken: not killed
	if got, want := reply(t, p, "x"), "0|"+root+"|x"; got != want {
		t.Errorf("the taken launcher answered %q, want %q", got, want)
	}
}
