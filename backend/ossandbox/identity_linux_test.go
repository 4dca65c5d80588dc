//go:build linux

package ossandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// nobodyID is the uid and gid of nobody (and of the kernel's overflow id)
// on Debian and most distributions.
const nobodyID = 65534

// identityScript prints what a command is told of who it is: its uid and
// gid, HOME and its owner, and whether HOME and the private temporary
// directory it may write.
const identityScript = `id -u; id -g; echo "$HOME"; stat -c '%u %g' "$HOME"; [ -w "$HOME" ] && [ -w "$TMPDIR" ] && echo private`

// wantIdentity is identityScript's output for a command run as uid and
// gid whose HOME is home.
func wantIdentity(uid, gid int, home string) string {
	return fmt.Sprintf("%d\n%d\n%s\n%d %d\nprivate", uid, gid, home, uid, gid)
}

// TestCommandsRunAsTheCaller: an unprivileged caller's commands see its
// own uid and gid, and a HOME (the private temporary directory) that they
// own, however they are started; with MapRootUser they see uid and gid 0
// (the caller outside either way). Root callers' commands run as root. Run
// as an unprivileged user (CI runs this binary as one), it fails with the
// caller mapped to 0 of the user namespace, as it was before
// MapRootUser existed.
func TestCommandsRunAsTheCaller(t *testing.T) {
	for mode, set := range readOnlyModes(t) {
		for _, mapRoot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, MapRootUser %v", mode, mapRoot), func(t *testing.T) {
				b, _ := newTestBackend(t, Options{MapRootUser: mapRoot})
				t.Cleanup(func() { b.Close() })
				launcherStarts(t, b)
				set(b)
				uid, gid := os.Getuid(), os.Getgid()
				if mapRoot {
					uid, gid = 0, 0 // root callers are 0 anyway
				}
				got := runOK(t, b, identityScript)
				home, _, _ := strings.Cut(strings.TrimPrefix(got, fmt.Sprintf("%d\n%d\n", uid, gid)), "\n")
				if !strings.HasPrefix(home, os.TempDir()+"/") {
					t.Fatalf("identity: %q; want HOME in %s", got, os.TempDir())
				}
				if want := wantIdentity(uid, gid, home); got != want {
					t.Errorf("identity: %q; want %q (uid, gid, HOME, its owner, private)", got, want)
				}
				says := "identity: commands run as the caller's own uid"
				switch {
				case isRoot():
					says = "identity: commands run as root"
				case mapRoot:
					says = "identity: commands run as uid and gid 0 of their user namespace"
				}
				if !slices.ContainsFunc(b.Guarantees().Features, func(f string) bool { return strings.HasPrefix(f, says) }) {
					t.Errorf("guarantees %q; want a feature saying %q", b.Guarantees().Features, says)
				}
			})
		}
	}
}

// launcherStarts fails the test if b, an unprivileged caller's backend,
// runs its commands without the launcher although this machine creates
// user namespaces: a launcher that cannot set itself up (one that lost its
// capabilities at exec, say) would otherwise pass unseen, its commands run
// as the caller in this program's namespace, without the read-only view.
// It skips where user namespaces are unavailable.
func launcherStarts(t *testing.T, b *Backend) {
	t.Helper()
	if isRoot() || b.userns {
		return
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		t.Skipf("user namespaces are unavailable here: %v", err)
	}
	t.Fatalf("user namespaces work here, but the launcher did not start: %s", b.usernsWhy)
}

// TestCommandsRunAsTheCallerWithoutUserNamespaces: where user namespaces
// are unavailable, commands run in this program's namespace, as the caller
// whatever MapRootUser says.
func TestCommandsRunAsTheCallerWithoutUserNamespaces(t *testing.T) {
	if isRoot() {
		t.Skip("root callers do not use user namespaces")
	}
	launcherUnavailable = unix.EPERM
	b, _ := newTestBackend(t, Options{MapRootUser: true})
	launcherUnavailable = nil
	if b.userns {
		t.Fatal("the backend uses the launcher although user namespaces are unavailable")
	}
	got := runOK(t, b, `id -u; id -g`)
	if want := fmt.Sprintf("%d\n%d", os.Getuid(), os.Getgid()); got != want {
		t.Errorf("identity: %q; want %q", got, want)
	}
}

// TestGitTrustsTheCallersRepository: git's safe.directory check (a
// repository owned by another user is refused as "dubious ownership")
// passes in the sandbox on a repository the caller owns, in every way
// commands start. For a root caller, a repository owned by another user is
// the control: git refuses it there, so the check is not off in the
// sandbox. An unprivileged caller cannot make one.
func TestGitTrustsTheCallersRepository(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for mode, set := range readOnlyModes(t) {
		t.Run(mode, func(t *testing.T) {
			b, root := newTestBackend(t, Options{ReadPaths: []string{filepath.Dir(git)}})
			t.Cleanup(func() { b.Close() })
			launcherStarts(t, b)
			set(b)
			if out, err := exec.Command(git, "init", "-q", root).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			mustWrite(t, filepath.Join(root, "f"), "x")
			if got := runOK(t, b, "git status --porcelain"); got != "?? f" {
				t.Errorf("git status in the caller's repository: %q; want ?? f", got)
			}
			if !isRoot() {
				return
			}
			if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
				if err == nil {
					err = os.Lchown(p, nobodyID, nobodyID)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			res, err := b.Run(context.Background(), &backend.Request{Command: "git status --porcelain"})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode == nil || *res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "dubious ownership") {
				t.Errorf("git status in another user's repository: exit %v, stderr %q; want refused for dubious ownership", res.ExitCode, res.Stderr)
			}
		})
	}
}

// TestStartedLauncherKeepsItsIdentity: a launcher started ahead
// (StartLauncher) maps the caller to its own ids, so a backend that maps
// it to root does not take it, and starts its own; its commands then run
// as uid 0 of their namespace, not as the caller.
func TestStartedLauncherKeepsItsIdentity(t *testing.T) {
	b := serverBackend(t)
	b.Close()
	opts := b.opts
	opts.MapRootUser = true
	opts.Launcher = StartLauncher(b.Dir())
	t.Cleanup(func() { opts.Launcher.Close() })
	mapped, err := New(b.Dir(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mapped.Close() })
	if got := runOK(t, mapped, "id -u"); got != "0" {
		t.Errorf("id -u with MapRootUser through a launcher started ahead: %q; want 0", got)
	}
	<-opts.Launcher.started
	if opts.Launcher.c == nil {
		t.Fatal("the launcher started ahead did not start")
	}
	if launcherPid(mapped) == opts.Launcher.c.proc.Pid() {
		t.Error("a backend that maps the caller to root took a launcher that maps it to its own ids")
	}
}
