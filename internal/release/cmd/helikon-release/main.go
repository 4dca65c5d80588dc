// Command helikon-release builds helikon's release archives with package
// release: static binaries per platform, tar.gz archives, SHA256SUMS and
// CycloneDX SBOMs.
//
//	go run ./internal/release/cmd/helikon-release -version snapshot -platforms linux/amd64 -out dist
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/paigasus/helikon/internal/release"
)

func main() {
	version := flag.String("version", "snapshot", "the release's `VERSION` in the archives' names")
	out := flag.String("out", "dist", "write the archives to `DIR`")
	platforms := flag.String("platforms", strings.Join(release.Platforms, ","), "comma-separated `GOOS/GOARCH` list")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	arts, err := release.Build(ctx, &release.Options{Out: *out, Version: *version, Platforms: strings.Split(*platforms, ",")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, a := range arts {
		fmt.Printf("%s  %s\n", a.SHA256, a.Archive)
	}
}
