package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/system"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/dockerinfo"
)

// ErrUserMapping is what [New] and [Engine.Create] fail with (wrapped) when
// the daemon maps the container's users to this machine's in a way under
// which a command in a bind-mode workspace would write files this process
// cannot change afterwards: Docker's userns-remap, or a rootless daemon
// whose user is not this process's. The message says what to configure.
var ErrUserMapping = errors.New("the daemon's user namespace does not map the container's user to this process's user")

// ErrLimitsUnsupported is what [New] fails with (wrapped) when Options ask
// for a container limit (Memory, CPUs, Limits.Processes) that the daemon
// cannot enforce: a rootless daemon without cgroup v2 delegation.
var ErrLimitsUnsupported = errors.New("the daemon cannot enforce container limits")

// userNS is how the daemon maps the users of its containers to this
// machine's, read from its info ([detectUserNS]).
type userNS int

const (
	// nsHost: a daemon running as root without remapping; a uid in the
	// container is the same uid on this machine.
	nsHost userNS = iota
	// nsRemap: Docker with userns-remap; container uids are subordinate
	// ids of the remap user on this machine.
	nsRemap
	// nsRootlessPodman: Podman's service run by an ordinary user; its
	// containers' root is that user, and the keep-id user namespace maps
	// the user's own uid in the container to the user.
	nsRootlessPodman
	// nsRootlessDocker: dockerd run by an ordinary user (rootlesskit); the
	// container's root is that user, every other uid a subordinate id.
	nsRootlessDocker
)

// rootless reports whether the daemon runs in an ordinary user's own user
// namespace.
func (n userNS) rootless() bool { return n == nsRootlessPodman || n == nsRootlessDocker }

// String names the mapping as the guarantees and errors say it.
func (n userNS) String() string {
	switch n {
	case nsRemap:
		return "Docker with userns-remap"
	case nsRootlessPodman:
		return "rootless Podman"
	case nsRootlessDocker:
		return "rootless Docker"
	}
	return "a daemon running as root"
}

// detectUserNS reads the daemon's user mapping from its info: rootless
// (dockerd's security option "rootless", Podman's field Rootless) and
// Docker's userns-remap (the security option "userns").
func detectUserNS(info dockerinfo.Info) userNS {
	switch {
	case info.IsRootless() && info.Podman:
		return nsRootlessPodman
	case info.IsRootless():
		return nsRootlessDocker
	case dockerinfo.Remapped(info.SecurityOptions):
		return nsRemap
	}
	return nsHost
}

// cgroupLimits reports whether the daemon can enforce the container limits
// (memory, CPU, pids), and if not, why. A rootless daemon can only through a
// cgroup v2 subtree delegated to its user (systemd's user@.service
// Delegate=yes); on cgroup v1, or without delegation (Docker reports the
// cgroup driver "none", Podman the limits as unsupported), its containers
// get none.
func cgroupLimits(info system.Info, ns userNS) (memory, cpu, pids bool, why string) {
	if !ns.rootless() {
		return true, true, true, ""
	}
	if info.CgroupVersion != "2" || info.CgroupDriver == "none" {
		return false, false, false, fmt.Sprintf("%s has no cgroup v2 subtree delegated to its user (cgroup version %q, driver %q)", ns, info.CgroupVersion, info.CgroupDriver)
	}
	why = ns.String() + " reports no such controller in its delegated cgroup (delegate memory, cpu and pids to the user: systemd's Delegate=yes)"
	return info.MemoryLimit, info.CPUCfsQuota, info.PidsLimit, why
}

// checkLimits refuses Options' container limits that the daemon cannot
// enforce, and reports whether the default pids limit can be applied.
func checkLimits(o *Options, info system.Info, ns userNS) (defaultPids bool, err error) {
	memory, cpu, pids, why := cgroupLimits(info, ns)
	var refused []string
	if o.Memory > 0 && !memory {
		refused = append(refused, "Memory")
	}
	if o.CPUs > 0 && !cpu {
		refused = append(refused, "CPUs")
	}
	if o.Limits.Processes > 0 && !pids {
		refused = append(refused, "Limits.Processes")
	}
	if len(refused) > 0 {
		return false, fmt.Errorf("docker: %s asked for, but %s: unset them (the per-command ulimits still apply), or run the daemon where it can enforce them: %w", strings.Join(refused, ", "), why, ErrLimitsUnsupported)
	}
	return pids, nil
}

