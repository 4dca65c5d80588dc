// Package workspacetest is the conformance suite of the [workspace.Workspace]
// contract: the same calls, run against every engine's workspace (local,
// Docker, forkd, and any of your own), so that the file tools and the Bash
// tool see one behaviour wherever the workspace lives.
//
// It checks what the contract promises: confinement of every [workspace.FS]
// method (".." and absolute paths outside the root refused, absolute paths
// inside accepted, symbolic links made by a command inside the workspace
// that lead out — to its "/", to /etc, or climbing out with ".." — refused
// with [workspace.ErrOutside], links inside followed); the errors callers
// branch on; atomic writes that keep an existing file's mode and create
// missing parents; one state shared by the file system and the commands,
// both ways, and kept across commands; Rename and Remove; concurrent use
// (run it under -race); Close, after which every method fails with
// [workspace.ErrGone]; and the [workspace.Info] fields. The command half
// is [backendtest.Run], run on the workspace.
//
// The suite runs commands with sh, ln, mkfifo, chmod, cat, test and pwd, so
// the workspace's image must have them (busybox does).
package workspacetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/backendtest"
	"github.com/paigasus/helikon/workspace"
)

// Options tunes the suite to what an engine can do. The zero value (or
// nil) runs every case.
type Options struct {
	// Backend tunes the command half ([backendtest.Run]); nil means its
	// defaults. Its RemoteDir is set for you when Remote is.
	Backend *backendtest.Options
	// Remote says that the workspace's Dir is a directory on another
	// machine (a container's, a microVM's): the suite then checks it with
	// commands only, never with this machine's file system.
	Remote bool
	// Engine and Session, when set, are the values [workspace.Info] must
	// report; otherwise they must only be non-empty.
	Engine, Session string
	// NoFIFO skips the cases that need mkfifo in the workspace.
	NoFIFO bool
	// NoChanged skips the case that changes a file through a command while
	// [workspace.FS.UpdateFile] runs, for engines whose update cannot see
	// such a change.
	NoChanged bool
}

// Run runs the conformance suite as subtests of t. open must return a new,
// empty workspace each time it is called, and arrange for it to be closed
// (t.Cleanup) if the test does not close it. opts may be nil.
func Run(t *testing.T, open func(t *testing.T) workspace.Workspace, opts *Options) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	bopts := backendtest.Options{}
	if opts.Backend != nil {
		bopts = *opts.Backend
	}
	bopts.RemoteDir = bopts.RemoteDir || opts.Remote

	t.Run("Backend", func(t *testing.T) { backendtest.Run(t, open(t), &bopts) })
	t.Run("Confinement", func(t *testing.T) { confinement(t, open(t)) })
	t.Run("Errors", func(t *testing.T) { errorCases(t, open(t), opts) })
	t.Run("Write", func(t *testing.T) { writeCases(t, open(t)) })
	t.Run("SharedState", func(t *testing.T) { sharedState(t, open(t)) })
	t.Run("RenameRemove", func(t *testing.T) { renameRemove(t, open(t)) })
	t.Run("Concurrency", func(t *testing.T) { concurrency(t, open(t)) })
	t.Run("Info", func(t *testing.T) { info(t, open(t), opts) })
	t.Run("Close", func(t *testing.T) { closeCases(t, open(t)) })
}

// Sh runs cmd in ws and fails the test unless it exits 0; it returns the
// command's standard output.
func Sh(t *testing.T, ws workspace.Workspace, cmd string) string {
	t.Helper()
	res, err := ws.Run(t.Context(), &backend.Request{Command: cmd})
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("Run(%q): exit %v, stdout %q, stderr %q", cmd, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// wantIs fails the test unless err matches target.
func wantIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one matching %q", what, err, target)
	}
}

