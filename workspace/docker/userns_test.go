package docker

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/moby/moby/api/types/system"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/dockerinfo"
)

// TestDetectUserNS: the mapping is read from what each daemon reports, as
// captured from Debian's podman 4.3 (root and rootless), dockerd and
// dockerd under rootlesskit, and Docker with userns-remap.
func TestDetectUserNS(t *testing.T) {
	for _, tc := range []struct {
		name string
		info dockerinfo.Info
		want userNS
	}{
		{"dockerd as root", dockerinfo.Info{SecurityOptions: []string{"name=seccomp,profile=builtin", "name=cgroupns"}}, nsHost},
		{"podman as root", dockerinfo.Info{SecurityOptions: []string{"name=seccomp,profile=default"}, Podman: true}, nsHost},
		{"rootless podman", dockerinfo.Info{SecurityOptions: []string{"name=seccomp,profile=default"}, Rootless: true, Podman: true}, nsRootlessPodman},
		{"rootless docker", dockerinfo.Info{SecurityOptions: []string{"name=seccomp,profile=builtin", "name=rootless", "name=cgroupns"}}, nsRootlessDocker},
		{"userns-remap", dockerinfo.Info{SecurityOptions: []string{"name=seccomp,profile=builtin", "name=userns"}}, nsRemap},
		{"no options", dockerinfo.Info{}, nsHost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := detectUserNS(tc.info); got != tc.want {
				t.Errorf("detectUserNS = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestBindUserMakesTheCallerTheOwner: the bind mode's default user under
// each mapping is the container's user that the daemon maps to this
// process's user, and userns-remap is refused with ErrUserMapping.
func TestBindUserMakesTheCallerTheOwner(t *testing.T) {
	self := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	for _, tc := range []struct {
		ns         userNS
		user, mode string
		err        error
	}{
		{nsHost, self, "", nil},
		{nsRootlessPodman, self, "keep-id", nil},
		{nsRootlessDocker, "0:0", "", nil},
		{nsRemap, "", "", ErrUserMapping},
	} {
		t.Run(tc.ns.String(), func(t *testing.T) {
			user, mode, err := bindUser(tc.ns)
			if user != tc.user || mode != tc.mode || !errors.Is(err, tc.err) {
				t.Errorf("bindUser = %q, %q, %v; want %q, %q, %v", user, mode, err, tc.user, tc.mode, tc.err)
			}
		})
	}
}

// TestLimitsOnARootlessDaemon: a limit asked for that a rootless daemon
// cannot enforce is refused with ErrLimitsUnsupported; none asked for is
// not, and the default pids limit is left out there; a daemon running as
// root is trusted with every limit.
func TestLimitsOnARootlessDaemon(t *testing.T) {
	v1 := system.Info{CgroupVersion: "1", CgroupDriver: "cgroupfs", MemoryLimit: true, CPUCfsQuota: true, PidsLimit: true}
	v2none := system.Info{CgroupVersion: "2", CgroupDriver: "none"}
	v2 := system.Info{CgroupVersion: "2", CgroupDriver: "systemd", MemoryLimit: true, CPUCfsQuota: true, PidsLimit: true}
	v2nomem := system.Info{CgroupVersion: "2", CgroupDriver: "systemd", CPUCfsQuota: true, PidsLimit: true}
	for _, tc := range []struct {
		name     string
		opts     Options
		info     system.Info
		ns       userNS
		wantPids bool
		err      error
	}{
		{"root v1 memory", Options{Memory: 1 << 20}, v1, nsHost, true, nil},
		{"rootless v1 none asked", Options{}, v1, nsRootlessPodman, false, nil},
		{"rootless v1 memory", Options{Memory: 1 << 20}, v1, nsRootlessPodman, false, ErrLimitsUnsupported},
		{"rootless v1 cpus", Options{CPUs: 1}, v1, nsRootlessDocker, false, ErrLimitsUnsupported},
		{"rootless v1 pids", Options{Limits: backend.ResourceLimits{Processes: 10}}, v1, nsRootlessDocker, false, ErrLimitsUnsupported},
		{"rootless v1 no pids limit", Options{Limits: backend.ResourceLimits{Processes: -1}}, v1, nsRootlessDocker, false, nil},
		{"rootless v2 undelegated", Options{Memory: 1 << 20}, v2none, nsRootlessDocker, false, ErrLimitsUnsupported},
		{"rootless v2 delegated", Options{Memory: 1 << 20, CPUs: 1}, v2, nsRootlessPodman, true, nil},
		{"rootless v2 without memory", Options{Memory: 1 << 20}, v2nomem, nsRootlessPodman, false, ErrLimitsUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids, err := checkLimits(&tc.opts, tc.info, tc.ns)
			if !errors.Is(err, tc.err) || (err == nil && pids != tc.wantPids) {
				t.Errorf("checkLimits = %v, %v; want %v, %v", pids, err, tc.wantPids, tc.err)
			}
		})
	}
}
