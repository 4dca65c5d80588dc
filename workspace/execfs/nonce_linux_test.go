package execfs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/workspace/execfs"
)

// peekingRunner runs each script as localRunner does, but holds back the
// last byte of its standard input and, while the script waits for it,
// reads every process's argument vector and environment in /proc, as a
// neighbour process in the workspace can, looking for the call's nonce.
type peekingRunner struct {
	path  string
	found []string // where a nonce was seen
	execs int
}

// nonceOf returns the nonce of a call: the argument after the root, or,
// when that is "-", the first line of standard input.
func nonceOf(argv []string, stdin []byte) string {
	if len(argv) < 6 {
		return ""
	}
	if argv[5] != "-" {
		return argv[5]
	}
	line, _, _ := bytes.Cut(stdin, []byte("\n"))
	return string(line)
}

func (r *peekingRunner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	r.execs++
	nonce := nonceOf(argv, stdin)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + r.path}
	cmd.Dir = "/"
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, 0, err
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return nil, nil, 0, err
	}
	held := stdin
	if len(stdin) > 0 {
		// The script reads the nonce line and waits for the rest: it runs,
		// with its arguments and environment in /proc, while we look.
		in.Write(stdin[:len(stdin)-1])
		held = stdin[len(stdin)-1:]
	}
	if nonce != "" {
		r.found = append(r.found, scanProc(nonce)...)
	}
	in.Write(held)
	in.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.Bytes(), errb.Bytes(), ee.ExitCode(), nil
	}
	return out.Bytes(), errb.Bytes(), 0, err
}

// scanProc returns the /proc files, cmdline or environ of any process this
// one may read, that hold nonce.
func scanProc(nonce string) []string {
	var found []string
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join(p, f)); err == nil && bytes.Contains(b, []byte(nonce)) {
				found = append(found, filepath.Join(p, f))
			}
		}
	}
	return found
}

// TestNonceIsNotVisibleToNeighbours is the attack test of the reply's nonce:
// while a script runs (here held waiting for the last byte of its input), a
// process of the workspace that reads every other's command line and
// environment in /proc, as any process of the same user may, finds no
// nonce, so it cannot forge a reply. A runner without standard input
// (forkd) carries the nonce in an argument: see the package doc.
func TestNonceIsNotVisibleToNeighbours(t *testing.T) {
	for _, sh := range shells(t) {
		if sh.opts.NoStdin {
			continue
		}
		t.Run(sh.name, func(t *testing.T) {
			r := &peekingRunner{path: sh.r.path}
			root := t.TempDir()
			ctx := context.Background()
			f, err := execfs.New(ctx, r, root, &sh.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteFile(ctx, "d/a", []byte("some data")); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Stat(ctx, "d/a"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.ReadDir(ctx, "d"); err != nil {
				t.Fatal(err)
			}
			if err := f.Rename(ctx, "d/a", "d/b"); err != nil {
				t.Fatal(err)
			}
			if err := f.Remove(ctx, "d/b"); err != nil {
				t.Fatal(err)
			}
			if r.execs < 5 {
				t.Fatalf("%d execs, want one per operation", r.execs)
			}
			if len(r.found) > 0 {
				t.Errorf("a call's nonce is readable by other processes in %v", r.found)
			}
		})
	}
}
