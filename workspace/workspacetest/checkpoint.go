package workspacetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon/workspace"
)

// treeScript prints one line per entry under the working directory, in a
// fixed order: type, path, permission bits, and the content's checksum or
// the link's target. Names with a newline print on two lines, the same way
// each time. Directory times are left out (the contract does not restore
// them).
const treeScript = `find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then echo "L $p -> $(readlink "$p")"
  elif [ -d "$p" ]; then echo "D $p $(stat -c %a "$p")"
  elif [ -f "$p" ]; then echo "F $p $(stat -c %a "$p") $(cksum < "$p")"
  fi
done 2>/dev/null; true`

// Tree returns a description of the workspace's whole tree, made by a
// command: two trees with the same description have the same paths,
// types, permission bits, contents and link targets.
func Tree(t *testing.T, ws workspace.Workspace) string {
	t.Helper()
	return Sh(t, ws, treeScript)
}

// makeTree is a tree with every kind of entry the contract records.
const makeTree = `set -e
mkdir -p src/deep empty
printf 'line 1\nline 2\nline 3\n' > README.md
printf 'package main\n' > src/main.go
printf 'deep\n' > src/deep/file.txt
printf '#!/bin/sh\necho run\n' > run.sh && chmod 755 run.sh
printf 'secret\n' > private && chmod 600 private
printf 'a\000b\001' > blob.bin
ln -s src/main.go link
ln -s missing dangling
ln -s /etc/passwd absolute
ln README.md hard
printf 'new\n' > "$(printf 'new\nline')"
printf 'bad\n' > "$(printf 'bad\377name')"
chmod 750 src/deep`

// destroy is what a careless command does to that tree.
const destroy = `set -e
rm -rf src empty
echo x > README.md
chmod 600 run.sh
rm link && ln -s README.md link
rm hard && printf 'other\n' > hard
printf 'added\n' > added.txt
mkdir newdir
rm "$(printf 'new\nline')"`

// MakeTree is a shell script that makes, in the working directory, a tree
// with every kind of entry a checkpoint records: modes, links (dangling,
// absolute), a hard link, an empty directory, names with a newline and
// with invalid UTF-8, a binary file.
const MakeTree = makeTree

// Destroy is a shell script that does to [MakeTree]'s tree what a careless
// command does: removes a directory, overwrites, changes modes and links,
// adds files.
const Destroy = destroy

