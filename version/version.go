// Package version says which build of helikon is running, from the build
// information the Go toolchain embeds in every binary
// ([runtime/debug.ReadBuildInfo]): the module version, the VCS revision and
// whether the tree was modified, and the Go version. Nothing is injected
// with -ldflags, so a binary from go install, one built in a checkout and a
// release archive report the same fields the same way.
//
// What it does not know: a binary built with -buildvcs=false, or outside a
// VCS checkout (from the module cache, as go install does), has no revision;
// go install reports the module version instead. A binary built by go build
// in a checkout reports the version "(devel)" unless the toolchain stamps
// one from a tag (Go 1.24 and later do, for a tagged commit).
package version

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Module is the path of helikon's module.
const Module = "github.com/paigasus/helikon"

// Info describes one build. The zero value is a build nothing is known
// about; [Get] fills it in.
type Info struct {
	// Path is the main module's path: helikon's own for the helikon
	// binaries, another for a program that links helikon (helikon-k8s,
	// an SDK user's).
	Path string `json:"module"`
	// Version is the main module's version: a semantic version from go
	// install or a tagged checkout, "(devel)" otherwise.
	Version string `json:"version"`
	// Helikon is the version of helikon's module the program links when
	// the main module is another one; "" when it is helikon itself.
	Helikon string `json:"helikon,omitempty"`
	// Revision is the VCS commit the binary was built from, Time its
	// commit time (RFC 3339); both "" when the build carries none.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary; Platform is
	// GOOS/GOARCH.
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
}

// Get returns the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts an [Info] from bi, as [Get] does for the running
// binary; a nil bi (a binary built without module support) gives only the
// Go version and platform of the running process.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return info
	}
	info.Path, info.Version = bi.Main.Path, bi.Main.Version
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		info.Platform = goos + "/" + goarch
	}
	if info.Path != Module {
		for _, d := range bi.Deps {
			if d.Path == Module {
				info.Helikon = d.Version
				if d.Replace != nil {
					info.Helikon += " => " + d.Replace.Path
				}
			}
		}
	}
	return info
}

// String is the one-line form helikon version prints and the MCP server
// reports as its implementation version, such as
// "v0.3.0 (rev 0f4859f2a1c3, modified) go1.26.5 linux/amd64".
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(cmp.Or(i.Version, "(unknown)"))
	if i.Helikon != "" {
		fmt.Fprintf(&b, " helikon %s", i.Helikon)
	}
	if rev := i.Revision; rev != "" {
		rev = rev[:min(len(rev), 12)]
		if i.Modified {
			rev += ", modified"
		}
		fmt.Fprintf(&b, " (rev %s)", rev)
	}
	fmt.Fprintf(&b, " %s %s", i.GoVersion, i.Platform)
	return b.String()
}
