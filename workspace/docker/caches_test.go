package docker

import (
	"context"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
)

// TestNamedCachesAcrossWorkspaces: with Caches, what a command of one
// session's container leaves in GOCACHE a later session's container (a new
// container) finds, in the bind mode and the isolated mode alike, as the
// container's user; without Caches a new container starts cold.
func TestNamedCachesAcrossWorkspaces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		isolate bool
		caches  string
		warm    bool
	}{
		{"bind, project", false, "project", true},
		{"isolated, project", true, "project", true},
		{"isolated, none", true, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := bindRoot(t)
			opts := Options{Root: root, Isolate: tc.isolate, Caches: tc.caches}
			e := newEngine(t, opts)
			if e.cacheVolume != "" {
				t.Cleanup(func() {
					_, _ = e.cli.VolumeRemove(context.Background(), e.cacheVolume, client.VolumeRemoveOptions{Force: true})
				})
			}
			first := create(t, e)
			out := run(t, first, &backend.Request{Command: `d="${GOCACHE:-$HOME/.cache/go-build}"; mkdir -p "$d" && echo warm > "$d/entry" && echo "$d"`})
			if tc.caches != "" && strings.TrimSpace(string(out.Stdout)) != CacheDir+"/go-build" {
				t.Fatalf("GOCACHE = %q; want %s/go-build", out.Stdout, CacheDir)
			}
			first.Close(t.Context())
			second := create(t, e)
			got := strings.TrimSpace(string(run(t, second, &backend.Request{Command: `d="${GOCACHE:-$HOME/.cache/go-build}"; cat "$d/entry" 2>/dev/null || echo cold`}).Stdout))
			want := map[bool]string{true: "warm", false: "cold"}[tc.warm]
			if got != want {
				t.Errorf("the second session's container finds %q; want %q", got, want)
			}
		})
	}
}

// TestNamedCachesNeedAProject: the project scope without a root, or a
// scope not known, fails New.
func TestNamedCachesNeedAProject(t *testing.T) {
	for _, o := range []Options{{Isolate: true, Caches: "project"}, {Root: t.TempDir(), Caches: "everyone"}} {
		if _, err := New(t.Context(), &o); err == nil || !strings.Contains(err.Error(), "Caches") {
			t.Errorf("New(%+v): %v; want an error naming Caches", o, err)
		}
	}
}
