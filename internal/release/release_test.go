package release_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/internal/release"
)

// entries returns the names and modes of a tar.gz's files.
func entries(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	got := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h.Mode
	}
}

func sum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestArchiveIsReproducibleAndSummed(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "helikon")
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(bin, []byte("\x7fELF..."), 0o700)
	os.WriteFile(readme, []byte("# helikon\n"), 0o600)
	a1 := filepath.Join(dir, "a.tar.gz")
	d1, err := release.Archive(a1, bin, []string{readme, filepath.Join(dir, "LICENSE")})
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(bin, later, later) // another mtime: the same bytes
	a2 := filepath.Join(dir, "b.tar.gz")
	d2, err := release.Archive(a2, bin, []string{readme})
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 || d1 != sum(t, a1) {
		t.Fatalf("digests %s, %s, file %s: want one", d1, d2, sum(t, a1))
	}
	if got := entries(t, a1); len(got) != 2 || got["helikon"] != 0o755 || got["README.md"] != 0o644 {
		t.Fatalf("entries %v", got)
	}
	sums := filepath.Join(dir, "SHA256SUMS")
	if err := release.WriteSums(sums, []release.Artifact{{Archive: a2, SHA256: d2}, {Archive: a1, SHA256: d1}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(sums)
	if want := d1 + "  a.tar.gz\n" + d2 + "  b.tar.gz\n"; string(b) != want {
		t.Fatalf("SHA256SUMS:\n%s\nwant\n%s", b, want)
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "SHA256SUMS")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum -c: %v\n%s", err, out)
		}
	}
}

func TestSBOMOfThisBinary(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information")
	}
	doc := release.SBOM("release.test", info)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["bomFormat"] != "CycloneDX" || m["specVersion"] != "1.5" {
		t.Fatalf("header %v %v", m["bomFormat"], m["specVersion"])
	}
	if doc.Metadata.Component.Name != "release.test" || doc.Metadata.Component.Type != "application" {
		t.Fatalf("main component %+v", doc.Metadata.Component)
	}
	for _, c := range doc.Components {
		if c.Type != "library" || !strings.HasPrefix(c.PURL, "pkg:golang/"+c.Name+"@") {
			t.Errorf("component %+v", c)
		}
	}
}

// TestBuildSmallProgram runs the whole Build on a small program for two
// platforms: archives named by binary, version and platform, summed, and
// an SBOM read from each built binary. It builds the standard library
// twice more (static, -trimpath, two platforms: 264 s on a loaded
// 2-core machine), so it runs only with HELIKON_RELEASE_TEST=1; CI builds
// the real linux/amd64 snapshot with the command instead.
func TestBuildSmallProgram(t *testing.T) {
	if os.Getenv("HELIKON_RELEASE_TEST") == "" {
		t.Skip("set HELIKON_RELEASE_TEST=1: builds the standard library for two platforms")
	}
	out := t.TempDir()
	arts, err := release.Build(t.Context(), &release.Options{
		Root: ".", Out: out, Version: "0.0.0-test",
		Platforms: []string{"linux/amd64", "darwin/arm64"},
		Binaries:  []release.Binary{{Name: "hello", Package: "./testdata/hello"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 2 {
		t.Fatalf("%d artifacts", len(arts))
	}
	for _, a := range arts {
		want := "hello_0.0.0-test_" + strings.ReplaceAll(a.Platform, "/", "_") + ".tar.gz"
		if filepath.Base(a.Archive) != want || a.SHA256 != sum(t, a.Archive) {
			t.Errorf("artifact %+v, want %s", a, want)
		}
		if got := entries(t, a.Archive); got["hello"] != 0o755 {
			t.Errorf("%s: entries %v", a.Archive, got)
		}
		var doc release.CycloneDX
		b, err := os.ReadFile(a.SBOM)
		if err != nil || json.Unmarshal(b, &doc) != nil || doc.Metadata.Component.Name != "hello" {
			t.Errorf("SBOM %s: %v %s", a.SBOM, err, b)
		}
		var cgo string
		for _, p := range doc.Metadata.Component.Properties {
			if p.Name == "go:build:CGO_ENABLED" {
				cgo = p.Value
			}
		}
		if cgo != "0" {
			t.Errorf("%s: CGO_ENABLED %q in the SBOM, want a static build", a.Archive, cgo)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if strings.Count(string(b), "\n") != 2 {
		t.Errorf("SHA256SUMS:\n%s", b)
	}
}
