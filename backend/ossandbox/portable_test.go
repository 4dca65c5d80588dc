package ossandbox

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

func TestSeatbeltProfile(t *testing.T) {
	off := seatbeltProfile(false, 0)
	on := seatbeltProfile(true, 0)
	for _, want := range []string{"(deny default)", `(subpath (param "HELIKON_ROOT"))`, `(subpath (param "HELIKON_TMP"))`, "(allow file-read*)", "(deny file-write-setugid)"} {
		if !strings.Contains(off, want) {
			t.Errorf("profile lacks %s", want)
		}
	}
	if strings.Contains(off, "network-outbound") || !strings.Contains(on, "(allow network-outbound)") {
		t.Error("network must be allowed exactly when asked")
	}
	if strings.Index(off, "(deny file-write-setugid)") < strings.Index(off, "(allow file-write*") {
		t.Error("the set-ID denial must follow the write allowance it narrows (the last matching rule wins)")
	}
	if strings.Count(off, "(") != strings.Count(off, ")") || strings.Count(on, "(") != strings.Count(on, ")") {
		t.Error("unbalanced parentheses")
	}
	// Paths are parameters, never profile text, whatever they contain.
	root := `/tmp/x") (allow file-write* (subpath "/`
	argv := seatbeltArgv("/usr/bin/sandbox-exec", false, root, "/tmp/t", nil, []string{"ls"})
	if strings.Contains(argv[2], root) || argv[4] != "HELIKON_ROOT="+root || argv[len(argv)-2] != "--" || argv[len(argv)-1] != "ls" {
		t.Errorf("argv = %q", argv)
	}
	// Read-only paths: a deny rule each, after the allow it narrows, the
	// paths as parameters.
	ro := seatbeltProfile(false, 2)
	allow := strings.Index(ro, "(allow file-write*")
	for _, want := range []string{`(deny file-write* (subpath (param "HELIKON_RO_0")))`, `(deny file-write* (subpath (param "HELIKON_RO_1")))`} {
		if i := strings.Index(ro, want); i < allow {
			t.Errorf("profile lacks %s after the allow", want)
		}
	}
	if strings.Contains(off, "deny file-write*") || strings.Count(ro, "(") != strings.Count(ro, ")") {
		t.Error("deny rules without read-only paths, or unbalanced parentheses")
	}
	argv = seatbeltArgv("/usr/bin/sandbox-exec", false, "/r", "/tmp/t", []string{root + "/.claude"}, []string{"ls"})
	if !slices.Contains(argv, "HELIKON_RO_0="+root+"/.claude") || strings.Contains(argv[2], root) {
		t.Errorf("argv = %q", argv)
	}
}

var prologueRE = regexp.MustCompile(`^ulimit -c 0( && ulimit -[tfvnu] [0-9]+)* \|\| exit 125; $`)

func TestPrologue(t *testing.T) {
	unlimited := func(byte) int64 { return -1 }
	l := backend.ResourceLimits{CPUSeconds: 35, FileSize: 1 << 30, AddressSpace: 1 << 32, OpenFiles: 256}
	if got, want := prologue(kindBash, l, 64, unlimited), "ulimit -c 0 && ulimit -t 35 && ulimit -f 1048576 && ulimit -v 4194304 && ulimit -n 256 && ulimit -u 64 || exit 125; "; got != want {
		t.Errorf("bash: %q, want %q", got, want)
	}
	if got := prologue(kindSh, l, -1, unlimited); !strings.Contains(got, "-f 2097152") || strings.Contains(got, "-u") {
		t.Errorf("sh: %q", got)
	}
	if got := prologue(kindBash, backend.ResourceLimits{FileSize: 10}, 0, unlimited); !strings.Contains(got, "-f 1 ") {
		t.Errorf("a limit below the unit must still limit: %q", got)
	}
	if got := prologue(kindBash, backend.ResourceLimits{OpenFiles: 1 << 20}, 0, func(byte) int64 { return 1024 }); !strings.Contains(got, "-n 1024 ") {
		t.Errorf("limits above the hard limit are lowered: %q", got)
	}
}

func FuzzPrologue(f *testing.F) {
	f.Add(int64(35), int64(1<<30), int64(0), int64(-1), int64(64), int64(-1))
	f.Fuzz(func(t *testing.T, cpu, fsize, as, nofile, procs, hard int64) {
		l := backend.ResourceLimits{CPUSeconds: cpu, FileSize: fsize, AddressSpace: as, OpenFiles: nofile}
		for _, k := range []shellKind{kindBash, kindSh} {
			got := prologue(k, l, procs, func(byte) int64 { return hard })
			if !prologueRE.MatchString(got) {
				t.Fatalf("prologue %q is not a plain ulimit line", got)
			}
		}
	})
}

func TestTighten(t *testing.T) {
	base := backend.ResourceLimits{CPUSeconds: 35, FileSize: 1 << 30, AddressSpace: 0, OpenFiles: -1, Processes: 1024}
	got := tighten(base, &backend.ResourceLimits{CPUSeconds: 1 << 40, FileSize: 10, AddressSpace: 1 << 30, OpenFiles: 64, Processes: -1})
	want := backend.ResourceLimits{CPUSeconds: 35, FileSize: 10, AddressSpace: 1 << 30, OpenFiles: 64, Processes: 1024}
	if got != want {
		t.Errorf("tighten = %+v, want %+v", got, want)
	}
	if tighten(base, nil) != base {
		t.Error("nil request must keep the backend's limits")
	}
}

func TestCleanRootRefusesSystemDirectories(t *testing.T) {
	for _, bad := range []string{"", "/", "/usr", "/etc", "/usr/lib", "/proc/self", "/dev", "/tmp", "/root"} {
		if r, err := cleanRoot(bad); err == nil {
			t.Errorf("cleanRoot(%q) = %q, want an error", bad, r)
		}
	}
	dir := t.TempDir()
	if _, err := cleanRoot(dir); err != nil {
		t.Errorf("cleanRoot(%q): %v", dir, err)
	}
}

// FuzzCleanRoot checks that no accepted root is, contains, or lies inside a
// directory that must not become writable.
func FuzzCleanRoot(f *testing.F) {
	for _, s := range []string{"/", "/tmp", "/usr/..", "/etc/../tmp", "//", "/proc/self/cwd", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		r, err := cleanRoot(p)
		if err != nil {
			return
		}
		for _, sys := range append([]string{"/", "/proc", "/dev", "/sys", "/tmp", "/home", "/root", "/var", "/run"}, SystemReadPaths...) {
			if r == sys || strings.HasPrefix(sys+"/", r+"/") {
				t.Fatalf("cleanRoot(%q) = %q contains %s", p, r, sys)
			}
		}
		for _, sys := range append([]string{"/proc", "/dev", "/sys"}, SystemReadPaths...) {
			if strings.HasPrefix(r, sys+"/") {
				t.Fatalf("cleanRoot(%q) = %q is inside %s", p, r, sys)
			}
		}
	})
}
