package filetool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

type app = struct{}

// env is a sandbox root with a sibling directory outside it.
type env struct {
	root, outside string
	sb            *fsroot.FS
	read          *filetool.Read[app]
	write         *filetool.Write[app]
	edit          *filetool.Edit[app]
}

const secret = "TOP-SECRET-OUTSIDE\n"

func newEnv(tb testing.TB) *env {
	tb.Helper()
	base, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	e := &env{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{e.root, e.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	writeFile(tb, filepath.Join(e.outside, "secret.txt"), secret)
	e.sb, err = fsroot.Open(e.root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.sb.Close() })
	e.read = filetool.NewRead[app](local.NewFS(e.sb), nil)
	e.write = filetool.NewWrite[app](local.NewFS(e.sb), nil)
	e.edit = filetool.NewEdit[app](local.NewFS(e.sb), nil)
	return e
}

func writeFile(tb testing.TB, p, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func (e *env) file(tb testing.TB, rel, content string) {
	writeFile(tb, filepath.Join(e.root, rel), content)
}

func (e *env) content(tb testing.TB, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// call invokes t with args given as a Go value and decodes the output into out.
func call[T any](tb testing.TB, t helikon.Tool[app], args any) (T, error) {
	tb.Helper()
	var out T
	raw, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := t.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), raw)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(res, &out); err != nil {
		tb.Fatalf("output %s: %v", res, err)
	}
	return out, nil
}

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestToolContract(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		tool   helikon.Tool[app]
		name   string
		effect helikon.Effect
	}{
		{e.read, "Read", helikon.EffectReadOnly},
		{e.write, "Write", helikon.EffectWrite},
		{e.edit, "Edit", helikon.EffectWrite},
	} {
		if tc.tool.Name() != tc.name || helikon.EffectOf(tc.tool) != tc.effect {
			t.Errorf("%s: name %q effect %v", tc.name, tc.tool.Name(), helikon.EffectOf(tc.tool))
		}
		if _, ok := tc.tool.(helikon.Targeter); !ok {
			t.Errorf("%s does not implement Targeter", tc.name)
		}
		if helikon.OutputSchemaOf(tc.tool) == nil {
			t.Errorf("%s has no output schema", tc.name)
		}
		if !strings.Contains(tc.tool.Description(), e.root) {
			t.Errorf("%s description does not name the root: %s", tc.name, tc.tool.Description())
		}
	}
	if _, err := helikon.NewToolset[app](e.read, e.write, e.edit); err != nil {
		t.Fatal(err)
	}
}

