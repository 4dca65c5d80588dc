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
// re-executed as one (Arg0): it reports its user and group ids, its
// effective capabilities (/proc/self/status's CapEff) and its configuration
// on the socket, as package launcher would read them, and exits.
func TestMain(m *testing.M) {
	if os.Args[0] == Arg0 && os.Getenv(Env) == "1" {
		cfg, _ := io.ReadAll(os.NewFile(ConfigFD, "config"))
		sock := os.NewFile(SocketFD, "socket")
		wd, _ := os.Getwd()
		_, _ = sock.WriteString(strings.Join([]string{strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid()), capEff(), wd, string(cfg)}, "|"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// capEff returns "all" when the calling process's effective capability set
// (/proc/self/status's CapEff) holds capabilities 0 to lastCap, those every
// launcher holds over its user namespace whatever its uid there, and the
// set otherwise.
func capEff() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			const want = uint64(1)<<(lastCap+1) - 1
			if c, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && c&want == want {
				return "all"
			}
			return strings.TrimSpace(v)
		}
	}
	return "no CapEff"
}

// answer is what the stand-in launcher answers with the caller's ids seen
// as uid and gid, every capability, working directory root and
// configuration cfg.
func answer(uid, gid int, root, cfg string) string {
	return strings.Join([]string{strconv.Itoa(uid), strconv.Itoa(gid), "all", root, cfg}, "|")
}

func userNamespaces(t *testing.T) {
	t.Helper()
	p, err := Spawn(t.TempDir(), false)
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

// TestSpawn: the launcher starts in root, in a user namespace of its own
// where the caller is itself (or root with mapRoot) and holds every
// capability, and reads the configuration written to its pipe. Run as an
// unprivileged user, the default case fails if the launcher is mapped to
// root or loses its capabilities at exec (no ambient capabilities).
func TestSpawn(t *testing.T) {
	userNamespaces(t)
	for _, tc := range []struct {
		name     string
		mapRoot  bool
		uid, gid int
	}{
		{"the caller's own ids", false, os.Getuid(), os.Getgid()},
		{"mapped to root", true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p, err := Spawn(root, tc.mapRoot)
			if err != nil {
				t.Fatal(err)
			}
			if p.MapRoot != tc.mapRoot {
				t.Errorf("MapRoot = %v, want %v", p.MapRoot, tc.mapRoot)
			}
			if got, want := reply(t, p, "cfg"), answer(tc.uid, tc.gid, root, "cfg"); got != want {
				t.Errorf("launcher answered %q, want %q (uid|gid|CapEff|dir|config)", got, want)
			}
		})
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
	if got, want := reply(t, p, "x"), answer(os.Getuid(), os.Getgid(), root, "x"); got != want {
		t.Errorf("the taken launcher answered %q, want %q", got, want)
	}
}
