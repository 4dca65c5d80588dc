package launcher

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Standby keeps one OS thread confined ahead for the next command, for the
// long-lived launcher (serve) and for root callers' backends alike: the
// confinement (the command's mount and pid namespaces, its tmpfs, the
// capability drop, Landlock, seccomp, and the thread itself: about 0.4 ms)
// is then done while the previous command runs, not after the next one
// arrives. A standby serves one command, as a thread confined on its
// arrival would, and only a command of the key it was confined for (what
// of the confinement depends on the request: the tmpfs's size, the pids
// cgroup's cap); others get a [Worker] of their own. [Standby.Prepare] keeps
// none until a second command has started: a program that runs one command
// and exits would pay for a thread nobody uses (about 0.8 ms of a
// one-command helikon exec's 10, measured, the confinement competing with
// the command and its report for two cores). [Standby.Ahead] makes one
// where a backend would confine a thread anyway, as its probe.
//
// S is what a confinement leaves held (a mount namespace's descriptor,
// say). The zero Standby is not usable: Confine and Release must be set.
type Standby[K comparable, S any] struct {
	// Confine confines the calling thread, locked and to be discarded,
	// for a command of key k and returns what it leaves held (also on
	// failure, for Release).
	Confine func(k K) (S, error)
	// Release lets go of what Confine left when no command takes it over:
	// the confinement failed, or the worker was let go.
	Release func(S)
	// Idle, when positive, is how long a standby waits for a command
	// before it is let go (one whose thread holds something that must not
	// outlive a forgotten owner).
	Idle time.Duration

	mu   sync.Mutex
	cur  *Worker[K, S]
	runs atomic.Int64 // commands started
}

// Worker is a locked OS thread, discarded afterwards, confined for one
// command and waiting for it ([Worker.Run]).
type Worker[K comparable, S any] struct {
	key   K
	state S // what the confinement left, once ready was read
	tid   atomic.Int64
	ready chan error
	jobs  chan func(S, error) // the command's start, once; nil lets the thread go
	// Confined waits for the confinement and returns its outcome.
	Confined func() error
}

// standbyThreads holds the thread ids of the workers, so that a check of
// a program's threads can tell the ones confined ahead, each locked to its
// goroutine, from the others ([IsWorkerThread]).
var standbyThreads sync.Map

// IsWorkerThread reports whether tid is a worker's thread, confined and
// waiting for its command or starting it.
func IsWorkerThread(tid int) bool {
	_, ok := standbyThreads.Load(tid)
	return ok
}

// New starts a worker confining its thread for a command of key k now.
func (s *Standby[K, S]) New(k K) *Worker[K, S] {
	w := &Worker[K, S]{key: k, ready: make(chan error, 1), jobs: make(chan func(S, error), 1)}
	w.Confined = sync.OnceValue(func() error { return <-w.ready })
	go func() {
		_ = OnDiscardedThread(func() error {
			tid := unix.Gettid()
			w.tid.Store(int64(tid))
			standbyThreads.Store(tid, struct{}{})
			defer standbyThreads.Delete(tid)
			st, err := s.Confine(k)
			w.state = st
			w.ready <- err
			f := s.wait(w)
			if err != nil || f == nil {
				s.Release(st)
				if f != nil {
					var zero S
					f(zero, err)
				}
				return nil
			}
			f(st, nil)
			return nil
		})
	}()
	return w
}

// wait waits for w's command. With Idle, a standby left waiting that long
// leaves the slot and is let go, unless it was taken meanwhile (its command
// then comes).
func (s *Standby[K, S]) wait(w *Worker[K, S]) func(S, error) {
	if s.Idle <= 0 {
		return <-w.jobs
	}
	t := time.NewTimer(s.Idle)
	defer t.Stop()
	select {
	case f := <-w.jobs:
		return f
	case <-t.C:
	}
	s.mu.Lock()
	if s.cur == w {
		s.cur = nil
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	return <-w.jobs
}

// Take returns the standby if it was confined for k and its confinement
// worked, leaving none; otherwise nil. A standby whose confinement failed is
// let go: the command confines a thread of its own and reports why that
// fails.
func (s *Standby[K, S]) Take(k K) *Worker[K, S] {
	s.mu.Lock()
	w := s.cur
	if w == nil || w.key != k {
		s.mu.Unlock()
		return nil
	}
	s.cur = nil
	s.mu.Unlock()
	if w.Confined() != nil {
		w.LetGo()
		return nil
	}
	return w
}

// Prepare starts confining a standby for a command of key k, once a second
// command has started (see Standby), unless there is one for k; one for
// another key is let go. It is called once each command has started.
func (s *Standby[K, S]) Prepare(k K) {
	if s.runs.Add(1) < 2 {
		return
	}
	s.mu.Lock()
	old := s.cur
	if old != nil && old.key == k {
		s.mu.Unlock()
		return
	}
	s.cur = s.New(k)
	s.mu.Unlock()
	if old != nil {
		old.LetGo()
	}
}

// Ahead confines a standby for a command of key k now, in place of any
// other, and waits for its confinement: a backend's probe at construction
// whose confined thread its first command then takes. A standby whose
// confinement failed is let go and the failure returned.
func (s *Standby[K, S]) Ahead(k K) error {
	w := s.New(k)
	if err := w.Confined(); err != nil {
		w.LetGo()
		return err
	}
	s.replace(w)
	return nil
}

// Close lets the standby go, if any.
func (s *Standby[K, S]) Close() { s.replace(nil) }

// replace makes w (or none) the standby and lets the one it replaces go.
func (s *Standby[K, S]) replace(w *Worker[K, S]) {
	s.mu.Lock()
	old := s.cur
	s.cur = w
	s.mu.Unlock()
	if old != nil {
		old.LetGo()
	}
}

// Current returns the standby without taking it, or nil.
func (s *Standby[K, S]) Current() *Worker[K, S] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// State returns what w's confinement left held; valid once Confined
// returned nil.
func (w *Worker[K, S]) State() S {
	_ = w.Confined()
	return w.state
}

// Tid returns w's thread id, or 0 before its thread started.
func (w *Worker[K, S]) Tid() int { return int(w.tid.Load()) }

// Run runs f on w's thread, with what its confinement left held (which f
// then owns) or the confinement's error, and returns once f has returned.
// A worker runs one f; Run and LetGo are called once, in all.
func (w *Worker[K, S]) Run(f func(S, error)) {
	done := make(chan struct{})
	w.jobs <- func(st S, err error) {
		defer close(done)
		f(st, err)
	}
	<-done
}

// LetGo lets w's thread go without a command.
func (w *Worker[K, S]) LetGo() { w.jobs <- nil }