func TestRead(t *testing.T) {
	e := newEnv(t)
	e.file(t, "small.txt", "alpha\nbeta\ngamma\n")
	e.file(t, "big.txt", lines(2500))
	e.file(t, "bom.txt", "\ufefffirst\nsecond\n")
	e.file(t, "crlf.txt", "a\r\nb\r\n")
	e.file(t, "long.txt", strings.Repeat("x", 5000)+"\nshort\n")
	e.file(t, "empty.txt", "")
	e.file(t, "bin.dat", "PK\x03\x04\x00\x00binary")
	e.file(t, "latin1.txt", "caf\xe9\n")
	if err := os.Symlink("small.txt", filepath.Join(e.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		name string
		args filetool.ReadArgs
		want filetool.ReadResult
		err  string // substring of the error
		kind helikon.ErrorKind
	}{
		{name: "whole file", args: filetool.ReadArgs{Path: "small.txt"},
			want: filetool.ReadResult{Path: "small.txt", Content: "alpha\nbeta\ngamma\n", StartLine: 1, EndLine: 3, TotalLines: n(3)}},
		{name: "window", args: filetool.ReadArgs{Path: "small.txt", Offset: 2, Limit: 1},
			want: filetool.ReadResult{Path: "small.txt", Content: "beta\n", StartLine: 2, EndLine: 2, TotalLines: n(3), Truncated: true}},
		{name: "default line cap", args: filetool.ReadArgs{Path: "big.txt"},
			want: filetool.ReadResult{Path: "big.txt", Content: lines(2000), StartLine: 1, EndLine: 2000, TotalLines: n(2500), Truncated: true}},
		{name: "continue", args: filetool.ReadArgs{Path: "big.txt", Offset: 2001},
			want: filetool.ReadResult{Path: "big.txt", Content: strings.TrimPrefix(lines(2500), lines(2000)), StartLine: 2001, EndLine: 2500, TotalLines: n(2500)}},
		{name: "absolute inside", args: filetool.ReadArgs{Path: e.root + "/small.txt", Limit: 1},
			want: filetool.ReadResult{Path: "small.txt", Content: "alpha\n", StartLine: 1, EndLine: 1, TotalLines: n(3), Truncated: true}},
		{name: "link inside", args: filetool.ReadArgs{Path: "link.txt", Offset: 3},
			want: filetool.ReadResult{Path: "small.txt", Content: "gamma\n", StartLine: 3, EndLine: 3, TotalLines: n(3)}},
		{name: "bom stripped", args: filetool.ReadArgs{Path: "bom.txt"},
			want: filetool.ReadResult{Path: "bom.txt", Content: "first\nsecond\n", StartLine: 1, EndLine: 2, TotalLines: n(2)}},
		{name: "crlf kept", args: filetool.ReadArgs{Path: "crlf.txt"},
			want: filetool.ReadResult{Path: "crlf.txt", Content: "a\r\nb\r\n", StartLine: 1, EndLine: 2, TotalLines: n(2)}},
		{name: "long line cut", args: filetool.ReadArgs{Path: "long.txt"},
			want: filetool.ReadResult{Path: "long.txt", Content: strings.Repeat("x", 2000) + " … [line cut: 3000 more bytes not shown]\nshort\n", StartLine: 1, EndLine: 2, TotalLines: n(2)}},
		{name: "empty", args: filetool.ReadArgs{Path: "empty.txt"},
			want: filetool.ReadResult{Path: "empty.txt", Content: "", StartLine: 1, EndLine: 0, TotalLines: n(0)}},
		{name: "past end", args: filetool.ReadArgs{Path: "small.txt", Offset: 9}, err: "offset 9 is past the end of small.txt, which has 3 lines; use an offset from 1 to 3", kind: helikon.KindOther},
		{name: "binary", args: filetool.ReadArgs{Path: "bin.dat"}, err: "bin.dat looks binary", kind: helikon.KindOther},
		{name: "not utf-8", args: filetool.ReadArgs{Path: "latin1.txt"}, err: "latin1.txt is not UTF-8 text (line 1", kind: helikon.KindOther},
		{name: "missing", args: filetool.ReadArgs{Path: "nope.txt"}, err: "no such file: nope.txt", kind: helikon.KindOther},
		{name: "directory", args: filetool.ReadArgs{Path: "."}, err: "is a directory", kind: helikon.KindOther},
		{name: "outside", args: filetool.ReadArgs{Path: "../outside/secret.txt"}, err: "../outside/secret.txt is outside the sandbox root", kind: helikon.KindDenied},
		{name: "outside absolute", args: filetool.ReadArgs{Path: e.outside + "/secret.txt"}, err: "is outside the sandbox root", kind: helikon.KindDenied},
		{name: "empty path", args: filetool.ReadArgs{Path: ""}, err: `field "path"`, kind: helikon.KindInvalidArgs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call[filetool.ReadResult](t, e.read, tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || helikon.KindOf(err) != tc.kind {
					t.Fatalf("err = %v (%s), want %s containing %q", err, helikon.KindOf(err), tc.kind, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) {
				t.Errorf("got  %s\nwant %s", gj, wj)
			}
		})
	}
}

func TestReadInvalidArgsListsEveryProblem(t *testing.T) {
	e := newEnv(t)
	_, err := e.read.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), json.RawMessage(`{"offset":0,"limit":"ten","colour":"red"}`))
	problems := helikon.SchemaErrors(err)
	if len(problems) != 4 {
		t.Fatalf("problems = %q, want 4 (path missing, offset, limit, unknown field)", problems)
	}
}