// bindUser is the user commands of a bind-mode workspace run as by default
// under ns, and the container's user namespace mode: the user whom the
// daemon maps to this process's user on this machine, so that what a
// command writes in the root belongs to this process's user, as what the
// file operations write does.
func bindUser(ns userNS) (user, usernsMode string, err error) {
	self := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	switch ns {
	case nsRootlessPodman:
		// keep-id: the user's uid and gid in the container are the
		// user's on this machine.
		return self, "keep-id", nil
	case nsRootlessDocker:
		// The only uid rootless Docker maps to its user is root (with
		// every capability dropped, as everywhere).
		return "0:0", "", nil
	case nsRemap:
		return "", "", fmt.Errorf("docker: the daemon runs with userns-remap, so a command in the container would write the root's files as a subordinate uid that this user cannot change: run the daemon without userns-remap (remove it from /etc/docker/daemon.json), use rootless Docker or Podman as this user, or use the isolated mode (--isolate): %w", ErrUserMapping)
	}
	return self, "", nil
}

// checkOwner runs a command in w, a bind-mode workspace of a rootless
// daemon, that creates a file in the root, and checks on this machine that
// it belongs to this process's user: the mapping the engine chose is then
// the one that makes the container's user this user, whatever the daemon
// said. A file owned by another uid, or none created, fails with
// [ErrUserMapping]; the probe file is removed either way.
func (w *Workspace) checkOwner(ctx context.Context, root string) error {
	b := make([]byte, 8)
	rand.Read(b)
	name := ".helikon-owner-check-" + hex.EncodeToString(b)
	host := filepath.Join(root, name)
	defer os.Remove(host)
	// set -C: the file is created, never an existing one truncated.
	res, err := w.Run(ctx, &backend.Request{Argv: []string{"/bin/sh", "-c", `set -C; : > "$1"`, "sh", name}})
	if err != nil {
		return err
	}
	fi, serr := os.Lstat(host)
	if res.ExitCode == nil || *res.ExitCode != 0 || serr != nil {
		exit := -1
		if res.ExitCode != nil {
			exit = *res.ExitCode
		}
		return fmt.Errorf("docker: %s: a command in the container cannot create a file in the root %s (exit %d: %s): %s; run the daemon as this user (rootless Podman or Docker started by uid %d), or use the isolated mode (--isolate): %w",
			w.e.userns, root, exit, strings.TrimSpace(string(res.Stderr)), w.e.opts.userHint(), os.Getuid(), ErrUserMapping)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		uid := -1
		if ok {
			uid = int(st.Uid)
		}
		return fmt.Errorf("docker: %s: a file created by a command in the container belongs to uid %d on this machine, not to this process's uid %d, which could not change it afterwards: %s; run the daemon as this user, or use the isolated mode (--isolate): %w",
			w.e.userns, uid, os.Getuid(), w.e.opts.userHint(), ErrUserMapping)
	}
	return nil
}

// userHint says what to do about Options.User when it is set.
func (o *Options) userHint() string {
	if o.User == "" {
		return "the daemon's user is not this process's user"
	}
	return fmt.Sprintf("User %q is not the container's user the daemon maps to this process's user; leave User unset", o.User)
}

// feature is the guarantees' line on the user namespace of a container
// created with usernsMode under n; "" for a daemon running as root without
// remapping, whose containers' uids are this machine's.
func (n userNS) feature(usernsMode container.UsernsMode) string {
	switch n {
	case nsRootlessPodman:
		m := "the container's root is the daemon's user, every other uid one of that user's subordinate ids"
		if usernsMode == "keep-id" {
			m = "keep-id: the commands' uid and gid in the container are the daemon's user's on this machine"
		}
		return "user namespace: rootless Podman: the container runs in the user namespace of the daemon's user, uid " + strconv.Itoa(os.Getuid()) + " here (no host root anywhere); " + m
	case nsRootlessDocker:
		return "user namespace: rootless Docker: the container runs in the user namespace of the daemon's user (no host root anywhere); the container's root, with every capability dropped, is that user on this machine, every other uid one of its subordinate ids"
	case nsRemap:
		return "user namespace: Docker's userns-remap: the container's uids are subordinate ids on this machine"
	}
	return ""
}
