package agentsandbox

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// keeperScript is the keeper's exec: it reads "+ PID" and "- PID" lines
// (a process started, a process ended) and, when its input ends (this
// process closed it, or died and its stream with it, whose end the kubelet
// passes on as the end of the exec's input), ends the tree of every PID
// still listed with killTree ($1).
const keeperScript = `kt=$1
pids=
while read -r op p; do
	case $op in
	+) pids="$pids $p" ;;
	-) n=; for q in $pids; do [ "$q" = "$p" ] || n="$n $q"; done; pids=$n ;;
	esac
done
for p in $pids; do sh -c "$kt" helikon "$p"; done`

// keeper is a workspace's keeper exec and the processes it keeps: the way
// a started process ends when the helikon process that started it dies,
// also of SIGKILL, since the kubelet does not end an exec whose stream
// closed.
type keeper struct {
	w    *Workspace
	mu   sync.Mutex
	in   *io.PipeWriter     // the keeper's input; nil when none runs
	stop context.CancelFunc // drops the keeper's stream, as a death would
	done chan struct{}      // closed when the keeper's exec ended
	pids map[int]bool
}

// keepers are the workspaces' keepers, made by the first Start of each.
var keepers sync.Map // *Workspace → *keeper

// keeperOf returns w's keeper.
func (w *Workspace) keeperOf() *keeper {
	k, _ := keepers.LoadOrStore(w, &keeper{w: w, pids: map[int]bool{}})
	return k.(*keeper)
}

// ensure starts the keeper exec when none runs (a command may have killed
// it) and hands it the pids it keeps. k.mu is held.
func (k *keeper) ensure() error {
	if k.in != nil {
		select {
		case <-k.done:
			k.in = nil
		default:
			return nil
		}
	}
	if err := k.w.goneErr(); err != nil {
		return err
	}
	r, in := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stop()
		_, err := k.w.stream(ctx, []string{"sh", "-c", keeperScript, "helikon-keeper", killTree}, r, io.Discard, io.Discard)
		if err != nil && ctx.Err() == nil {
			k.w.e.log.Warn("k8s: the exec that ends processes left by this process ended", "pod", k.w.Pod(), "err", err)
		}
		r.CloseWithError(io.ErrClosedPipe)
	}()
	k.in, k.stop, k.done = in, stop, done
	for pid := range k.pids {
		if err := k.send('+', pid); err != nil {
			return err
		}
	}
	return nil
}

// send writes one line to the keeper. k.mu is held.
func (k *keeper) send(op byte, pid int) error {
	if _, err := fmt.Fprintf(k.in, "%c %d\n", op, pid); err != nil {
		return fmt.Errorf("k8s: tell the keeper exec about process %d: %w", pid, err)
	}
	return nil
}

// keep adds pid to the processes the keeper ends.
func (k *keeper) keep(pid int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pids[pid] = true
	if err := k.ensure(); err != nil {
		delete(k.pids, pid)
		return err
	}
	if err := k.send('+', pid); err != nil {
		k.in = nil
		if err := k.ensure(); err != nil { // hands it pid too
			delete(k.pids, pid)
			return err
		}
	}
	return nil
}

// forget removes pid, whose process ended, from the keeper's list; the
// keeper ends when it keeps nothing more.
func (k *keeper) forget(pid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.pids[pid] {
		return
	}
	delete(k.pids, pid)
	if k.in != nil {
		_ = k.send('-', pid)
		if len(k.pids) == 0 {
			k.in.Close()
			k.in = nil
			keepers.CompareAndDelete(k.w, k)
		}
	}
}

// sever drops the keeper's stream without a word, as this process's death
// would: for tests.
func (k *keeper) sever() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stop != nil {
		k.stop()
	}
}
