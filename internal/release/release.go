// Package release builds helikon's release archives: each binary built
// statically (CGO_ENABLED=0, -trimpath) per platform, one tar.gz archive
// per binary and platform, a SHA256SUMS file over the archives, and a
// CycloneDX SBOM per binary read from the module information Go embeds in
// it (debug/buildinfo).
//
// It is written here, on the standard library alone, instead of using
// goreleaser, the ecosystem's tool (issue 38): the only goreleaser the
// module proxy of this workplace serves is marked as not an approved
// release, and building it pulls some hundreds of modules. What this
// package does is the small part of goreleaser helikon needs; a
// .goreleaser.yaml can replace it where goreleaser is available, with the
// same names (helikon_VERSION_OS_ARCH.tar.gz, SHA256SUMS).
//
// Run it with: go run ./internal/release/cmd/helikon-release -h
package release

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Binary is one program of the release.
type Binary struct {
	// Name is the binary's file name (helikon, helikon-agent, ...).
	Name string
	// Dir is the directory go build runs in (a module's root), relative to
	// the repository's root; "" means the root.
	Dir string
	// Package is the package to build, as go build takes it from Dir.
	Package string
}

// Binaries are helikon's three programs; helikon-k8s is in the module
// workspace/agentsandbox.
var Binaries = []Binary{
	{Name: "helikon", Package: "./cmd/helikon"},
	{Name: "helikon-agent", Package: "./cmd/helikon/helikon-agent"},
	{Name: "helikon-k8s", Dir: "workspace/agentsandbox", Package: "./cmd/helikon-k8s"},
}

// Platforms are the release's platforms (GOOS/GOARCH).
var Platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// Options configures [Build].
type Options struct {
	// Root is the repository's root; "" means the working directory.
	Root string
	// Out is the directory the archives, sums and SBOMs are written to;
	// it is created.
	Out string
	// Version names the release in the archives' names ("0.3.0", or
	// "snapshot").
	Version string
	// Platforms and Binaries select what is built; nil means all of
	// [Platforms] and [Binaries].
	Platforms []string
	Binaries  []Binary
	// Go is the go command; "" means "go" from $PATH.
	Go string
}

// Artifact is one archive written by [Build].
type Artifact struct {
	Binary, Platform string
	// Archive and SBOM are the files' paths.
	Archive, SBOM string
	// SHA256 is the archive's digest, in hex.
	SHA256 string
}

// Build builds every selected binary for every selected platform and
// writes the archives, their SBOMs and SHA256SUMS to opts.Out.
func Build(ctx context.Context, opts *Options) ([]Artifact, error) {
	o := *opts
	if o.Version == "" || strings.ContainsAny(o.Version, "/\\ ") {
		return nil, fmt.Errorf("release: version %q: give one without slashes or spaces", o.Version)
	}
	if o.Platforms == nil {
		o.Platforms = Platforms
	}
	if o.Binaries == nil {
		o.Binaries = Binaries
	}
	if o.Go == "" {
		o.Go = "go"
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "helikon-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var arts []Artifact
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return nil, fmt.Errorf("release: platform %q: want GOOS/GOARCH", p)
		}
		for _, b := range o.Binaries {
			bin := filepath.Join(tmp, goos+"_"+goarch, b.Name)
			cmd := exec.CommandContext(ctx, o.Go, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, b.Package)
			cmd.Dir = filepath.Join(root, b.Dir)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-buildvcs=auto")
			if msg, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("release: building %s for %s: %w\n%s", b.Name, p, err, msg)
			}
			base := fmt.Sprintf("%s_%s_%s_%s", b.Name, o.Version, goos, goarch)
			a := Artifact{Binary: b.Name, Platform: p, Archive: filepath.Join(out, base+".tar.gz"), SBOM: filepath.Join(out, base+".cdx.json")}
			extra := []string{filepath.Join(root, "README.md"), filepath.Join(root, "LICENSE")}
			if a.SHA256, err = Archive(a.Archive, bin, extra); err != nil {
				return nil, err
			}
			if err := writeSBOM(a.SBOM, bin, b.Name); err != nil {
				return nil, err
			}
			arts = append(arts, a)
		}
	}
	return arts, WriteSums(filepath.Join(out, "SHA256SUMS"), arts)
}

// Archive writes a tar.gz at path holding bin (mode 0755) and those of
// extra that exist (mode 0644), each under its base name, with fixed times
// and owners so that the same inputs give the same bytes. It returns the
// archive's SHA-256 in hex.
func Archive(path, bin string, extra []string) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	gz := gzip.NewWriter(io.MultiWriter(f, h))
	tw := tar.NewWriter(gz)
	add := func(name string, mode int64) error {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.Base(name), Mode: mode, Size: int64(len(b)), ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	}
	err = add(bin, 0o755)
	for _, x := range extra {
		if err != nil {
			break
		}
		if _, serr := os.Stat(x); serr == nil {
			err = add(x, 0o644)
		}
	}
	err = errors.Join(err, tw.Close(), gz.Close(), f.Close())
	if err != nil {
		return "", fmt.Errorf("release: archive %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteSums writes path in sha256sum's format ("DIGEST  NAME"), one line
// per artifact's archive by base name, sorted by name, so that
// `sha256sum -c SHA256SUMS` checks them in the archives' directory.
func WriteSums(path string, arts []Artifact) error {
	lines := make([]string, 0, len(arts))
	for _, a := range arts {
		lines = append(lines, a.SHA256+"  "+filepath.Base(a.Archive)+"\n")
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
}

// writeSBOM writes the CycloneDX SBOM of the binary bin.
func writeSBOM(path, bin, name string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("release: %s has no build information: %w", bin, err)
	}
	b, err := json.MarshalIndent(SBOM(name, info), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
