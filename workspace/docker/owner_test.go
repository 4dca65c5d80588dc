package docker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/moby/moby/client"
)

// TestIsolatedCopyBelongsToTheCommandsUser: in the isolated mode the copied
// root belongs to the user the commands run as (the image's, helikon
// 1000:1000, when none is set), resolved by name in the image's
// /etc/passwd or taken as given when numeric, so that a non-root user
// writes there.
func TestIsolatedCopyBelongsToTheCommandsUser(t *testing.T) {
	for _, tc := range []struct{ user, want string }{
		{"", "1000:1000"},
		{"helikon", "1000:1000"},
		{"nobody", "65534:65534"},
		{"65534", "65534:65534"}, // the primary group from /etc/passwd
		{"1000:65534", "1000:65534"},
		{"0", "0:0"},
	} {
		t.Run("user="+tc.user, func(t *testing.T) {
			root := bindRoot(t)
			e := newEngine(t, Options{Root: root, Isolate: true, User: tc.user})
			for i := range 2 { // the second Create reuses the first one's look-up
				ws := create(t, e)
				if _, err := ws.WriteFile(t.Context(), "through-fs.txt", []byte("fs\n")); err != nil {
					t.Fatalf("Create %d: WriteFile as %q: %v", i, tc.user, err)
				}
				got := sh(t, ws, `echo "$(id -u):$(id -g)" && touch by-command && stat -c %u:%g . through-fs.txt by-command`)
				want := fmt.Sprintf("%s\n%s\n%s\n%s\n", tc.want, tc.want, tc.want, tc.want)
				if got != want {
					t.Errorf("Create %d as %q: id and owners of the root and new files %q, want %q", i, tc.user, got, want)
				}
			}
		})
	}
}

// TestNumericOwnersNeedNoLookUp: a numeric uid:gid, and root, resolve
// without asking the daemon (here one that does not answer), a name or a
// bare uid does ask, and a name resolved once is not asked for again.
func TestNumericOwnersNeedNoLookUp(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	ws := create(t, e)
	dead, err := client.New(client.WithHost("unix:///nonexistent/helikon-test.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	live := e.cli
	e.cli = dead
	defer func() { e.cli = live }()
	for user, want := range map[string][2]int{"": {0, 0}, "1000:1000": {1000, 1000}, "0:0": {0, 0}} {
		uid, gid, err := e.owner(t.Context(), ws.id, user)
		if err != nil || [2]int{uid, gid} != want {
			t.Errorf("owner(%q) = %d, %d, %v; want %v without a look-up", user, uid, gid, err, want)
		}
	}
	for _, user := range []string{"nobody", "65534"} {
		if _, _, err := e.owner(t.Context(), ws.id, user); err == nil {
			t.Errorf("owner(%q) succeeded with no daemon: a name or a bare uid needs /etc/passwd", user)
		}
	}
	e.cli = live
	if _, _, err := e.owner(t.Context(), ws.id, "nobody"); err != nil {
		t.Fatal(err)
	}
	e.cli = dead
	if uid, gid, err := e.owner(t.Context(), ws.id, "nobody"); err != nil || uid != 65534 || gid != 65534 {
		t.Errorf("owner(nobody) after a look-up = %d, %d, %v; want the cached 65534, 65534", uid, gid, err)
	}
}

// TestAttackCapabilitiesKeptAreRefused: a container is accepted only when it
// keeps no capability, as Docker reports it (ALL dropped) or as Podman's
// service does (every default capability dropped by name); one default
// capability kept is refused.
func TestAttackCapabilitiesKeptAreRefused(t *testing.T) {
	podman := slices.Clone(defaultCaps)
	for _, tc := range []struct {
		name string
		drop []string
		want bool
	}{
		{"docker all", []string{"ALL"}, true},
		{"docker all lower case", []string{"all"}, true},
		{"podman every default by name", podman, true},
		{"podman with prefixes", prefixed(podman), true},
		{"none dropped", nil, false},
		{"NET_RAW kept", slices.DeleteFunc(slices.Clone(podman), func(c string) bool { return c == "NET_RAW" }), false},
		{"DAC_OVERRIDE kept", slices.DeleteFunc(slices.Clone(podman), func(c string) bool { return c == "DAC_OVERRIDE" }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dropsAllCaps(tc.drop); got != tc.want {
				t.Errorf("dropsAllCaps(%v) = %v, want %v", tc.drop, got, tc.want)
			}
		})
	}
}

func prefixed(caps []string) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = "CAP_" + c
	}
	return out
}
