//go:build linux

package ossandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
	"github.com/paigasus/helikon/internal/prelaunch"
)

// An unprivileged caller's command is started by a launcher: this program
// re-executed through /proc/self/exe (like internal/proc's reaper, which it
// becomes) in a new user and mount namespace created at clone time, when the
// child is still single-threaded. An unprivileged thread of the
// multi-threaded caller cannot create those namespaces itself
// (unshare(CLONE_NEWUSER) needs a single-threaded process).
//
// The launcher, holding every capability over its own namespaces only:
//  1. makes its mount tree private, then every mount read-only and nosuid
//     except the root and the temporary directory (launcher.ReadOnlyView,
//     the code root callers use);
//  2. becomes the child subreaper (internal/proc/reaper);
//  3. confines a new locked OS thread exactly as a root caller's confining
//     thread is confined once its namespaces exist: every capability dropped
//     (the bounding set included), no_new_privs, Landlock, seccomp;
//  4. forks the command from that thread, which the runtime then discards.
//
// The user namespace maps the caller's uid and gid to themselves
// (prelaunch.UserNamespace), or to 0 with [Options].MapRootUser; the
// launcher holds every capability over it either way (as ambient
// capabilities across its exec when its uid is not 0). The command runs
// as that uid, which is the caller's uid outside, without capabilities:
// the files outside the root it owns are on read-only mounts, so chmod,
// chown, utimes and setxattr on them fail.
// Any step failing means the command does not run: the launcher reports
// "unavailable" through the reaper's status descriptor and Run fails with an
// error wrapping [backend.ErrUnavailable].
//
// The launcher's code is package launcher, entered from its init function
// before the rest of this program is initialised (see its doc).

// launcherUnavailable is a test seam: when set, [New] behaves as if user
// namespaces failed with this error.
var launcherUnavailable error

// startLauncherNS starts cmd, which internal/proc prepared to re-execute
// this program as the reaper, as the launcher instead, in a new user and
// mount namespace (and pid namespace with pidNS).
func (b *Backend) startLauncherNS(cmd *exec.Cmd, tmp tempDir, probe, pidNS bool) error {
	if cmd.Path != "/proc/self/exe" || len(cmd.Args) < 2 || len(cmd.ExtraFiles) != 1 {
		// Only a reaper command (Tracking TrackReaper) can be turned into
		// the launcher; anything else would run without the namespaces.
		return fmt.Errorf("%w: os sandbox: the command is not started by a reaper", backend.ErrUnavailable)
	}
	data := (&launcher.Config{
		Probe:    probe,
		Root:     b.root,
		Tmp:      tmp.path,
		TmpFS:    tmp.tmpfs,
		TmpSize:  tmp.size,
		RootRW:   b.rootRW,
		TmpRW:    b.tmpRW,
		PidNS:    pidNS,
		LastCap:  b.lastCap,
		ABI:      b.abi,
		Rules:    b.rules(tmp),
		ReadOnly: b.probeless(probe),
		Writable: b.writable(),
		Overlays: b.overlays(),
		Filter:   b.filter,
		Net:      b.netModePerCommand(),
	}).Encode()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("os sandbox: launcher configuration pipe: %w", err)
	}
	defer r.Close()
	// In a goroutine: a configuration larger than the pipe's buffer would
	// otherwise block before the launcher exists to read it.
	go func() {
		_, _ = w.Write(data)
		w.Close()
	}()
	cmd.Args = append([]string{launcher.Arg0}, cmd.Args[1:]...)
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], launcher.Env+"=1")
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS
	if pidNS {
		pfd, err := unix.PidfdOpen(os.Getpid(), 0)
		if err != nil {
			return fmt.Errorf("%w: os sandbox: a pidfd of this program for the launcher: %w", backend.ErrUnavailable, err)
		}
		parent := os.NewFile(uintptr(pfd), "pidfd")
		defer parent.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, parent)
		a.Cloneflags |= unix.CLONE_NEWPID
	}
	prelaunch.UserNamespace(a, b.opts.MapRootUser)
	// As for the confining thread (startConfined): descriptors this
	// program opened without O_CLOEXEC must not reach the launcher, whose
	// command would inherit them.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	return cmd.Start()
}

// probeLauncherNS runs the launcher once in probe mode, with a pid
// namespace or not and the tmpfs at tmpBase or none: namespaces, read-only
// view and a confined thread, nothing started.
func (b *Backend) probeLauncherNS(pidNS bool, tmpBase string) error {
	if launcherUnavailable != nil {
		return launcherUnavailable
	}
	var stderr bytes.Buffer
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"", "probe"},
		Env:        []string{},
		Stderr:     &stderr,
		ExtraFiles: []*os.File{nil},
	}
	td := tempDir{path: b.root}
	if tmpBase != "" {
		td = tempDir{path: tmpBase, tmpfs: true, size: 1 << 20}
	}
	if err := b.startLauncherNS(cmd, td, true, pidNS); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

// usernsWhy reports why an unprivileged caller's commands run without the
// read-only view, for guarantees and doctor.
func usernsWhy(err error) string {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return "user namespaces are not permitted here (kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, an AppArmor restriction, or a seccomp filter): " + err.Error()
	case errors.Is(err, unix.ENOSPC):
		return "the user namespace limit is reached: " + err.Error()
	}
	return err.Error()
}
