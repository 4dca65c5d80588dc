//go:build linux

package docker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/filetool"
)

// The rootless tests run as an ordinary user against that user's own
// daemon (testdata/ci-setup.sh rootless-start, rootless-docker-start), from
// a test binary built by root with go test -c and run as the user:
//
//	go test -c -o /tmp/docker.test ./workspace/docker
//	runuser -u helikon-rootless -- env -i HOME=/home/helikon-rootless \
//	    HELIKON_ROOTLESS_PODMAN_HOST=unix:///run/helikon-rootless/podman.sock \
//	    /tmp/docker.test -test.run 'TestRootless'
const (
	rootlessPodmanEnv = "HELIKON_ROOTLESS_PODMAN_HOST"
	rootlessDockerEnv = "HELIKON_ROOTLESS_DOCKER_HOST"
)

// TestRootlessPodman: on rootless Podman the bind mode runs commands in
// the keep-id user namespace, as the caller's uid, so that the issue's
// flow writes files the caller owns on this machine; the isolated mode
// works as before; a User the daemon does not map to the caller is
// refused; the attacks that say what the container enforces fail; and
// the whole workspace suite passes in both modes.
func TestRootlessPodman(t *testing.T) {
	testRootless(t, rootlessPodmanEnv, nsRootlessPodman)
}

// TestRootlessDocker is TestRootlessPodman on rootless Docker (dockerd
// under rootlesskit), where the bind mode's commands run as the
// container's root, which is the caller on this machine.
func TestRootlessDocker(t *testing.T) {
	testRootless(t, rootlessDockerEnv, nsRootlessDocker)
}

func testRootless(t *testing.T, env string, want userNS) {
	host := os.Getenv(env)
	if host == "" {
		t.Skipf("%s is not set; run testdata/ci-setup.sh and this test binary as the rootless user (see rootless_test.go)", env)
	}
	if os.Getuid() == 0 {
		t.Fatalf("%s is set but this test runs as root: run it as the rootless daemon's user", env)
	}
	t.Setenv("DOCKER_HOST", host)
	e := newEngine(t, Options{Root: bindRoot(t)})
	if e.userns != want {
		t.Fatalf("the daemon at %s was detected as %s, want %s", host, e.userns, want)
	}
	networkNone := TestAttackNetworkNoneHasOnlyLoopback
	if want == nsRootlessDocker {
		networkNone = func(t *testing.T) {
			// Its control needs the default network, which dockerd under
			// rootlesskit --net=host (ci-setup.sh) cannot create.
			t.Skip("rootless Docker runs with rootlesskit --net=host here: the test's control needs a bridge network")
		}
	}
	for name, test := range map[string]func(*testing.T){
		"DoneWhenBind":        testRootlessFlow(false),
		"DoneWhenIsolated":    testRootlessFlow(true),
		"GuaranteesSayIt":     testRootlessGuarantees(want),
		"OtherUserRefused":    testAttackRootlessOtherUserIsRefused,
		"LimitsRefused":       testRootlessLimitsRefused,
		"CapabilitiesDropped": testAttackRootlessCapabilitiesAreDropped,
		"NoNewPrivileges":     TestAttackNoNewPrivileges,
		"NetworkNone":         networkNone,
		"IsolatedLeavesHost":  TestAttackIsolatedModeLeavesTheHostUntouched,
		// The whole workspace suite, in both modes, as on a rootful daemon.
		"ConformanceBind":     TestWorkspaceConformanceBind,
		"ConformanceIsolated": TestWorkspaceConformanceIsolated,
	} {
		t.Run(name, test)
	}
}

// testRootlessFlow is the done-when flow through the tools, as a
// model would call them: Write a script, run it with Bash (it reads a.txt,
// writes b.txt and says who it runs as), Edit the script, run it again,
// Read the result. In the bind mode every file in the root belongs to the
// caller on this machine afterwards; in the isolated mode, to the
// commands' user in the container, and the root on this machine is
// untouched.
func testRootlessFlow(isolate bool) func(*testing.T) {
	return func(t *testing.T) {
		root := bindRoot(t)
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ws := create(t, newEngine(t, Options{Root: root, Isolate: isolate}))
		bash, err := bashtool.New[struct{}](ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		tc := helikon.NewToolContext(t.Context(), struct{}{}, &helikon.RunConfig{Mode: helikon.ModeBypass})
		call := func(tool helikon.Tool[struct{}], args string) map[string]any {
			t.Helper()
			out, err := helikon.CallTool(tc, nil, tool, json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s %s: %v", tool.Name(), args, err)
			}
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("%s: %s: %v", tool.Name(), out, err)
			}
			return m
		}
		call(filetool.NewWrite[struct{}](ws, nil), `{"path":"run.sh","content":"cat a.txt\necho x > b.txt\nid -u\n"}`)
		out := call(bash, `{"command":"sh run.sh"}`)
		if out["stderr"] != "" || !strings.HasPrefix(out["stdout"].(string), "hello\n") {
			t.Fatalf("Bash sh run.sh: %v", out)
		}
		uid := strings.TrimPrefix(out["stdout"].(string), "hello\n")
		call(filetool.NewEdit[struct{}](ws, nil), `{"path":"run.sh","old_string":"echo x","new_string":"echo edited"}`)
		if out := call(bash, `{"command":"sh run.sh && ls -n"}`); out["stderr"] != "" {
			t.Fatalf("Bash after the edit: %v", out)
		}
		if got := call(filetool.NewRead[struct{}](ws, nil), `{"path":"b.txt"}`)["content"]; got != "edited\n" {
			t.Errorf("Read b.txt = %q, want the edited script's output", got)
		}
		if isolate {
			// The commands' user owns what the tools and the commands wrote.
			if got := sh(t, ws, "stat -c %u run.sh b.txt"); got != uid+uid {
				t.Errorf("in the container run.sh and b.txt belong to %q, want the commands' uid %q twice", got, uid)
			}
			if _, err := os.Lstat(filepath.Join(root, "b.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the isolated mode wrote b.txt on this machine: %v", err)
			}
			return
		}
		for _, name := range []string{".", "a.txt", "run.sh", "b.txt"} {
			fi, err := os.Lstat(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
				t.Errorf("%s belongs to %d:%d on this machine, want the caller %d:%d", name, st.Uid, st.Gid, os.Getuid(), os.Getgid())
			}
		}
		// The caller can change and remove what the commands wrote.
		if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
			t.Errorf("the caller cannot remove b.txt: %v", err)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 2 {
			t.Errorf("the root holds %d entries after the flow, want a.txt and run.sh (no owner-check file left)", len(entries))
		}
	}
}

