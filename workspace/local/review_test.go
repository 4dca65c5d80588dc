package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// hostWorkspace returns a workspace on dir with the host backend, for the
// test to look at a tree with commands.
func hostWorkspace(t *testing.T, dir string) *local.Workspace {
	t.Helper()
	b, err := backends["host"](dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := local.New(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), "look")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	return ws.(*local.Workspace)
}

// reviewFixture is a project made by workspacetest.MakeTree, a review of
// it, and a workspace on the review's copy with the backend called name.
type reviewFixture struct {
	project string
	opts    *local.ReviewOptions
	review  *local.Review
	agent   *local.Workspace // the agent's workspace: on the copy
	look    *local.Workspace // the test's view of the project
}

func newReviewFixture(t *testing.T, name string) *reviewFixture {
	t.Helper()
	f := &reviewFixture{project: t.TempDir(), opts: &local.ReviewOptions{Dir: t.TempDir()}}
	f.look = hostWorkspace(t, f.project)
	workspacetest.Sh(t, f.look, workspacetest.MakeTree)
	r, err := local.StartReview(t.Context(), f.project, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f.review = r
	b, err := backends[name](r.Tree())
	if errors.Is(err, backend.ErrUnavailable) {
		t.Skipf("%s is unavailable here: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	e, err := local.New(r.Tree(), b)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	f.agent = ws.(*local.Workspace)
	return f
}

// work is a turn of an agent: a file tool's write and a destructive
// command.
func (f *reviewFixture) work(t *testing.T) {
	t.Helper()
	workspacetest.Sh(t, f.agent, workspacetest.Destroy)
	if _, err := f.agent.WriteFile(t.Context(), "src/tool.go", []byte("package tool\n")); err != nil {
		t.Fatal(err)
	}
}

func TestReviewKeepsTheProjectUntilApplied(t *testing.T) {
	for name := range backends {
		t.Run(name, func(t *testing.T) {
			f := newReviewFixture(t, name)
			before := workspacetest.Tree(t, f.look)
			if got := workspacetest.Tree(t, f.agent); got != before {
				t.Fatalf("the copy is not the project:\n%s\nwant\n%s", got, before)
			}
			f.work(t)
			// The agent sees its own changes, by its tools and commands.
			if got := workspacetest.Sh(t, f.agent, "cat src/tool.go README.md"); got != "package tool\nx\n" {
				t.Fatalf("the agent sees %q, not its own changes", got)
			}
			seen := workspacetest.Tree(t, f.agent)
			if got := workspacetest.Tree(t, f.look); got != before {
				t.Fatalf("the project changed before apply:\n%s", got)
			}
			changes, err := f.review.Diff(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]workspace.ChangeKind{}
			for _, c := range changes {
				kinds[c.Path] = c.Kind
				if c.Path == "README.md" && !strings.Contains(c.Diff, "-line 1") {
					t.Errorf("README.md's diff: %q", c.Diff)
				}
			}
			for p, k := range map[string]workspace.ChangeKind{"README.md": workspace.ChangeModified, "src/tool.go": workspace.ChangeAdded, "empty": workspace.ChangeDeleted, "run.sh": workspace.ChangeMode, "added.txt": workspace.ChangeAdded, "link": workspace.ChangeModified, "src/main.go": workspace.ChangeDeleted} {
				if kinds[p] != k {
					t.Errorf("Diff: %s is %q, want %q (all: %v)", p, kinds[p], k, kinds)
				}
			}
			if _, err := f.review.Apply(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := workspacetest.Tree(t, f.look); got != seen {
				t.Fatalf("after apply the project is\n%s\nnot what the agent saw\n%s", got, seen)
			}
			if _, err := local.FindReview(f.project, f.opts); !errors.Is(err, local.ErrNoReview) {
				t.Fatalf("after a whole apply FindReview: %v, want ErrNoReview", err)
			}
		})
	}
}

func TestReviewApplyChosenPathsAndDiscard(t *testing.T) {
	f := newReviewFixture(t, "host")
	f.work(t)
	applied, err := f.review.Apply(t.Context(), "README.md", "./src")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range applied {
		if c.Path != "README.md" && !strings.HasPrefix(c.Path, "src") {
			t.Errorf("applied %s, which was not chosen", c.Path)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.project, "README.md")); string(b) != "x\n" {
		t.Fatalf("README.md not applied: %q", b)
	}
	if _, err := os.Stat(filepath.Join(f.project, "added.txt")); err == nil {
		t.Fatal("added.txt was applied without being chosen")
	}
	r, err := local.FindReview(f.project, f.opts)
	if err != nil {
		t.Fatalf("the review is gone after a partial apply: %v", err)
	}
	defer r.Close()
	left, err := r.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range left {
		if c.Path == "README.md" || strings.HasPrefix(c.Path, "src") {
			t.Errorf("the applied path %s is still a change of the review", c.Path)
		}
	}
	if len(left) == 0 {
		t.Fatal("no changes left after a partial apply")
	}
	if err := r.Discard(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := local.FindReview(f.project, f.opts); !errors.Is(err, local.ErrNoReview) {
		t.Fatalf("after Discard FindReview: %v, want ErrNoReview", err)
	}
	if _, err := os.Stat(filepath.Join(f.project, "empty")); err != nil {
		t.Fatal("discarded changes reached the project")
	}
	if _, err := os.Stat(f.review.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Discard left %s", f.review.Dir())
	}
}

// An apply over a project changed underneath refuses, names the paths and
// writes nothing.
func TestReviewApplyConflict(t *testing.T) {
	for _, tc := range []struct {
		name, user, want string
	}{
		{"same file", "echo mine > README.md", `"README.md"`},
		{"file added where the agent added one", "echo mine > added.txt", `"added.txt"`},
		{"file added in a directory the agent removed", "echo mine > empty/new", `"empty/new"`},
		{"file removed that the agent changed", "rm README.md", `"README.md"`},
		{"directory replaced by a link", "rm -rf src && ln -s empty src", `"src"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newReviewFixture(t, "host")
			f.work(t)
			workspacetest.Sh(t, f.look, tc.user)
			before := workspacetest.Tree(t, f.look)
			_, err := f.review.Apply(t.Context())
			if !errors.Is(err, local.ErrReviewConflict) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Apply over a changed project: %v, want ErrReviewConflict naming %s", err, tc.want)
			}
			if got := workspacetest.Tree(t, f.look); got != before {
				t.Fatalf("a refused apply wrote into the project:\n%s\nwas\n%s", got, before)
			}
		})
	}
}

func TestReviewLimit(t *testing.T) {
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "big"), make([]byte, 4096), 0o644)
	opts := &local.ReviewOptions{Dir: t.TempDir(), MaxBytes: 1000}
	if _, err := local.StartReview(t.Context(), project, opts); !errors.Is(err, local.ErrReviewLimit) {
		t.Fatalf("StartReview beyond the bound: %v, want ErrReviewLimit", err)
	}
	opts.MaxBytes = 5000
	r, err := local.StartReview(t.Context(), project, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	os.WriteFile(filepath.Join(r.Tree(), "more"), make([]byte, 4096), 0o644)
	if _, err := r.Apply(t.Context()); !errors.Is(err, local.ErrReviewLimit) {
		t.Fatalf("Apply of a copy beyond the bound: %v, want ErrReviewLimit", err)
	}
	if _, err := os.Stat(filepath.Join(project, "more")); err == nil {
		t.Fatal("a copy beyond its bound was applied")
	}
}

func TestReviewStoreInsideTheProjectIsRefused(t *testing.T) {
	project := t.TempDir()
	_, err := local.StartReview(t.Context(), project, &local.ReviewOptions{Dir: filepath.Join(project, ".reviews")})
	if !errors.Is(err, workspace.ErrOutside) {
		t.Fatalf("StartReview with the store inside the project: %v, want ErrOutside", err)
	}
}
