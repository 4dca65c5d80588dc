//go:build linux

package docker

import (
	"archive/tar"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/moby/profiles/seccomp"
	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

var (
	setIDHelperOnce sync.Once
	setIDHelperPath string
	setIDHelperErr  error
)

// setIDHelper builds testdata/setid statically, once, for the container,
// whose image has neither a compiler nor perl.
func setIDHelper(t *testing.T) string {
	t.Helper()
	setIDHelperOnce.Do(func() {
		dir, err := os.MkdirTemp("", "helikon-setid-helper-")
		if err != nil {
			setIDHelperErr = err
			return
		}
		setIDHelperPath = filepath.Join(dir, "setid")
		cmd := exec.Command("go", "build", "-o", setIDHelperPath, ".")
		cmd.Dir = filepath.Join("testdata", "setid")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			setIDHelperErr = err
			t.Logf("%s", out)
		}
	})
	if setIDHelperErr != nil {
		t.Skipf("cannot build the set-ID helper: %v", setIDHelperErr)
	}
	return setIDHelperPath
}

// setIDAttacks are the commands of the bind mode's set-ID attack: busybox's
// tools and, through the helper (at ./setid), the calls the tools do not
// make. Each runs in a directory of its own holding the fixture.
var setIDAttacks = []string{
	"chmod u+s f",
	"chmod 4755 f",
	"chmod g+s f",
	"mkdir d && chmod g+s d",
	"cp -p src-suid copy",
	"tar -xpf a.tar",
	"../setid open-creat $PWD/p",
	"../setid open-tmpfile $PWD/p",
	"../setid mknod $PWD/p",
	"../setid fchmodat2 $PWD/p",
	"../setid openat2 $PWD/p",
}

// TestAttackSetIDPlantBindMode leaves set-ID files in a bind-mounted root
// as the container's root (a root caller's uid): a set-user-ID-root
// program there runs as root for every user of this machine. Without the
// set-ID profile each command makes one; with it, none does.
func TestAttackSetIDPlantBindMode(t *testing.T) {
	helper := setIDHelper(t)
	plant := func(e *Engine) map[string][]string {
		ws := create(t, e)
		root := e.Dir()
		data, err := os.ReadFile(helper)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "setid"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		made := map[string][]string{}
		for i, cmd := range setIDAttacks {
			dir := filepath.Join(root, strconv.Itoa(i))
			setIDFixture(t, dir)
			res := run(t, ws, &backend.Request{Command: "cd " + dir + " && " + cmd})
			t.Logf("%s: exit %s: %s%s", cmd, exitString(res), res.Stdout, res.Stderr)
			if files := setIDFiles(t, dir); len(files) > 0 {
				made[cmd] = files
			}
		}
		return made
	}
	weak := newEngine(t, Options{Root: bindRoot(t), User: "0:0"})
	if weak.setID == nil {
		t.Skip("the daemon applies no seccomp profile: the set-ID profile is not used")
	}
	weak.weaken.setID = true
	made := plant(weak)
	for _, cmd := range setIDAttacks {
		// fchmodat2 (Linux 6.6) is refused by a daemon whose default
		// profile or libseccomp predates it (Debian 12's docker.io).
		if _, ok := made[cmd]; !ok && !strings.Contains(cmd, "fchmodat2") {
			t.Errorf("without the set-ID profile %q made no set-ID file: the test shows nothing", cmd)
		}
	}
	e := newEngine(t, Options{Root: bindRoot(t), User: "0:0"})
	if made := plant(e); len(made) > 0 {
		t.Errorf("set-ID files planted in the bind-mounted root: %v", made)
	}
}

// TestBindModeKeepsOrdinaryModes runs what builds do with modes under the
// set-ID profile: they must keep working.
func TestBindModeKeepsOrdinaryModes(t *testing.T) {
	e := newEngine(t, Options{Root: bindRoot(t), User: "0:0"})
	ws := create(t, e)
	got := sh(t, ws, `set -e
echo x > f && chmod +x f && chmod 0644 f && chmod u=rwx,go=rx f && chmod 1777 f
mkdir -p d/a && cp -p f d/fp && cp -a d d2 && tar -cf t.tar f d && mkdir x && tar -xpf t.tar -C x
echo done`)
	if !strings.Contains(got, "done") {
		t.Errorf("got %q", got)
	}
}

// TestSetIDProfileKeepsTheDefault checks the profile against Docker's
// default: the same default action and architectures, every syscall the
// default allows still allowed (the mode-taking ones under conditions),
// and the conditions on the right arguments.
func TestSetIDProfileKeepsTheDefault(t *testing.T) {
	raw, err := setIDProfile()
	if err != nil {
		t.Fatal(err)
	}
	var p seccomp.Seccomp
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	def := seccomp.DefaultProfile()
	if p.DefaultAction != def.DefaultAction || len(p.ArchMap) != len(def.ArchMap) {
		t.Errorf("default action %s, %d architectures; want %s, %d", p.DefaultAction, len(p.ArchMap), def.DefaultAction, len(def.ArchMap))
	}
	names := func(s *seccomp.Seccomp, conditional bool) map[string]bool {
		out := map[string]bool{}
		for _, r := range s.Syscalls {
			if r.Action == "SCMP_ACT_ALLOW" && (len(r.Args) > 0) == conditional {
				for _, n := range r.Names {
					out[n] = true
				}
			}
		}
		return out
	}
	plain, cond := names(&p, false), names(&p, true)
	for n := range names(def, false) {
		_, modeCall := setIDModeArg[n]
		switch {
		case n == "openat2":
			if plain[n] || cond[n] {
				t.Errorf("openat2 is allowed; want ENOSYS")
			}
		case modeCall && (plain[n] || !cond[n]):
			t.Errorf("%s: allowed without condition %v, with %v; want only with a condition", n, plain[n], cond[n])
		case !modeCall && !plain[n]:
			t.Errorf("%s: the default allows it, the set-ID profile does not", n)
		}
	}
	for _, r := range p.Syscalls {
		if r.Comment != setIDComment {
			continue
		}
		a := r.Args[0]
		want := setIDModeArg[r.Names[0]]
		if a.Value != setIDBits {
			want = createFlagsArg[r.Names[0]]
		}
		if len(r.Args) != 1 || a.Index != want || a.ValueTwo != 0 || a.Op != "SCMP_CMP_MASKED_EQ" {
			t.Errorf("%s: args %+v, want argument %d masked to 0", r.Names, r.Args, want)
		}
	}
}

func exitString(r *backend.Result) string {
	if r.ExitCode == nil {
		return "none"
	}
	return strconv.Itoa(*r.ExitCode)
}

// setIDFixture makes dir with what the attacks start from: a plain
// executable f, a set-user-ID file src-suid (the source of cp -p), and
// a.tar holding a set-user-ID entry.
func setIDFixture(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		mode fs.FileMode
	}{{"f", 0o755}, {"src-suid", 0o755 | fs.ModeSetuid}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\nid\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	out, err := os.Create(filepath.Join(dir, "a.tar"))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(out)
	body := "#!/bin/sh\nid\n"
	if err := tw.WriteHeader(&tar.Header{Name: "t-suid", Mode: 0o4755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// setIDFiles lists what under dir has a set-ID bit, but the fixture's
// src-suid.
func setIDFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return err
		}
		if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 && d.Name() != "src-suid" {
			out = append(out, d.Name()+" "+strconv.FormatUint(uint64(st.Mode&0o7777), 8))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