// RunCheckpointer runs the conformance suite of [workspace.Checkpointer]
// as subtests of t, on workspaces made by open (a new, empty workspace on
// each call, as for [Run]) that must implement it. The suite makes its
// trees with sh, find, sort, stat, cksum, readlink, ln, chmod and printf.
func RunCheckpointer(t *testing.T, open func(t *testing.T) workspace.Workspace) {
	t.Helper()
	get := func(t *testing.T) (workspace.Workspace, workspace.Checkpointer) {
		ws := open(t)
		cp, ok := ws.(workspace.Checkpointer)
		if !ok {
			t.Fatalf("%T does not implement workspace.Checkpointer", ws)
		}
		return ws, cp
	}
	t.Run("RestoreWholeTree", func(t *testing.T) {
		ws, cp := get(t)
		Sh(t, ws, makeTree)
		before := Tree(t, ws)
		c, err := cp.Checkpoint(t.Context(), "before")
		if err != nil {
			t.Fatal(err)
		}
		if Tree(t, ws) != before {
			t.Fatal("taking a checkpoint changed the tree (is the store inside the root?)")
		}
		Sh(t, ws, destroy)
		if err := cp.Restore(t.Context(), c.ID); err != nil {
			t.Fatal(err)
		}
		if got := Tree(t, ws); got != before {
			t.Fatalf("after Restore the tree is\n%s\nwant\n%s", got, before)
		}
		Sh(t, ws, `[ README.md -ef hard ] && [ "$(readlink absolute)" = /etc/passwd ] && [ -d empty ] && [ -f "$(printf 'bad\377name')" ] && [ "$(cat "$(printf 'new\nline')")" = new ]`)
		// A second restore has nothing to do and changes nothing.
		if err := cp.Restore(t.Context(), c.ID); err != nil {
			t.Fatal(err)
		}
		if got := Tree(t, ws); got != before {
			t.Fatalf("a second Restore changed the tree:\n%s", got)
		}
	})
	t.Run("Diff", func(t *testing.T) {
		ws, cp := get(t)
		Sh(t, ws, makeTree)
		a, err := cp.Checkpoint(t.Context(), "a")
		if err != nil {
			t.Fatal(err)
		}
		Sh(t, ws, destroy+"\nprintf 'a\\000c' > blob.bin")
		now, err := cp.Diff(t.Context(), a.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		b, err := cp.Checkpoint(t.Context(), "b")
		if err != nil {
			t.Fatal(err)
		}
		between, err := cp.Diff(t.Context(), a.ID, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		for name, changes := range map[string][]workspace.Change{"to now": now, "between checkpoints": between} {
			got := map[string]workspace.Change{}
			for _, c := range changes {
				got[c.Path] = c
			}
			for p, kind := range map[string]workspace.ChangeKind{
				"src": workspace.ChangeDeleted, "src/main.go": workspace.ChangeDeleted, "empty": workspace.ChangeDeleted,
				"README.md": workspace.ChangeModified, "run.sh": workspace.ChangeMode, "link": workspace.ChangeModified,
				"added.txt": workspace.ChangeAdded, "newdir": workspace.ChangeAdded, "new\nline": workspace.ChangeDeleted,
				"blob.bin": workspace.ChangeModified, "hard": workspace.ChangeModified,
			} {
				if got[p].Kind != kind {
					t.Errorf("%s: %q changed as %q, want %q", name, p, got[p].Kind, kind)
				}
			}
			if _, ok := got["private"]; ok {
				t.Errorf("%s: the unchanged file private is reported: %+v", name, got["private"])
			}
			if d := got["README.md"].Diff; !strings.Contains(d, "-line 1\n") || !strings.Contains(d, "+x\n") {
				t.Errorf("%s: README.md's diff is %q", name, d)
			}
			if c := got["blob.bin"]; !c.Binary || c.Diff != "" || c.OldSize != 4 || c.NewSize != 3 {
				t.Errorf("%s: blob.bin: %+v, want binary with sizes 4 and 3", name, c)
			}
			if c := got["link"]; c.OldTarget != "src/main.go" || c.NewTarget != "README.md" {
				t.Errorf("%s: link: %+v", name, c)
			}
			if c := got["run.sh"]; c.OldMode.Perm() != 0o755 || c.NewMode.Perm() != 0o600 {
				t.Errorf("%s: run.sh: %+v", name, c)
			}
		}
		back, err := cp.Diff(t.Context(), b.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range back {
			if c.Path == "added.txt" && c.Kind != workspace.ChangeDeleted {
				t.Errorf("from b to a, added.txt is %q, want deleted", c.Kind)
			}
		}
		if same, err := cp.Diff(t.Context(), b.ID, ""); err != nil || len(same) != 0 {
			t.Errorf("Diff from the last checkpoint to an unchanged tree: %v, %v; want nothing", same, err)
		}
	})
	t.Run("RestorePaths", func(t *testing.T) {
		ws, cp := get(t)
		Sh(t, ws, makeTree)
		c, err := cp.Checkpoint(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		Sh(t, ws, destroy)
		if err := cp.Restore(t.Context(), c.ID, "src", "added.txt"); err != nil {
			t.Fatal(err)
		}
		Sh(t, ws, `[ "$(cat src/deep/file.txt)" = deep ] && [ "$(cat README.md)" = x ] && [ ! -e added.txt ] && [ -d newdir ]`)
	})
	t.Run("ListAndDrop", func(t *testing.T) {
		ws, cp := get(t)
		Sh(t, ws, "echo one > f")
		a, err := cp.Checkpoint(t.Context(), "one")
		if err != nil {
			t.Fatal(err)
		}
		Sh(t, ws, "echo two > f")
		b, err := cp.Checkpoint(t.Context(), "two")
		if err != nil {
			t.Fatal(err)
		}
		list, err := cp.Checkpoints(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Label != "one" || list[1].Entries != 1 {
			t.Fatalf("Checkpoints = %+v, want one and two", list)
		}
		if err := cp.DropCheckpoint(t.Context(), a.ID); err != nil {
			t.Fatal(err)
		}
		wantIs(t, "Restore of a dropped checkpoint", cp.Restore(t.Context(), a.ID), workspace.ErrNoCheckpoint)
		_, err = cp.Diff(t.Context(), "no-such", "")
		wantIs(t, "Diff from an unknown checkpoint", err, workspace.ErrNoCheckpoint)
		wantIs(t, "DropCheckpoint of an unknown checkpoint", cp.DropCheckpoint(t.Context(), a.ID), workspace.ErrNoCheckpoint)
		if err := cp.Restore(t.Context(), b.ID); err != nil {
			t.Fatal(err)
		}
		if got := Sh(t, ws, "cat f"); got != "two\n" {
			t.Fatalf("after dropping a, restoring b gives %q", got)
		}
	})
	t.Run("RestoreOutsideRefused", func(t *testing.T) {
		_, cp := get(t)
		c, err := cp.Checkpoint(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		err = cp.Restore(t.Context(), c.ID, "../x")
		if !errors.Is(err, workspace.ErrOutside) {
			t.Fatalf("Restore of ../x: %v, want ErrOutside", err)
		}
	})
}