func testRootlessGuarantees(want userNS) func(*testing.T) {
	return func(t *testing.T) {
		e := newEngine(t, Options{Root: bindRoot(t)})
		g := create(t, e).Guarantees()
		features := strings.Join(g.Features, "\n")
		if !strings.Contains(features, "user namespace: "+want.String()) || !strings.Contains(features, "no host root anywhere") {
			t.Errorf("the guarantees do not name the rootless daemon:\n%s", features)
		}
		if !strings.Contains(features, "capabilities: all dropped; no-new-privileges") {
			t.Errorf("the guarantees lost the capabilities line:\n%s", features)
		}
	}
}

// testAttackRootlessOtherUserIsRefused: in the bind mode, a User that the
// rootless daemon maps to a subordinate id (anyone but the caller under
// keep-id, anyone but root under rootless Docker) would write files the
// caller cannot change; the owner check refuses the workspace. Without the
// check Create succeeds and a command's file belongs to a subordinate id.
func testAttackRootlessOtherUserIsRefused(t *testing.T) {
	root := bindRoot(t)
	if err := os.Chmod(root, 0o777); err != nil { // so that the other uid could write
		t.Fatal(err)
	}
	other := strconv.Itoa(os.Getuid()+1) + ":" + strconv.Itoa(os.Getgid()+1)
	e := newEngine(t, Options{Root: root, User: other})
	ws, err := e.Create(t.Context(), session(t))
	if err == nil {
		ws.Close(context.Background())
	}
	if !errors.Is(err, ErrUserMapping) {
		t.Fatalf("Create as %s in the bind mode: %v, want ErrUserMapping", other, err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the refused Create left %d entries in the root", len(entries))
	}
}

// testRootlessLimitsRefused: on a rootless daemon without cgroup v2
// delegation, a container limit asked for is refused at New, not
// silently dropped; with none asked for, the guarantees say there is none.
func testRootlessLimitsRefused(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	if e.noPids == "" {
		t.Skip("this daemon enforces the container limits (cgroup v2 delegated)")
	}
	if !strings.Contains(strings.Join(e.Guarantees().Features, "\n"), "container limits: none") {
		t.Errorf("the guarantees do not say that there are no container limits: %v", e.Guarantees().Features)
	}
	for _, o := range []Options{{Memory: 64 << 20}, {CPUs: 1}, {Limits: backend.ResourceLimits{Processes: 100}}} {
		o.Isolate, o.Image = true, image()
		if _, err := New(t.Context(), &o); !errors.Is(err, ErrLimitsUnsupported) {
			t.Errorf("New with %+v: %v, want ErrLimitsUnsupported", o, err)
		}
	}
}

// testAttackRootlessCapabilitiesAreDropped is TestAttackCapabilitiesAreDropped
// where a user namespace forbids mknod to everyone: root in the container
// chowns a file with the default capabilities, and cannot without them.
func testAttackRootlessCapabilitiesAreDropped(t *testing.T) {
	const attack = "touch f && chown 1:1 f && echo chowned"
	weak := newEngine(t, Options{Isolate: true, User: "0"})
	weak.weaken.keepCaps = true
	if got := sh(t, create(t, weak), attack+"; true"); !strings.Contains(got, "chowned") {
		t.Fatalf("with the default capabilities, root in the container could not chown (%q): the test shows nothing", got)
	}
	ws := create(t, newEngine(t, Options{Isolate: true, User: "0"}))
	if got := sh(t, ws, attack+"; true"); strings.Contains(got, "chowned") {
		t.Errorf("root in the workspace used CAP_CHOWN: %q", got)
	}
	if got := sh(t, ws, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status"); strings.Count(got, "0000000000000000") != 3 {
		t.Errorf("capability sets are not empty:\n%s", got)
	}
}
