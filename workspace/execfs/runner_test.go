package execfs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/workspace/execfs"
)

// localRunner is a real Runner: it runs argv as a process on this machine
// with a fixed PATH, as an engine's exec runs it in a container.
type localRunner struct {
	path    string // PATH of the commands
	noStdin bool   // refuse stdin, as forkd's API has none
	execs   atomic.Int64
}

func (r *localRunner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	r.execs.Add(1)
	if r.noStdin && stdin != nil {
		return nil, nil, 0, errors.New("local runner: this runner takes no stdin")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + r.path}
	cmd.Dir = "/"
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out := &capped{max: maxStdout}
	var errb capped
	errb.max = 64 << 10
	cmd.Stdout, cmd.Stderr = out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, nil, 0, ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.b.Bytes(), errb.b.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return nil, nil, 0, err
	}
	return out.b.Bytes(), errb.b.Bytes(), 0, nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	b   bytes.Buffer
	max int64
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - int64(c.b.Len()); room > 0 {
		c.b.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}

// shell is one world the scripts run in: a shell and the tools on its
// PATH, and the options of the runner.
type shell struct {
	name string
	r    *localRunner
	opts execfs.Options
}

// shells returns dash, bash and, when busybox is installed, a busybox-only
// world (a PATH holding nothing but busybox's applets, as in the test
// image of the container engines), each plain and, for busybox and dash,
// also as a forkd-like runner: no stdin, text-only output (busybox with
// its base64, dash with a PATH without one, so od and printf escapes
// carry the bytes).
func shells(t testing.TB) []shell {
	t.Helper()
	sys := "/usr/local/bin:/usr/bin:/bin"
	var list []shell
	for _, sh := range []string{"dash", "bash"} {
		p, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("no %s: %v", sh, err)
			continue
		}
		list = append(list, shell{sh, &localRunner{path: sys}, execfs.Options{Shell: p}})
	}
	if bb, err := exec.LookPath("busybox"); err == nil {
		dir := t.TempDir()
		out, err := exec.Command(bb, "--list").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, applet := range strings.Fields(string(out)) {
			if err := os.Symlink(bb, filepath.Join(dir, applet)); err != nil {
				t.Fatal(err)
			}
		}
		list = append(list, shell{"busybox", &localRunner{path: dir}, execfs.Options{Shell: filepath.Join(dir, "sh")}})
		list = append(list, shell{"busybox-forkd", &localRunner{path: dir, noStdin: true}, execfs.Options{Shell: filepath.Join(dir, "sh"), NoStdin: true, TextOnly: true}})
	} else {
		t.Logf("no busybox (apt-get install busybox-static): %v", err)
	}
	if p, err := exec.LookPath("dash"); err == nil {
		// Without base64, so that replies go through od and data through
		// printf escapes.
		dir := t.TempDir()
		for _, tool := range []string{"cat", "chmod", "chown", "dd", "ls", "mkdir", "mv", "od", "pwd", "readlink", "rm", "rmdir", "stat", "ln", "mkfifo", "test"} {
			tp, err := exec.LookPath(tool)
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			if err := os.Symlink(tp, filepath.Join(dir, tool)); err != nil {
				t.Fatal(err)
			}
		}
		list = append(list, shell{"dash-forkd-od", &localRunner{path: dir, noStdin: true}, execfs.Options{Shell: p, NoStdin: true, TextOnly: true}})
	}
	return list
}

// newFS opens an FS on a fresh root directory through sh; opts overrides
// sh's options where set.
func newFS(t testing.TB, sh shell, mod func(*execfs.Options)) (*execfs.FS, string) {
	t.Helper()
	root := t.TempDir()
	o := sh.opts
	if mod != nil {
		mod(&o)
	}
	f, err := execfs.New(context.Background(), sh.r, root, &o)
	if err != nil {
		t.Fatalf("%s: New: %v", sh.name, err)
	}
	return f, root
}

// The text-only worlds cover both encodings: busybox's has base64, the
// dash one has not (od and printf escapes).
func TestTextOnlyWorldsCoverBothEncodings(t *testing.T) {
	for _, sh := range shells(t) {
		if !sh.opts.TextOnly {
			continue
		}
		_, _, code, err := sh.r.Exec(context.Background(), []string{sh.opts.Shell, "-c", "command -v base64"}, nil, 1<<10)
		if err != nil {
			t.Fatal(err)
		}
		if has, want := code == 0, sh.name == "busybox-forkd"; has != want {
			t.Errorf("%s: base64 available %v, want %v", sh.name, has, want)
		}
	}
}

// TestResolvedRootNeedsNoExec: New runs one exec to resolve the root, none
// when the caller says it is resolved (except for a runner without stdin or
// with text only, which New also asks whether base64 is there), and the
// file system works either way.
func TestResolvedRootNeedsNoExec(t *testing.T) {
	for _, sh := range shells(t) {
		for _, resolved := range []bool{false, true} {
			o := sh.opts
			o.Resolved = resolved
			root := t.TempDir()
			before := sh.r.execs.Load()
			f, err := execfs.New(context.Background(), sh.r, root, &o)
			if err != nil {
				t.Fatalf("%s resolved=%v: New: %v", sh.name, resolved, err)
			}
			want := int64(1)
			if resolved && !o.NoStdin && !o.TextOnly {
				want = 0
			}
			if got := sh.r.execs.Load() - before; got != want {
				t.Errorf("%s resolved=%v: New ran %d execs, want %d", sh.name, resolved, got, want)
			}
			if _, err := f.WriteFile(context.Background(), "a", []byte("x")); err != nil {
				t.Errorf("%s resolved=%v: WriteFile: %v", sh.name, resolved, err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "a")); err != nil || string(b) != "x" {
				t.Errorf("%s resolved=%v: the file holds %q, %v", sh.name, resolved, b, err)
			}
		}
	}
}
