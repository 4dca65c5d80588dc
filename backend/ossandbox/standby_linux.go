package ossandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// A root caller's commands each start from a thread confined for them (see
// startConfined). New's probe is such a thread, confined for a command that
// asks for no limits of its own, which the first such command takes
// (probeStandby). From a backend's second command on, the next command's
// thread is confined while the current one runs (launcher.Standby, which
// the unprivileged callers' launcher uses in its own process): its pids
// cgroup made, its mount and pid namespaces, read-only view and tmpfs, its
// capabilities dropped, Landlock and seccomp applied. Its thread holds the
// backend, so a standby left idle for standbyIdle is let go, and Close lets
// it go at once.

// standbyIdle is how long a root caller's standby waits for a command
// before it is let go.
const standbyIdle = 30 * time.Second

// standbyKey is what a command's thread is confined for that depends on
// its request.
type standbyKey struct {
	tmpSize int64 // the tmpfs's size
	procs   int64 // the pids cgroup's cap (with a cgroup)
}

// standbyState is what a root caller's standby's confinement leaves held:
// the thread's pids cgroup (or "") and its held namespaces.
type standbyState struct {
	cgroup string
	h      held
}

// rootWorker is a root caller's thread confined for one command.
type rootWorker = launcher.Worker[standbyKey, standbyState]

// initStandby sets up a root caller's backend's standby.
func (b *Backend) initStandby() {
	b.standby.Confine = b.confineStandby
	b.standby.Release = func(st standbyState) {
		st.h.close()
		if st.cgroup != "" {
			b.dropCgroup(st.cgroup)
		}
	}
	b.standby.Idle = standbyIdle
}

// standbyFor returns the key of a command whose temporary directory is
// tmp and whose process cap is procs, and whether a standby can serve it:
// root callers, with the tmpfs (a standby enters the session's network
// namespace, where there is one, as a command's thread does).
func (b *Backend) standbyFor(tmp tempDir, procs int64) (standbyKey, bool) {
	if !b.privileged || !tmp.tmpfs {
		return standbyKey{}, false
	}
	k := standbyKey{tmpSize: tmp.size}
	if b.pids != "" {
		k.procs = procs
	}
	return k, true
}

// probeStandby is a root caller's backend's probe at construction where a
// standby can serve its commands: the thread of a command that asks for no
// limits and no timeout of its own (helikon exec's) is confined ahead, and
// that command takes it instead of confining one after it arrives. It
// returns an error where there is no such standby (without the tmpfs) or
// its confinement failed; the caller then probes as
// before, with the tmpfs and without.
func (b *Backend) probeStandby() error {
	if b.tmpBase == "" {
		return errNoStandby
	}
	limits := b.limits(backend.EffectiveTimeout(b.opts.Timeout, 0), nil)
	key, ok := b.standbyFor(tmpfsDir(b.tmpBase, limits.FileSize), limits.Processes)
	if !ok {
		return errNoStandby
	}
	return b.standby.Ahead(key)
}

// errNoStandby: a backend whose commands no standby serves.
var errNoStandby = errors.New("ossandbox: no standby")

// confineStandby confines the calling thread for a command of key k: its
// cgroup, ruleset and temporary directory made as run makes them.
func (b *Backend) confineStandby(k standbyKey) (standbyState, error) {
	st := standbyState{h: none}
	td := tmpfsDir(b.tmpBase, k.tmpSize)
	var err error
	if st.cgroup, _, err = b.commandCgroup(k.procs); err != nil {
		return st, err
	}
	rs, err := b.buildRuleset(td, false)
	if err != nil {
		return st, fmt.Errorf("ossandbox: %w", err)
	}
	defer rs.Close()
	if st.h, err = b.confineThread(rs, td, st.cgroup); err != nil {
		return st, fmt.Errorf("%w: confine: %w", backend.ErrUnavailable, err)
	}
	return st, nil
}

// startStandby has w start cmd, from its thread confined for it, and
// returns what the start held.
func (b *Backend) startStandby(w *rootWorker, cmd *exec.Cmd, traceMe bool, limits []rlimit) (held, error) {
	// As startConfined: no descriptor opened without O_CLOEXEC reaches
	// the command.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	h, err := none, error(nil)
	w.Run(func(st standbyState, cerr error) {
		if cerr != nil {
			err = cerr // not taken by run: Take hands over confined ones only
			return
		}
		h = st.h
		// Confined while the previous command ran: a read-only
		// directory removed on the host since is no longer mounted in
		// its namespace, and the command could create it.
		if err = launcher.CheckProtected(b.root, b.readOnly); err != nil {
			err = fmt.Errorf("%w: os sandbox: %w; run the command again", backend.ErrUnavailable, err)
			return
		}
		err = startOnThread(cmd, &h, traceMe, limits)
	})
	if err != nil {
		h.close()
		return none, err
	}
	return h, nil
}