// writeFS writes data to name through the workspace's FS, failing the
// test on error.
func writeFS(t *testing.T, ws workspace.Workspace, name, data string) workspace.WriteResult {
	t.Helper()
	res, err := ws.WriteFile(t.Context(), name, []byte(data))
	if err != nil {
		t.Fatalf("WriteFile(%q): %v", name, err)
	}
	return res
}

// readFS reads name through the workspace's FS, failing the test on error.
func readFS(t *testing.T, ws workspace.Workspace, name string) string {
	t.Helper()
	f, err := ws.Open(t.Context(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("reading %q: %v", name, err)
	}
	return string(b)
}

// fsOp is one FS method applied to a path, for the tables that check every
// method the same way.
type fsOp struct {
	name string
	do   func(ctx context.Context, ws workspace.Workspace, p string) error
}

// fsOps are every FS method, each applied to one path (Rename twice: the
// path as the old name and as the new one).
var fsOps = []fsOp{
	{"Stat", func(ctx context.Context, ws workspace.Workspace, p string) error {
		_, err := ws.Stat(ctx, p)
		return err
	}},
	{"Open", func(ctx context.Context, ws workspace.Workspace, p string) error {
		f, err := ws.Open(ctx, p)
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"ReadDir", func(ctx context.Context, ws workspace.Workspace, p string) error {
		_, err := ws.ReadDir(ctx, p)
		return err
	}},
	{"WriteFile", func(ctx context.Context, ws workspace.Workspace, p string) error {
		_, err := ws.WriteFile(ctx, p, []byte("escaped\n"))
		return err
	}},
	{"UpdateFile", func(ctx context.Context, ws workspace.Workspace, p string) error {
		_, err := ws.UpdateFile(ctx, p, 0, func(old []byte) ([][]byte, error) {
			return [][]byte{old, []byte("escaped\n")}, nil
		})
		return err
	}},
	{"Remove", func(ctx context.Context, ws workspace.Workspace, p string) error {
		return ws.Remove(ctx, p)
	}},
	{"RenameFrom", func(ctx context.Context, ws workspace.Workspace, p string) error {
		return ws.Rename(ctx, p, "renamed-in")
	}},
	{"RenameTo", func(ctx context.Context, ws workspace.Workspace, p string) error {
		return ws.Rename(ctx, "victim", p)
	}},
}

func confinement(t *testing.T, ws workspace.Workspace) {
	ctx := t.Context()
	canary := "helikon-workspacetest-" + randomHex()
	// The links are made by a command inside the workspace, as an agent's
	// Bash call would make them: the FS must refuse them whatever the
	// engine's own "/" is.
	Sh(t, ws, "mkdir -p sub/deep && echo in > sub/in.txt && echo v > victim && "+
		"ln -s / rootlink && ln -s /etc etclink && ln -s .. up && ln -s ../.. sub/up2 && "+
		"ln -s ../../../"+canary+" sub/deep/out && ln -s /etc/passwd pw && ln -s up/"+canary+" chain")
	dir := ws.Dir()
	parent := path.Dir(dir)
	// last marks paths whose last component is itself a link: Remove and
	// Rename act on the link there, inside the root, without following it.
	outside := []struct {
		name, p string
		last    bool
	}{
		{"DotDot", "../" + canary, false},
		{"DotDotInside", "sub/../../" + canary, false},
		{"DotDotDeep", "sub/deep/../../../" + canary, false},
		{"AbsoluteOutside", "/etc/" + canary, false},
		{"AbsoluteParent", parent + "/" + canary, false},
		{"AbsoluteSiblingPrefix", dir + "-evil/" + canary, false},
		{"LinkToRoot", "rootlink/etc/" + canary, false},
		{"LinkToRootItself", "rootlink", true},
		{"LinkToEtc", "etclink/" + canary, false},
		{"LinkToEtcPasswd", "pw", true},
		{"LinkClimbingOut", "up/" + canary, false},
		{"LinkClimbingOutTwice", "sub/up2/" + canary, false},
		{"LinkClimbingOutLast", "sub/deep/out", true},
		{"LinkChain", "chain", true},
		{"TrailingSlashLink", "up/", false},
	}
	for _, c := range outside {
		for _, op := range fsOps {
			if c.last && (op.name == "Remove" || strings.HasPrefix(op.name, "Rename")) {
				continue
			}
			t.Run(c.name+"/"+op.name, func(t *testing.T) {
				err := op.do(ctx, ws, c.p)
				wantIs(t, fmt.Sprintf("%s(%q)", op.name, c.p), err, workspace.ErrOutside)
			})
		}
	}
	// Nothing the refused calls did may have landed outside the root.
	Sh(t, ws, fmt.Sprintf("test ! -e ../%s && test ! -e ../../%s && test ! -e /%s && test ! -e /etc/%s", canary, canary, canary, canary))
	if got := readFS(t, ws, "victim"); got != "v\n" {
		t.Errorf("victim holds %q after the refused renames, want %q", got, "v\n")
	}

	t.Run("AbsoluteInsideAccepted", func(t *testing.T) {
		writeFS(t, ws, dir+"/abs.txt", "abs\n")
		if got := readFS(t, ws, dir+"/abs.txt"); got != "abs\n" {
			t.Errorf("read %q back through the absolute path, want %q", got, "abs\n")
		}
		if _, err := ws.Stat(ctx, dir); err != nil {
			t.Errorf("Stat of the root by its absolute path: %v", err)
		}
		if _, err := ws.ReadDir(ctx, dir+"/sub"); err != nil {
			t.Errorf("ReadDir by an absolute path inside: %v", err)
		}
	})
	t.Run("LinksInsideFollowed", func(t *testing.T) {
		Sh(t, ws, "ln -s sub/in.txt alias.txt && ln -s sub linkdir && ln -s ../in.txt sub/deep/upin")
		for _, p := range []string{"alias.txt", "linkdir/in.txt", "sub/deep/upin", "sub/deep/../in.txt"} {
			f, err := ws.Open(ctx, p)
			if err != nil {
				t.Errorf("Open(%q): %v", p, err)
				continue
			}
			b, _ := io.ReadAll(f)
			if string(b) != "in\n" || f.Path() != "sub/in.txt" {
				t.Errorf("Open(%q) read %q at Path %q, want %q at %q", p, b, f.Path(), "in\n", "sub/in.txt")
			}
			f.Close()
		}
		res := writeFS(t, ws, "alias.txt", "new\n")
		if res.Path != "sub/in.txt" || res.Created {
			t.Errorf("WriteFile through a link: Path %q Created %v, want %q false", res.Path, res.Created, "sub/in.txt")
		}
		if got := Sh(t, ws, "test -L alias.txt && cat sub/in.txt"); got != "new\n" {
			t.Errorf("the link's target holds %q, want %q (and the link must stay a link)", got, "new\n")
		}
		if _, err := ws.Stat(ctx, "linkdir/in.txt"); err != nil {
			t.Errorf("Stat through a directory link: %v", err)
		}
		if ents, err := ws.ReadDir(ctx, "linkdir"); err != nil || len(ents) == 0 {
			t.Errorf("ReadDir through a directory link: %v entries, %v", len(ents), err)
		}
	})
	t.Run("ExpectedWritesRefuseOtherFiles", func(t *testing.T) {
		// What the file tools do when the permission check saw the path
		// as written: a link a command made must not lead the write, or
		// the update's read, to another file.
		Sh(t, ws, "ln -s sub/in.txt exp-alias && ln -s sub exp-dir")
		before := Sh(t, ws, "cat sub/in.txt")
		_, err := workspace.WriteFileExpect(ctx, ws, "exp-alias", []byte("PWNED"), []string{"exp-alias"})
		if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != "sub/in.txt" {
			t.Errorf("WriteFileExpect through a file link: %v, want refused naming sub/in.txt", err)
		}
		_, err = workspace.WriteFileExpect(ctx, ws, "exp-dir/planted", []byte("PWNED"), []string{"exp-dir/planted"})
		if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != "sub/planted" {
			t.Errorf("WriteFileExpect through a directory link: %v, want refused naming sub/planted", err)
		}
		called := false
		_, err = workspace.UpdateFileExpect(ctx, ws, "exp-alias", 1<<20, []string{"exp-alias"}, func(b []byte) ([][]byte, error) {
			called = true
			return [][]byte{[]byte("PWNED")}, nil
		})
		if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != "sub/in.txt" || called {
			t.Errorf("UpdateFileExpect through a file link: %v (update called: %v), want refused naming sub/in.txt", err, called)
		}
		if got := Sh(t, ws, "cat sub/in.txt; test ! -e sub/planted && echo none"); got != before+"none\n" {
			t.Errorf("after the refused writes: %q, want %q", got, before+"none\n")
		}
		if res, err := workspace.WriteFileExpect(ctx, ws, "exp-alias", []byte("ok\n"), []string{"sub/in.txt"}); err != nil || res.Path != "sub/in.txt" {
			t.Errorf("WriteFileExpect expecting the real path: %+v, %v", res, err)
		}
	})
}

func errorCases(t *testing.T, ws workspace.Workspace, opts *Options) {
	ctx := t.Context()
	Sh(t, ws, "mkdir -p d && echo 0123456789 > ten")
	if !opts.NoFIFO {
		Sh(t, ws, "mkfifo fifo")
	}
	noop := func(old []byte) ([][]byte, error) { return [][]byte{old}, nil }
	missing := []string{"missing.txt", "d/missing.txt", "nodir/x"}
	for _, p := range missing {
		for _, op := range fsOps {
			if op.name == "WriteFile" || op.name == "RenameTo" {
				continue // they create what is missing
			}
			t.Run("NotExist/"+op.name+"/"+p, func(t *testing.T) {
				wantIs(t, fmt.Sprintf("%s(%q)", op.name, p), op.do(ctx, ws, p), fs.ErrNotExist)
			})
		}
	}
	notRegular := []string{"d", "."}
	if !opts.NoFIFO {
		notRegular = append(notRegular, "fifo")
	}
	for _, p := range notRegular {
		t.Run("NotRegular/Open/"+p, func(t *testing.T) {
			f, err := ws.Open(ctx, p)
			if err == nil {
				f.Close()
			}
			wantIs(t, fmt.Sprintf("Open(%q)", p), err, workspace.ErrNotRegular)
		})
		t.Run("NotRegular/UpdateFile/"+p, func(t *testing.T) {
			_, err := ws.UpdateFile(ctx, p, 0, noop)
			wantIs(t, fmt.Sprintf("UpdateFile(%q)", p), err, workspace.ErrNotRegular)
		})
	}
	t.Run("NotRegular/WriteFile/dir", func(t *testing.T) {
		if _, err := ws.WriteFile(ctx, "d", []byte("x")); err == nil {
			t.Error("WriteFile over a directory succeeded")
		}
	})
	t.Run("TooLarge", func(t *testing.T) {
		called := false
		_, err := ws.UpdateFile(ctx, "ten", 5, func(old []byte) ([][]byte, error) {
			called = true
			return [][]byte{old}, nil
		})
		wantIs(t, "UpdateFile of 11 bytes with a cap of 5", err, workspace.ErrTooLarge)
		if called {
			t.Error("update was called for a file over the cap")
		}
		if _, err := ws.UpdateFile(ctx, "ten", 11, noop); err != nil {
			t.Errorf("UpdateFile at exactly the cap: %v", err)
		}
	})
	t.Run("UpdateErrorWritesNothing", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := ws.UpdateFile(ctx, "ten", 0, func([]byte) ([][]byte, error) { return [][]byte{[]byte("x")}, boom })
		if !errors.Is(err, boom) {
			t.Errorf("UpdateFile returned %v, want update's own error", err)
		}
		if got := readFS(t, ws, "ten"); got != "0123456789\n" {
			t.Errorf("the file holds %q after a failed update", got)
		}
	})
	if !opts.NoChanged {
		t.Run("Changed", func(t *testing.T) {
			writeFS(t, ws, "raced", "old\n")
			_, err := ws.UpdateFile(ctx, "raced", 0, func(old []byte) ([][]byte, error) {
				Sh(t, ws, "echo 'changed by a command' > raced.new && mv raced.new raced")
				return [][]byte{[]byte("update\n")}, nil
			})
			wantIs(t, "UpdateFile of a file a command replaced meanwhile", err, workspace.ErrChanged)
			if got := readFS(t, ws, "raced"); got != "changed by a command\n" {
				t.Errorf("the file holds %q, want the command's content", got)
			}
		})
	}
}

func writeCases(t *testing.T, ws workspace.Workspace) {
	ctx := t.Context()
	t.Run("CreatesParents", func(t *testing.T) {
		res := writeFS(t, ws, "a/b/c.txt", "c\n")
		if res.Path != "a/b/c.txt" || !res.Created || res.BytesWritten != 2 {
			t.Errorf("WriteResult %+v, want Path a/b/c.txt, Created, 2 bytes", res)
		}
		if got := Sh(t, ws, "cat a/b/c.txt"); got != "c\n" {
			t.Errorf("cat read %q", got)
		}
		res = writeFS(t, ws, "a/b/c.txt", "again\n")
		if res.Created || res.BytesWritten != 6 {
			t.Errorf("rewrite: WriteResult %+v, want not Created, 6 bytes", res)
		}
	})
	t.Run("ContentWhole", func(t *testing.T) {
		// Every byte value, and more than one pipe or chunk holds.
		data := bytes.Repeat(func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(), 4096+1)
		if _, err := ws.WriteFile(ctx, "big.bin", data); err != nil {
			t.Fatal(err)
		}
		if got := readFS(t, ws, "big.bin"); got != string(data) {
			t.Errorf("read back %d bytes, want the %d written", len(got), len(data))
		}
		if got := strings.TrimSpace(Sh(t, ws, "wc -c < big.bin")); got != fmt.Sprint(len(data)) {
			t.Errorf("the command sees %s bytes, want %d", got, len(data))
		}
		fi, err := ws.Stat(ctx, "big.bin")
		if err != nil || fi.Size() != int64(len(data)) || !fi.Mode().IsRegular() {
			t.Errorf("Stat: %v, %v", fi, err)
		}
		if _, err := ws.WriteFile(ctx, "empty", nil); err != nil {
			t.Fatal(err)
		}
		if got := readFS(t, ws, "empty"); got != "" {
			t.Errorf("an empty write reads back %q", got)
		}
	})
	t.Run("ModeKept", func(t *testing.T) {
		writeFS(t, ws, "run.sh", "#!/bin/sh\necho one\n")
		Sh(t, ws, "chmod 750 run.sh")
		writeFS(t, ws, "run.sh", "#!/bin/sh\necho two\n")
		if got := Sh(t, ws, "./run.sh"); got != "two\n" {
			t.Errorf("the rewritten script printed %q", got)
		}
		fi, err := ws.Stat(ctx, "run.sh")
		if err != nil || fi.Mode().Perm() != 0o750 {
			t.Errorf("mode after WriteFile %v (%v), want -rwxr-x---", fi.Mode(), err)
		}
		if _, err := ws.UpdateFile(ctx, "run.sh", 0, func(old []byte) ([][]byte, error) {
			return [][]byte{bytes.ReplaceAll(old, []byte("two"), []byte("three"))}, nil
		}); err != nil {
			t.Fatal(err)
		}
		fi, err = ws.Stat(ctx, "run.sh")
		if err != nil || fi.Mode().Perm() != 0o750 {
			t.Errorf("mode after UpdateFile %v (%v), want -rwxr-x---", fi.Mode(), err)
		}
		if got := Sh(t, ws, "./run.sh"); got != "three\n" {
			t.Errorf("the updated script printed %q", got)
		}
	})
	t.Run("UpdatePieces", func(t *testing.T) {
		writeFS(t, ws, "pieces", "middle")
		res, err := ws.UpdateFile(ctx, "pieces", 0, func(old []byte) ([][]byte, error) {
			return [][]byte{[]byte("<"), old, nil, []byte(">\n")}, nil
		})
		if err != nil || res.BytesWritten != 9 || res.Created || res.Path != "pieces" {
			t.Fatalf("UpdateFile: %+v, %v", res, err)
		}
		if got := Sh(t, ws, "cat pieces"); got != "<middle>\n" {
			t.Errorf("the pieces were written as %q", got)
		}
	})
	t.Run("NoTempFilesLeft", func(t *testing.T) {
		Sh(t, ws, "mkdir clean")
		writeFS(t, ws, "clean/f", "1")
		writeFS(t, ws, "clean/f", "2")
		ents, err := ws.ReadDir(ctx, "clean")
		if err != nil || len(ents) != 1 || ents[0].Name() != "f" {
			t.Errorf("clean/ holds %v (%v), want only f", names(ents), err)
		}
	})
}

func sharedState(t *testing.T, ws workspace.Workspace) {
	ctx := t.Context()
	t.Run("FSToCommand", func(t *testing.T) {
		writeFS(t, ws, "fromfs/note.txt", "written by the FS\n")
		if got := Sh(t, ws, "cat fromfs/note.txt"); got != "written by the FS\n" {
			t.Errorf("cat read %q", got)
		}
	})
	t.Run("CommandToFS", func(t *testing.T) {
		Sh(t, ws, "mkdir -p fromcmd/z fromcmd/a && printf 'made by a command\\n' > fromcmd/made.txt")
		if got := readFS(t, ws, "fromcmd/made.txt"); got != "made by a command\n" {
			t.Errorf("Open read %q", got)
		}
		fi, err := ws.Stat(ctx, "fromcmd/made.txt")
		if err != nil || fi.Size() != 18 || fi.Name() != "made.txt" {
			t.Errorf("Stat: %v, %v", fi, err)
		}
		ents, err := ws.ReadDir(ctx, "fromcmd")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(ents), " "); got != "a made.txt z" {
			t.Errorf("ReadDir lists %q, want %q (sorted)", got, "a made.txt z")
		}
		for _, e := range ents {
			if e.IsDir() != (e.Name() != "made.txt") {
				t.Errorf("entry %s: IsDir %v", e.Name(), e.IsDir())
			}
		}
	})
	t.Run("StatePersistsAcrossCommands", func(t *testing.T) {
		Sh(t, ws, "echo kept > persisted && mkdir -p elsewhere && cd elsewhere && echo here > marker")
		if got := Sh(t, ws, "cat persisted elsewhere/marker"); got != "kept\nhere\n" {
			t.Errorf("the next command read %q", got)
		}
		if got := strings.TrimSpace(Sh(t, ws, "pwd -P")); got != ws.Dir() {
			t.Errorf("the next command started in %q, want the root %q (a cd does not carry over)", got, ws.Dir())
		}
		if got := readFS(t, ws, "elsewhere/marker"); got != "here\n" {
			t.Errorf("Open read %q", got)
		}
	})
}

