package earlylaunch_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// nobody is the user the whole-process tests run helikon as when the tests
// run as root; otherwise they run it as this user.
const nobody = 65534

// frontFor builds the helikon binary into a directory the unprivileged user
// can read, and a root directory it owns, and returns both.
func frontFor(t *testing.T) (bin, root string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	dir, err := os.MkdirTemp("", "helikon-earlylaunch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin, root = filepath.Join(dir, "helikon"), filepath.Join(dir, "root")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/paigasus/helikon/cmd/helikon").CombinedOutput(); err != nil {
		t.Fatalf("building helikon: %v\n%s", err, out)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(root, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return bin, root
}

// helikon runs the binary with args as the unprivileged user, in dir, and
// returns its exit status and output.
func helikon(t *testing.T, bin, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// launchersIn returns the pids of the launchers whose working directory is
// root (this test's: no other test's launcher works there).
func launchersIn(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("helikon-os-launcher\x00")) {
			continue
		}
		if wd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && wd == root {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestUnprivilegedExecProcess runs the helikon binary as an unprivileged
// user, whose helikon exec starts the OS sandbox's launcher during its
// initialisation: the command runs confined (as the caller, in a user
// namespace of its own, the root writable, everything else read-only, a
// pid namespace of its own), and as root of that namespace with
// --map-root-user; where a policy file picks the host backend instead, the
// launcher nobody took is gone when helikon has exited.
func TestUnprivilegedExecProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	bin, root := frontFor(t)
	// A directory the user may write to, outside the root: only the
	// sandbox keeps the command from writing there.
	writable := filepath.Join(filepath.Dir(bin), "writable")
	if err := os.Mkdir(writable, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(writable, 0o777); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(writable, "outside")
	code, out := helikon(t, bin, root, "exec", "--", "sh", "-c",
		`id -u; echo in > inside && cat inside; (echo out > `+outside+`) 2>/dev/null || echo refused; ls /proc | grep -c '^[0-9]'`)
	caller := strconv.Itoa(os.Geteuid())
	if os.Geteuid() == 0 {
		caller = strconv.Itoa(nobody)
	}
	if code == 125 && strings.Contains(out, "unavailable") {
		t.Skipf("the OS sandbox is unavailable here: %s", out)
	}
	// The command's shell and ls, at most a few more: the pid namespace
	// holds the command's processes only.
	if lines := strings.Fields(out); code != 0 || len(lines) != 4 || lines[0] != caller || lines[1] != "in" || lines[2] != "refused" || len(lines[3]) > 1 {
		t.Errorf("helikon exec as an unprivileged user: status %d, output %q; want 0, then %s (the caller's own uid), in, refused, and a handful of pids", code, out, caller)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the command wrote outside the root")
	}

	code, out = helikon(t, bin, root, "exec", "--map-root-user", "--", "id", "-u")
	if code != 0 || strings.TrimSpace(out) != "0" {
		t.Errorf("helikon exec --map-root-user: status %d, output %q; want 0 and 0 (root of its user namespace)", code, out)
	}

	settings := filepath.Join(filepath.Dir(bin), "settings.json")
	if err := os.WriteFile(settings, []byte(`{"backend": "host"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = helikon(t, bin, root, "exec", "--user-settings", settings, "--", "id", "-u")
	if code != 0 || strings.TrimSpace(out) != caller {
		t.Errorf("helikon exec with the host backend from a policy file: status %d, output %q; want 0 and %s", code, out, caller)
	}
	if pids := launchersIn(t, root); len(pids) > 0 {
		t.Errorf("launchers started at initialisation and not taken outlived helikon: pids %v", pids)
	}
}
