package einoadapter_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	efs "github.com/cloudwego/eino/adk/filesystem"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/adapters/einoadapter"
	"github.com/paigasus/helikon/toolbox"
)

// TestListingHidesWhatReadMayNotSee: a file a deny rule keeps from Read is
// neither listed, globbed nor searched, and its directory cannot be listed.
func TestListingHidesWhatReadMayNotSee(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for name, content := range map[string]string{"a.txt": "token here\n", "src/b.go": "x\ntoken\n", "secret/key.txt": "token=hunter2\n"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{Root: root, Uncontained: true, DeferAsks: true, Deny: helikon.MustParseRules("Read(/secret/**)", "Read(/secret)")})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	be, err := einoadapter.New(tb)
	if err != nil {
		t.Fatal(err)
	}
	paths := func(infos []efs.FileInfo) []string {
		var ps []string
		for _, i := range infos {
			ps = append(ps, i.Path)
		}
		slices.Sort(ps)
		return ps
	}
	ls, err := be.LsInfo(ctx, &efs.LsInfoRequest{Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(ls); !slices.Equal(got, []string{"/a.txt", "/src"}) {
		t.Errorf("LsInfo / = %v, want the secret directory left out", got)
	}
	if _, err := be.LsInfo(ctx, &efs.LsInfoRequest{Path: "/secret"}); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("LsInfo /secret = %v, want a denial", err)
	}
	glob, err := be.GlobInfo(ctx, &efs.GlobInfoRequest{Pattern: "**/*.txt", Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(glob); !slices.Equal(got, []string{"/a.txt"}) {
		t.Errorf("GlobInfo **/*.txt = %v, want /a.txt alone", got)
	}
	grep, err := be.GrepRaw(ctx, &efs.GrepRequest{Pattern: "token", Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	for _, m := range grep {
		hits = append(hits, m.Path)
	}
	slices.Sort(hits)
	if !slices.Equal(hits, []string{"/a.txt", "/src/b.go"}) {
		t.Errorf("GrepRaw token = %v, want the secret file left out", grep)
	}
	if _, err := be.Read(ctx, &efs.ReadRequest{FilePath: "/secret/key.txt"}); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("Read /secret/key.txt = %v, want a denial", err)
	}
	if got, err := be.Read(ctx, &efs.ReadRequest{FilePath: filepath.Join(tb.Workspace().Dir(), "src/b.go"), Offset: 1}); err != nil || got != "token\n" {
		t.Errorf("Read of the second line by the workspace's path = %q, %v", got, err)
	}
}