func renameRemove(t *testing.T, ws workspace.Workspace) {
	ctx := t.Context()
	writeFS(t, ws, "old.txt", "content\n")
	if err := ws.Rename(ctx, "old.txt", "new.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Stat(ctx, "old.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old name after Rename: %v, want fs.ErrNotExist", err)
	}
	if got := Sh(t, ws, "cat new.txt"); got != "content\n" {
		t.Errorf("the new name holds %q", got)
	}
	writeFS(t, ws, "other.txt", "other\n")
	if err := ws.Rename(ctx, "other.txt", "new.txt"); err != nil {
		t.Fatalf("Rename over an existing file: %v", err)
	}
	if got := readFS(t, ws, "new.txt"); got != "other\n" {
		t.Errorf("after Rename over it the file holds %q", got)
	}
	if err := ws.Remove(ctx, "new.txt"); err != nil {
		t.Fatal(err)
	}
	Sh(t, ws, "test ! -e new.txt && mkdir emptydir full && touch full/f")
	if err := ws.Remove(ctx, "emptydir"); err != nil {
		t.Errorf("Remove of an empty directory: %v", err)
	}
	if err := ws.Remove(ctx, "full"); err == nil {
		t.Error("Remove of a directory that is not empty succeeded")
	}
	Sh(t, ws, "test ! -e emptydir && test -f full/f")
	// Removing a link removes the link, never its target.
	Sh(t, ws, "ln -s full/f flink")
	if err := ws.Remove(ctx, "flink"); err != nil {
		t.Errorf("Remove of a link: %v", err)
	}
	Sh(t, ws, "test ! -L flink && test -f full/f")
}