func TestReadRefusesFIFOWithoutBlocking(t *testing.T) {
	e := newEnv(t)
	if err := syscall.Mkfifo(filepath.Join(e.root, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "pipe"})
	if err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("err = %v", err)
	}
}

// Reading the first lines of a huge file must not read the file: the file
// here is sparse and 1 TiB long, so reading it would take many minutes.
func TestReadFirstLinesOfHugeFileReadsOnlyThem(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.root, "huge.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(lines(2000)) // text beyond the 8000 bytes sniffed for NULs
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("cannot make a sparse 1 TiB file here: %v", err)
	}
	f.Close()
	got, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "huge.txt", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != lines(3) || !got.Truncated || got.TotalLines != nil {
		t.Errorf("got %+v", got)
	}
}

func TestWrite(t *testing.T) {
	e := newEnv(t)
	e.file(t, "exists.txt", "old")
	if err := os.Chmod(filepath.Join(e.root, "exists.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args filetool.WriteArgs
		want filetool.WriteResult
		err  string
		kind helikon.ErrorKind
	}{
		{name: "create with parents", args: filetool.WriteArgs{Path: "a/b/new.txt", Content: "hello"}, want: filetool.WriteResult{Path: "a/b/new.txt", BytesWritten: 5, Created: true}},
		{name: "overwrite", args: filetool.WriteArgs{Path: "exists.txt", Content: "new content"}, want: filetool.WriteResult{Path: "exists.txt", BytesWritten: 11}},
		{name: "empty content", args: filetool.WriteArgs{Path: "empty.txt"}, want: filetool.WriteResult{Path: "empty.txt", Created: true}},
		{name: "outside", args: filetool.WriteArgs{Path: "../outside/x.txt", Content: "x"}, err: "outside the sandbox root", kind: helikon.KindDenied},
		{name: "root", args: filetool.WriteArgs{Path: ".", Content: "x"}, err: "is a directory, the sandbox root", kind: helikon.KindOther},
		{name: "directory", args: filetool.WriteArgs{Path: "a", Content: "x"}, err: "a is a directory", kind: helikon.KindOther},
		{name: "missing content", args: filetool.WriteArgs{Path: "x"}, err: "", kind: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call[filetool.WriteResult](t, e.write, tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || helikon.KindOf(err) != tc.kind {
					t.Fatalf("err = %v (%s), want %s containing %q", err, helikon.KindOf(err), tc.kind, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Path != "" && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := e.content(t, "exists.txt"); got != "new content" {
		t.Errorf("exists.txt = %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(e.root, "exists.txt")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if _, err := e.write.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), json.RawMessage(`{"path":"x.txt"}`)); !errors.Is(err, helikon.ErrInvalidArgs) {
		t.Errorf("missing content: %v", err)
	}
}

func TestWriteAndEditSizeLimits(t *testing.T) {
	e := newEnv(t)
	w := filetool.NewWrite[app](local.NewFS(e.sb), &filetool.WriteOptions{MaxBytes: 10})
	_, err := call[filetool.WriteResult](t, w, filetool.WriteArgs{Path: "x", Content: strings.Repeat("y", 11)})
	if !errors.Is(err, helikon.ErrInvalidArgs) || !strings.Contains(err.Error(), "over the 10 B limit") {
		t.Errorf("write over the limit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused write created the file")
	}
	ed := filetool.NewEdit[app](local.NewFS(e.sb), &filetool.EditOptions{MaxBytes: 10})
	e.file(t, "big", strings.Repeat("z", 11))
	_, err = call[filetool.EditResult](t, ed, filetool.EditArgs{Path: "big", OldString: "z", NewString: "y", ReplaceAll: true})
	if helikon.KindOf(err) != helikon.KindOther || !strings.Contains(err.Error(), "over the 10 B limit") {
		t.Errorf("edit of a file over the limit: %v", err)
	}
	e.file(t, "grow", "abc")
	_, err = call[filetool.EditResult](t, ed, filetool.EditArgs{Path: "grow", OldString: "b", NewString: "bbbbbbbbbb"})
	if !errors.Is(err, workspace.ErrTooLarge) {
		t.Errorf("edit growing a file over the limit: %v", err)
	}
	if _, err := call[filetool.WriteResult](t, e.write, filetool.WriteArgs{Path: "default", Content: strings.Repeat("a", filetool.DefaultMaxWriteBytes+1)}); !errors.Is(err, helikon.ErrInvalidArgs) {
		t.Errorf("default limit: %v", err)
	}
}

func TestEdit(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, before string
		args         filetool.EditArgs
		after        string
		n            int
		err          string
		kind         helikon.ErrorKind
	}{
		{name: "unique", before: "a\nb\nc\n", args: filetool.EditArgs{OldString: "b\n", NewString: "B\n"}, after: "a\nB\nc\n", n: 1},
		{name: "replace all", before: "x x x", args: filetool.EditArgs{OldString: "x", NewString: "yy", ReplaceAll: true}, after: "yy yy yy", n: 3},
		{name: "delete", before: "keep drop keep", args: filetool.EditArgs{OldString: " drop", NewString: ""}, after: "keep keep", n: 1},
		{name: "keeps bom and missing final newline", before: "\ufeffone\ntwo", args: filetool.EditArgs{OldString: "two", NewString: "2"}, after: "\ufeffone\n2", n: 1},
		{name: "crlf kept for lf old_string", before: "one\r\ntwo\r\nthree\r\n", args: filetool.EditArgs{OldString: "one\ntwo\n", NewString: "1\n2\n"}, after: "1\r\n2\r\nthree\r\n", n: 1},
		{name: "crlf exact", before: "one\r\ntwo\r\n", args: filetool.EditArgs{OldString: "one\r\n", NewString: "1\r\n"}, after: "1\r\ntwo\r\n", n: 1},
		{name: "not unique", before: "x x", args: filetool.EditArgs{OldString: "x", NewString: "y"}, after: "x x",
			err: "old_string occurs 2 times in f.txt; include more surrounding lines to make it unique, or set replace_all to true", kind: helikon.KindOther},
		{name: "not found", before: "abc", args: filetool.EditArgs{OldString: "abd", NewString: "y"}, after: "abc", err: "old_string was not found in f.txt", kind: helikon.KindOther},
		{name: "same", before: "abc", args: filetool.EditArgs{OldString: "b", NewString: "b"}, after: "abc", err: "identical", kind: helikon.KindInvalidArgs},
		{name: "empty old", before: "abc", args: filetool.EditArgs{OldString: "", NewString: "b"}, after: "abc", err: "old_string", kind: helikon.KindInvalidArgs},
		{name: "binary", before: "a\x00b", args: filetool.EditArgs{OldString: "a", NewString: "c"}, after: "a\x00b", err: "looks binary", kind: helikon.KindOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.file(t, "f.txt", tc.before)
			tc.args.Path = "f.txt"
			got, err := call[filetool.EditResult](t, e.edit, tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || helikon.KindOf(err) != tc.kind {
					t.Fatalf("err = %v (%s), want %s containing %q", err, helikon.KindOf(err), tc.kind, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got.Replacements != tc.n || got.Path != "f.txt" {
				t.Errorf("got %+v", got)
			}
			if c := e.content(t, "f.txt"); c != tc.after {
				t.Errorf("file = %q, want %q", c, tc.after)
			}
		})
	}
	_, err := call[filetool.EditResult](t, e.edit, filetool.EditArgs{Path: "missing.txt", OldString: "a", NewString: "b"})
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "no such file: missing.txt") {
		t.Errorf("missing file: %v", err)
	}
}

// A hard link inside the root to an outside file: Write and Edit must
// replace the link's directory entry and leave the outside inode alone.
func TestWriteAndEditNeverWriteThroughHardLink(t *testing.T) {
	e := newEnv(t)
	outsideFile := filepath.Join(e.outside, "secret.txt")
	for _, name := range []string{"w.txt", "e.txt"} {
		if err := os.Link(outsideFile, filepath.Join(e.root, name)); err != nil {
			t.Skipf("cannot make a hard link here: %v", err)
		}
	}
	if _, err := call[filetool.WriteResult](t, e.write, filetool.WriteArgs{Path: "w.txt", Content: "PWNED"}); err != nil {
		t.Fatal(err)
	}
	if _, err := call[filetool.EditResult](t, e.edit, filetool.EditArgs{Path: "e.txt", OldString: "SECRET", NewString: "PWNED"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(outsideFile)
	if string(b) != secret {
		t.Fatalf("the outside file was changed through a hard link: %q", b)
	}
	if got := e.content(t, "e.txt"); got != "TOP-PWNED-OUTSIDE\n" {
		t.Errorf("e.txt = %q", got)
	}
}

// Every way out of the root is denied for all three tools, and nothing
// outside changes.
func TestToolsDenyPathsOutsideRoot(t *testing.T) {
	e := newEnv(t)
	for name, target := range map[string]string{
		"abs-link": e.outside, "rel-link": "../outside", "proc-link": "/proc/self/root" + e.outside, "file-link": "../outside/secret.txt",
	} {
		if err := os.Symlink(target, filepath.Join(e.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{
		"../outside/secret.txt", e.outside + "/secret.txt", e.root + "-evil/x", e.root + "/../outside/secret.txt",
		"abs-link/secret.txt", "rel-link/secret.txt", "rel-link/", "proc-link/secret.txt", "file-link",
		"/proc/self/root" + e.outside + "/secret.txt", "/proc/self/cwd/x",
	}
	for _, p := range paths {
		_, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: p})
		if !errors.Is(err, helikon.ErrDenied) {
			t.Errorf("Read(%q) = %v, want denied", p, err)
		}
		_, err = call[filetool.WriteResult](t, e.write, filetool.WriteArgs{Path: p, Content: "PWNED"})
		if !errors.Is(err, helikon.ErrDenied) {
			t.Errorf("Write(%q) = %v, want denied", p, err)
		}
		_, err = call[filetool.EditResult](t, e.edit, filetool.EditArgs{Path: p, OldString: "SECRET", NewString: "PWNED"})
		if !errors.Is(err, helikon.ErrDenied) {
			t.Errorf("Edit(%q) = %v, want denied", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.outside, "secret.txt")); string(b) != secret {
		t.Fatalf("outside file changed: %q", b)
	}
	if ents, _ := os.ReadDir(e.outside); len(ents) != 1 {
		t.Fatalf("files were created outside: %v", ents)
	}
}

// Targets reports the path a link resolves to, so a rule such as Read(.env)
// cannot be sidestepped by reading a link to .env.
func TestPermissionRulesSeeThroughLinks(t *testing.T) {
	e := newEnv(t)
	e.file(t, ".env", "API_KEY=hunter2\n")
	e.file(t, "src/main.go", "package main\n")
	if err := os.Symlink(".env", filepath.Join(e.root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.env", filepath.Join(e.root, "src/config")); err != nil {
		t.Fatal(err)
	}
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Read(.env)")}, NoGuards: true}
	check := func(tool helikon.Tool[app], args string) helikon.Decision {
		return perms.Check(context.Background(), helikon.CallFor(tool, json.RawMessage(args), helikon.ModeBypass))
	}
	for _, args := range []string{`{"path":".env"}`, `{"path":"innocent.txt"}`, `{"path":"src/config"}`, `{"path":"src/../innocent.txt"}`, `{"path":"` + e.root + `/innocent.txt"}`} {
		if d := check(e.read, args); d.Allowed {
			t.Errorf("Read %s allowed despite Read(.env)", args)
		}
	}
	if d := check(e.read, `{"path":"src/main.go"}`); !d.Allowed {
		t.Errorf("Read src/main.go denied: %s", d.Reason)
	}

	// Edit(src/**) allows editing inside src, but not a link from src to .env.
	perms = &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Edit(src/**)")}, NoGuards: true}
	if d := perms.Check(context.Background(), helikon.CallFor[app](e.edit, json.RawMessage(`{"path":"src/main.go","old_string":"main","new_string":"x"}`), helikon.ModeDontAsk)); !d.Allowed {
		t.Errorf("Edit src/main.go not allowed by Edit(src/**): %s", d.Reason)
	}
	if d := perms.Check(context.Background(), helikon.CallFor[app](e.write, json.RawMessage(`{"path":"src/config","content":"x"}`), helikon.ModeDontAsk)); d.Allowed {
		t.Error("Write to src/config (a link to .env) allowed by Edit(src/**)")
	}

	// The sensitive-path guard sees a write to .env through a link.
	perms = &helikon.Permissions{}
	if d := perms.Check(context.Background(), helikon.CallFor[app](e.write, json.RawMessage(`{"path":"innocent.txt","content":"x"}`), helikon.ModeBypass)); d.Allowed || d.Stage != helikon.StageGuard {
		t.Errorf("write through a link to .env: %+v", d)
	}
}

func TestTargets(t *testing.T) {
	e := newEnv(t)
	e.file(t, "a.txt", "a")
	if err := os.Symlink("a.txt", filepath.Join(e.root, "l")); err != nil {
		t.Fatal(err)
	}
	tg, err := e.edit.Targets(json.RawMessage(`{"path":"l","old_string":"a","new_string":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []helikon.PathTarget{
		{Path: e.root + "/l", Root: e.root, Access: helikon.AccessRead}, {Path: e.root + "/l", Root: e.root, Access: helikon.AccessWrite},
		{Path: e.root + "/a.txt", Root: e.root, Access: helikon.AccessRead}, {Path: e.root + "/a.txt", Root: e.root, Access: helikon.AccessWrite},
	}
	if fmt.Sprint(tg.Paths) != fmt.Sprint(want) || tg.Unresolved != "" {
		t.Errorf("targets %+v, want %+v", tg.Paths, want)
	}
	tg, _ = e.write.Targets(json.RawMessage(`{"path":"../etc/passwd","content":""}`))
	if len(tg.Paths) != 1 || tg.Paths[0].Path != filepath.Join(filepath.Dir(e.root), "etc/passwd") {
		t.Errorf("outside path targets %+v", tg.Paths)
	}
	if tg, err := e.read.Targets(json.RawMessage(`{"nonsense":1}`)); err != nil || len(tg.Paths) != 0 {
		t.Errorf("invalid args: targets %+v, %v", tg, err)
	}
}

// TestTargetsCarryTheDecodedArguments: each tool's targets carry its
// decoding of the arguments, so that a checked call decodes them once
// (functiontool's TestCheckedCallDecodesOnce); arguments that do not decode
// carry nothing, and Invoke reports them.
func TestTargetsCarryTheDecodedArguments(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		tool helikon.Targeter
		args string
	}{
		{e.read, `{"path":"a.txt"}`},
		{e.write, `{"path":"a.txt","content":"x"}`},
		{e.edit, `{"path":"a.txt","old_string":"a","new_string":"b"}`},
	} {
		args := json.RawMessage(c.args)
		tg, err := c.tool.Targets(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tg.Decoded(args); !ok {
			t.Errorf("%s: the targets do not carry the decoded arguments", c.args)
		}
		bad := json.RawMessage(`{"nonsense":1}`)
		tg, _ = c.tool.Targets(bad)
		if _, ok := tg.Decoded(bad); ok {
			t.Errorf("%s: invalid arguments carried a decoded value", c.args)
		}
	}
}
