package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// tarOf builds a tar stream of headers (with content for regular files).
func tarOf(t testing.TB, entries ...*tar.Header) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(h.Name))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// mirrorFor returns an isolated mode's checkpoint mirror in a new
// directory beside an outside directory that must stay empty.
func mirrorFor(t testing.TB) (c *ckpt, outside string) {
	base := t.TempDir()
	mirror, outside := filepath.Join(base, "mirror"), filepath.Join(base, "outside")
	os.Mkdir(mirror, 0o700)
	os.Mkdir(outside, 0o700)
	root, err := os.OpenRoot(mirror)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &ckpt{mirror: mirror, root: root, max: 1 << 20}, outside
}

func emptyDir(t testing.TB, dir string) {
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("the extraction wrote outside the mirror: %v in %s", ents, dir)
	}
}

// The container's archive is the agent's to shape: names with "..", a
// link to the outside followed by a name through it, a hard link to a
// file outside. None may lead the extraction out of the mirror.
func TestExtractStaysInTheMirror(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries func(outside string) []*tar.Header
	}{
		{"dot-dot", func(string) []*tar.Header {
			return []*tar.Header{{Name: "w/../outside/x", Typeflag: tar.TypeReg, Mode: 0o644}}
		}},
		{"dot-dot in ./", func(string) []*tar.Header {
			return []*tar.Header{{Name: "./../outside/x", Typeflag: tar.TypeReg, Mode: 0o644}}
		}},
		{"through a link", func(out string) []*tar.Header {
			return []*tar.Header{
				{Name: "w/d", Typeflag: tar.TypeSymlink, Linkname: out},
				{Name: "w/d/x", Typeflag: tar.TypeReg, Mode: 0o644},
			}
		}},
		{"through a relative link", func(string) []*tar.Header {
			return []*tar.Header{
				{Name: "w/d", Typeflag: tar.TypeSymlink, Linkname: "../outside"},
				{Name: "w/d/x", Typeflag: tar.TypeReg, Mode: 0o644},
			}
		}},
		{"hard link out", func(out string) []*tar.Header {
			return []*tar.Header{{Name: "w/h", Typeflag: tar.TypeLink, Linkname: "w/../../outside/x"}}
		}},
		{"directory through a link", func(out string) []*tar.Header {
			return []*tar.Header{
				{Name: "w/d", Typeflag: tar.TypeSymlink, Linkname: out},
				{Name: "w/d/sub/", Typeflag: tar.TypeDir, Mode: 0o755},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, outside := mirrorFor(t)
			err := c.extract(context.Background(), tar.NewReader(bytes.NewReader(tarOf(t, tc.entries(outside)...))))
			if err == nil {
				t.Error("an archive leading outside the mirror was extracted without an error")
			}
			emptyDir(t, outside)
		})
	}
}

// FuzzExtract feeds arbitrary archives to the extraction: it must never
// panic nor write outside the mirror.
func FuzzExtract(f *testing.F) {
	f.Add(tarOf(f, &tar.Header{Name: "w/a", Typeflag: tar.TypeReg, Mode: 0o644}, &tar.Header{Name: "w/l", Typeflag: tar.TypeSymlink, Linkname: "/"}))
	f.Add(tarOf(f, &tar.Header{Name: "w/d", Typeflag: tar.TypeSymlink, Linkname: "../outside"}, &tar.Header{Name: "w/d/x", Typeflag: tar.TypeReg}))
	f.Add(tarOf(f, &tar.Header{Name: "./h", Typeflag: tar.TypeLink, Linkname: "./../outside/y"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, outside := mirrorFor(t)
		c.extract(context.Background(), tar.NewReader(bytes.NewReader(data)))
		emptyDir(t, outside)
	})
}
