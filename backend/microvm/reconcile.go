package microvm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paigasus/helikon/internal/forkdapi"
)

// ReconcileReport is what [Backend.Reconcile] did.
type ReconcileReport struct {
	// Scanned is the number of sandboxes the controller listed (of every
	// snapshot tag).
	Scanned int `json:"scanned"`
	// Reaped is the number of this snapshot's sandboxes destroyed.
	Reaped int `json:"reaped"`
	// Failed is the number of deletes that failed (they are retried by the
	// next Reconcile).
	Failed int `json:"failed"`
	// SkippedUnageable counts this snapshot's sandboxes without a usable
	// creation time (or with an id this client refuses to use), which are
	// left alone.
	SkippedUnageable int `json:"skipped_unageable"`
	// SkippedWorkspaces counts this snapshot's sandboxes that are the live
	// microVM of a controller workspace (helikon's workspaces among them),
	// which only their owner or a workspace reap destroys.
	SkippedWorkspaces int `json:"skipped_workspaces"`
}

// Reconcile reaps leaked microVMs: it lists the controller's sandboxes and
// destroys those of this backend's snapshot tag that are strictly older
// than ReapAge, ReapConcurrency at a time. Detection is by age only and
// keeps no state, so several processes sharing a controller may each run
// it; ReapAge must exceed the longest command plus clock skew, or a running
// command's microVM is reaped. The live microVMs of the controller's
// workspaces are left alone: they outlive any one command by design. Only
// a failed list is an error; a failed delete is counted in the report and
// logged.
func (b *Backend) Reconcile(ctx context.Context) (ReconcileReport, error) {
	var rep ReconcileReport
	list, err := b.client.List(ctx)
	if err != nil {
		return rep, fmt.Errorf("forkd reconcile: %w", err)
	}
	workspaces, err := b.client.ListWorkspaces(ctx)
	if err != nil && !errors.Is(err, ErrNotFound) { // a controller without workspaces answers 404
		return rep, fmt.Errorf("forkd reconcile: %w", err)
	}
	held := map[string]bool{}
	for _, ws := range workspaces {
		if ws.LiveSandboxID != "" {
			held[ws.LiveSandboxID] = true
		}
	}
	rep.Scanned = len(list)
	age := b.opts.ReapAge
	if age <= 0 {
		age = DefaultReapAge
	}
	now := time.Now
	if b.opts.Now != nil {
		now = b.opts.Now
	}
	cutoff := now().Add(-age)
	var victims []string
	for _, s := range list {
		if s.SnapshotTag != b.opts.Snapshot {
			continue
		}
		if held[s.ID] {
			rep.SkippedWorkspaces++
			continue
		}
		if s.CreatedAt.IsZero() || !forkdapi.ValidID(s.ID) {
			rep.SkippedUnageable++
			continue
		}
		if s.CreatedAt.Before(cutoff) {
			victims = append(victims, s.ID)
		}
	}
	conc := b.opts.ReapConcurrency
	if conc <= 0 {
		conc = DefaultReapConcurrency
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, conc)
	)
	for _, id := range victims {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := b.client.Delete(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				rep.Failed++
				b.logger().Warn("forkd reconcile: delete failed", "id", id, "err", err)
				return
			}
			rep.Reaped++
		}()
	}
	wg.Wait()
	return rep, nil
}
