package ossandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// A root caller's commands each start from a thread confined for them (see
// startConfined). From a backend's second command on, the thread of the
// next command is confined while the current one runs: its pids cgroup
// made, its mount and pid namespaces, read-only view and tmpfs, its
// capabilities dropped, Landlock and seccomp applied (about 0.4 ms). Such a
// standby serves one command, as a thread confined on its arrival would,
// and only one whose tmpfs size and process cap it was made for; others
// confine a thread of their own. Not for the first command: a program that
// runs one command and exits would pay for a thread nobody uses. A standby
// left idle for standbyIdle is let go (its thread holds the backend), and
// Close lets it go at once. The unprivileged callers' launcher does the
// same in its own process (launcher's worker).

// standbyIdle is how long a standby waits for a command before it is let
// go.
const standbyIdle = 30 * time.Second

// standbyThreads holds the thread ids of the standbys, so that a check of
// this program's threads (TestParentStaysUnrestricted) can tell the
// threads confined ahead, each locked to its goroutine, from the others.
var standbyThreads sync.Map

// standbyKey is what a command's thread is confined for that depends on
// its request.
type standbyKey struct {
	tmpSize int64 // the tmpfs's size
	procs   int64 // the pids cgroup's cap (with a cgroup)
}

// standbys holds a root caller's backend's standby.
type standbys struct {
	mu   sync.Mutex
	cur  *rootWorker
	runs atomic.Int64 // commands started or tried
}

// rootWorker is a locked OS thread, discarded afterwards, confined for one
// command and waiting for it.
type rootWorker struct {
	key    standbyKey
	cgroup string       // its pids cgroup, or ""
	tid    atomic.Int64 // its thread (tests)
	ready  chan error   // the confinement's outcome, once
	jobs   chan rootJob // the command to start, once; a nil cmd lets it go
	once   sync.Once    // reading ready
	err    error        // the confinement's outcome
}

// rootJob is a command for a rootWorker, and where its start is reported.
type rootJob struct {
	cmd     *exec.Cmd
	traceMe bool
	limits  []rlimit
	res     chan rootStarted
}

// rootStarted is a rootWorker's outcome: what the start left held, or err.
type rootStarted struct {
	h   held
	err error
}

// standbyFor returns the key of a command whose temporary directory is
// tmp and whose process cap is procs, and whether a standby can serve it:
// root callers, with the tmpfs, without the egress proxy (whose network
// namespace and listener are made per command).
func (b *Backend) standbyFor(tmp tempDir, procs int64) (standbyKey, bool) {
	if !b.privileged || !tmp.tmpfs || b.egress != nil || b.noStandby {
		return standbyKey{}, false
	}
	k := standbyKey{tmpSize: tmp.size}
	if b.pids != "" {
		k.procs = procs
	}
	return k, true
}

// newRootWorker starts a worker confining its thread for a command of key
// k.
func (b *Backend) newRootWorker(k standbyKey) *rootWorker {
	w := &rootWorker{key: k, ready: make(chan error, 1), jobs: make(chan rootJob, 1)}
	go func() {
		_ = launcher.OnDiscardedThread(func() error {
			tid := unix.Gettid()
			w.tid.Store(int64(tid))
			standbyThreads.Store(tid, struct{}{})
			defer standbyThreads.Delete(tid)
			h, err := b.confineStandby(w)
			w.ready <- err
			j := b.standby.waitJob(w)
			if err != nil || j.cmd == nil {
				h.close()
				if w.cgroup != "" {
					b.dropCgroup(w.cgroup)
				}
				if j.res != nil {
					j.res <- rootStarted{h: none, err: errors.Join(err, errors.New("ossandbox: standby let go"))}
				}
				return nil
			}
			err = startOnThread(j.cmd, &h, j.traceMe, j.limits)
			j.res <- rootStarted{h: h, err: err}
			return nil
		})
	}()
	return w
}

// confineStandby confines the calling thread for a command of w's key: its
// cgroup, ruleset and temporary directory made as run makes them.
func (b *Backend) confineStandby(w *rootWorker) (held, error) {
	td := tempDir{path: b.tmpBase, tmpfs: true, size: w.key.tmpSize}
	if b.pids != "" {
		cg, err := b.newPidsCgroup(w.key.procs)
		if err != nil {
			return none, err
		}
		w.cgroup = cg
	}
	rs, err := b.buildRuleset(td, false)
	if err != nil {
		return none, fmt.Errorf("ossandbox: %w", err)
	}
	defer rs.Close()
	h, err := b.confineThread(rs, td, w.cgroup)
	if err != nil {
		return none, fmt.Errorf("%w: confine: %w", backend.ErrUnavailable, err)
	}
	return h, nil
}

// waitJob waits for w's command. A standby idle for standbyIdle leaves
// the slot and is let go, unless it was taken meanwhile (its command then
// comes).
func (s *standbys) waitJob(w *rootWorker) rootJob {
	t := time.NewTimer(standbyIdle)
	defer t.Stop()
	select {
	case j := <-w.jobs:
		return j
	case <-t.C:
	}
	s.mu.Lock()
	if s.cur == w {
		s.cur = nil
		s.mu.Unlock()
		return rootJob{}
	}
	s.mu.Unlock()
	return <-w.jobs
}

// confined waits for w's confinement and returns its outcome.
func (w *rootWorker) confined() error {
	w.once.Do(func() { w.err = <-w.ready })
	return w.err
}

// letGo lets w's thread go without a command.
func (w *rootWorker) letGo() { w.jobs <- rootJob{} }

// take returns the standby if it was made for k and its confinement
// worked, leaving none; otherwise nil.
func (s *standbys) take(k standbyKey) *rootWorker {
	s.mu.Lock()
	w := s.cur
	if w == nil || w.key != k {
		s.mu.Unlock()
		return nil
	}
	s.cur = nil
	s.mu.Unlock()
	if w.confined() != nil {
		w.letGo()
		return nil
	}
	return w
}

// prepare starts a standby for commands of k once the backend has run a
// second command, unless there is one for k; one for another key is let
// go.
func (s *standbys) prepare(b *Backend, k standbyKey) {
	if s.runs.Add(1) < 2 {
		return
	}
	s.mu.Lock()
	old := s.cur
	if old != nil && old.key == k {
		s.mu.Unlock()
		return
	}
	s.cur = b.newRootWorker(k)
	s.mu.Unlock()
	if old != nil {
		old.letGo()
	}
}

// close lets the standby go, if any.
func (s *standbys) close() {
	s.mu.Lock()
	w := s.cur
	s.cur = nil
	s.mu.Unlock()
	if w != nil {
		w.letGo()
	}
}

// start has w start cmd, confined, and returns what the start held.
func (w *rootWorker) start(cmd *exec.Cmd, traceMe bool, limits []rlimit) (held, error) {
	// As startConfined: no descriptor opened without O_CLOEXEC reaches
	// the command.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	res := make(chan rootStarted, 1)
	w.jobs <- rootJob{cmd: cmd, traceMe: traceMe, limits: limits, res: res}
	r := <-res
	if r.err != nil {
		r.h.close()
		return none, r.err
	}
	return r.h, nil
}