func concurrency(t *testing.T, ws workspace.Workspace) {
	ctx := t.Context()
	writeFS(t, ws, "counter", "")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() {
			_, err := ws.UpdateFile(ctx, "counter", 0, func(old []byte) ([][]byte, error) {
				return [][]byte{old, []byte("x")}, nil
			})
			errs <- err
		})
		wg.Go(func() {
			_, err := ws.WriteFile(ctx, fmt.Sprintf("many/f%d", i), []byte(fmt.Sprint(i)))
			errs <- err
		})
		wg.Go(func() {
			_, err := ws.Stat(ctx, "counter")
			errs <- err
		})
		if i%4 == 0 {
			wg.Go(func() {
				res, err := ws.Run(ctx, &backend.Request{Command: "cat counter > /dev/null"})
				if err == nil && (res.ExitCode == nil || *res.ExitCode != 0) {
					err = fmt.Errorf("cat counter: exit %v, stderr %q", res.ExitCode, res.Stderr)
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := readFS(t, ws, "counter"); got != strings.Repeat("x", n) {
		t.Errorf("after %d concurrent updates the file holds %q: updates of one path through one workspace must all apply", n, got)
	}
	ents, err := ws.ReadDir(ctx, "many")
	if err != nil || len(ents) != n {
		t.Errorf("many/ holds %v (%v), want %d files", names(ents), err, n)
	}
}

func info(t *testing.T, ws workspace.Workspace, opts *Options) {
	in := ws.Info()
	if in.Engine == "" || (opts.Engine != "" && in.Engine != opts.Engine) {
		t.Errorf("Info().Engine = %q, want %q (non-empty)", in.Engine, opts.Engine)
	}
	if in.Session == "" || (opts.Session != "" && in.Session != opts.Session) {
		t.Errorf("Info().Session = %q, want %q (non-empty)", in.Session, opts.Session)
	}
	if in.ID == "" {
		t.Error("Info().ID is empty; Engine.Remove needs it")
	}
	if !path.IsAbs(ws.Dir()) {
		t.Errorf("Dir() = %q, want an absolute path", ws.Dir())
	}
}

func closeCases(t *testing.T, ws workspace.Workspace) {
	ctx := t.Context()
	writeFS(t, ws, "victim", "v\n")
	if err := ws.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Errorf("a second Close: %v, want nil (Close is idempotent)", err)
	}
	for _, op := range fsOps {
		t.Run(op.name, func(t *testing.T) {
			wantIs(t, op.name+" after Close", op.do(ctx, ws, "victim"), workspace.ErrGone)
		})
	}
	t.Run("Run", func(t *testing.T) {
		_, err := ws.Run(ctx, &backend.Request{Command: "true"})
		wantIs(t, "Run after Close", err, workspace.ErrGone)
	})
}

func names(ents []fs.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
