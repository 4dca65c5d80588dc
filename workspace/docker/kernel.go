package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// hostKernelRuntimes are runtimes whose containers share the daemon host's
// kernel by design: their kernel is not measured, and their guarantees are
// os_kernel at most. A name here can only lower what is reported: no name
// makes a runtime virtualized (see [Engine.measureKernel]).
var hostKernelRuntimes = []string{"runc", "crun", "youki", "io.containerd.runc.v2", "io.containerd.runtime.v1.linux"}

// kernelProbeTimeout bounds the measurement of a runtime's kernel: a
// container created, run and removed (a gVisor sandbox boots in about a
// second here).
const kernelProbeTimeout = 60 * time.Second

// runtimeKernel is what a runtime's containers were seen to run on.
type runtimeKernel struct {
	release string // /proc/sys/kernel/osrelease in a container of the runtime
	err     error  // why it could not be read
}

// own reports whether the runtime's containers run on a kernel of their
// own: one whose release differs from the daemon host's. A kernel not
// measured, or measured equal, is the host's (fail closed).
func (k runtimeKernel) own(host string) bool {
	return k.err == nil && k.release != "" && host != "" && k.release != host
}

// measureKernel finds out what kernel the containers of runtime rt run on,
// from a container of the engine's image that prints
// /proc/sys/kernel/osrelease, compared with the daemon host's kernel
// (GET /info's KernelVersion). It is how the guarantees tell a gVisor or
// Kata runtime from one that only has such a name: the runtime's name
// decides nothing. Runtimes in hostKernelRuntimes are not measured.
func (e *Engine) measureKernel(ctx context.Context, rt string) runtimeKernel {
	if slices.Contains(hostKernelRuntimes, rt) {
		return runtimeKernel{err: fmt.Errorf("runtime %s shares the host's kernel", rt)}
	}
	ctx, cancel := context.WithTimeout(ctx, kernelProbeTimeout)
	defer cancel()
	image := e.imageID
	if image == "" {
		image = e.opts.Image
	}
	cr, err := e.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: image, Entrypoint: []string{"cat", "/proc/sys/kernel/osrelease"}, Cmd: []string{}, Labels: map[string]string{labelMode: "kernel-probe"}},
		HostConfig: &container.HostConfig{
			Runtime: rt, NetworkMode: "none", CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"},
		},
	})
	if err != nil {
		return runtimeKernel{err: fmt.Errorf("create a container to read its kernel: %w", err)}
	}
	defer e.removeQuietly(cr.ID)
	wait := e.cli.ContainerWait(ctx, cr.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := e.cli.ContainerStart(ctx, cr.ID, client.ContainerStartOptions{}); err != nil {
		return runtimeKernel{err: fmt.Errorf("start a container to read its kernel: %w", err)}
	}
	select {
	case res := <-wait.Result:
		if res.StatusCode != 0 {
			return runtimeKernel{err: fmt.Errorf("reading the kernel release in a container exited %d", res.StatusCode)}
		}
	case err := <-wait.Error:
		return runtimeKernel{err: fmt.Errorf("wait for the container that reads its kernel: %w", err)}
	}
	logs, err := e.cli.ContainerLogs(ctx, cr.ID, client.ContainerLogsOptions{ShowStdout: true})
	if err != nil {
		return runtimeKernel{err: fmt.Errorf("read the kernel release: %w", err)}
	}
	defer logs.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, io.Discard, io.LimitReader(logs, 4096)); err != nil {
		return runtimeKernel{err: fmt.Errorf("read the kernel release: %w", err)}
	}
	release := strings.TrimSpace(out.String())
	if release == "" || strings.ContainsAny(release, " \n") {
		return runtimeKernel{err: fmt.Errorf("the container printed %q, not a kernel release", release)}
	}
	return runtimeKernel{release: release}
}

// kernelFeature says what the guarantees know of rt's kernel.
func (e *Engine) kernelFeature(rt string) string {
	k, ok := e.kernels[rt]
	switch {
	case !ok:
		return "kernel: not measured for runtime " + rt + ": taken to be the host's"
	case k.own(e.hostKernel):
		return fmt.Sprintf("kernel: its own (%s in the container; the daemon host runs %s)", k.release, e.hostKernel)
	case k.err != nil:
		return "kernel: the host's (" + k.err.Error() + ")"
	default:
		return fmt.Sprintf("kernel: the host's (%s in the container and on the daemon host)", k.release)
	}
}
