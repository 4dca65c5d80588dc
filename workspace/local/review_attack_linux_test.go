package local_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace/local"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// A command of a review's workspace, in the OS sandbox, can neither write
// the project beneath the review nor read or change the review's record
// and journal. (With the host backend, which confines nothing, each of
// these succeeds: that is the guard removed.)
func TestReviewCommandsCannotReachTheProjectOrTheStore(t *testing.T) {
	f := newReviewFixture(t, "ossandbox")
	store := f.opts.Dir
	for _, tc := range []struct{ name, cmd string }{
		{"write the project", fmt.Sprintf("echo pwned > '%s/README.md'", f.project)},
		{"remove from the project", fmt.Sprintf("rm -f '%s/private'", f.project)},
		{"read the project", fmt.Sprintf("cat '%s/private'", f.project)},
		{"list the store", fmt.Sprintf("ls '%s'", store)},
		{"read the record", fmt.Sprintf("cat '%s'/*/base/manifests/1.jsonl", store)},
		{"forge a journal", fmt.Sprintf("echo '{}' > '%s/journal.json'", f.review.Dir())},
		{"remove the record", fmt.Sprintf("rm -rf '%s/base'", f.review.Dir())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.agent.Run(t.Context(), &backend.Request{Command: tc.cmd})
			if err == nil && res.ExitCode != nil && *res.ExitCode == 0 {
				t.Fatalf("%s: succeeded from the sandbox: %q", tc.cmd, res.Stdout)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(f.project, "README.md")); bytes.Contains(b, []byte("pwned")) {
		t.Fatal("the project was written from the sandbox")
	}
	if _, err := os.Stat(filepath.Join(f.review.Dir(), "journal.json")); err == nil {
		t.Fatal("a journal was forged from the sandbox")
	}
	if _, err := local.FindReview(f.project, f.opts); err != nil {
		t.Fatalf("the review's record was damaged from the sandbox: %v", err)
	}
}

// Links the agent made in the copy are applied as links: apply never
// follows one out of the project, whether the link replaces a directory
// of the project or points at the outside from a new name.
func TestReviewApplyNeverFollowsLinksOut(t *testing.T) {
	out, secret := outsideDir(t)
	f := newReviewFixture(t, "host")
	workspacetest.Sh(t, f.agent, fmt.Sprintf(`set -e
rm -rf src && ln -s '%[1]s' src
ln -s '%[1]s/secret' esc
ln -s ../../../../../../../../../%[1]s rel`, out))
	if _, err := f.review.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"src", "esc", "rel"} {
		fi, err := os.Lstat(filepath.Join(f.project, name))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s was not applied as a link: %v %v", name, fi, err)
		}
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Fatalf("the apply changed the outside directory: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "secret")); !bytes.Equal(b, secret) {
		t.Fatalf("the apply overwrote the outside file: %q", b)
	}
}

// Someone swapping a directory of the project for a link to the outside
// while an apply writes into it never leads the apply outside.
func TestReviewApplyNeverWritesOutsideThroughSwappedLinks(t *testing.T) {
	out, secret := outsideDir(t)
	for i := range 30 {
		project, store := t.TempDir(), t.TempDir()
		d := filepath.Join(project, "d")
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "secret"), []byte("inside"), 0o644)
		r, err := local.StartReview(t.Context(), project, &local.ReviewOptions{Dir: store})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range strings.Split("a b c d e f g h i j secret", " ") {
			os.WriteFile(filepath.Join(r.Tree(), "d", n), []byte(fmt.Sprint("applied ", n, i)), 0o644)
		}
		if err := os.Symlink(out, filepath.Join(project, "link")); err != nil {
			t.Fatal(err)
		}
		stop := swapper(t, project, "d", "link")
		_, err = r.Apply(t.Context())
		stop()
		_ = err // failing (a conflict) is fine; writing outside is not
		r.Close()
		ents, _ := os.ReadDir(out)
		if len(ents) != 1 {
			t.Fatalf("the apply changed the outside directory: %v", ents)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "secret")); !bytes.Equal(b, secret) {
			t.Fatalf("the apply overwrote the outside file: %q", b)
		}
	}
}
