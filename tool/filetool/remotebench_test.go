package filetool_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/workspace/execfs"
)

// BenchmarkRemoteRoundTrip is BenchmarkSmallFileRoundTrip on a remote
// file system (package execfs, each exec a local /bin/sh process), through
// the permission check, so that Write and Edit check where a link leads:
// the time of one call and, as execs/op, the round trips it costs a remote
// workspace.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	r := &execRunner{}
	fsys, err := execfs.New(context.Background(), r, root, nil)
	if err != nil {
		b.Fatal(err)
	}
	smallFileRoundTrips(b, root, fsys, func() func(*testing.B) {
		before := r.execs.Load()
		return func(b *testing.B) { b.ReportMetric(float64(r.execs.Load()-before)/float64(b.N), "execs/op") }
	})
}
