package version_test

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/paigasus/helikon/version"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"},
		{Key: "vcs.revision", Value: "0f4859f2a1c3d5e6f7a8b9c0d1e2f3a4b5c6d7e8"},
		{Key: "vcs.time", Value: "2026-12-05T12:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		want version.Info
		str  string
	}{
		{
			name: "helikon built in a modified checkout",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.5", Main: debug.Module{Path: version.Module, Version: "(devel)"}, Settings: vcs},
			want: version.Info{Path: version.Module, Version: "(devel)", Revision: "0f4859f2a1c3d5e6f7a8b9c0d1e2f3a4b5c6d7e8", Time: "2026-12-05T12:00:00Z", Modified: true, GoVersion: "go1.26.5", Platform: "darwin/arm64"},
			str:  "(devel) (rev 0f4859f2a1c3, modified) go1.26.5 darwin/arm64",
		},
		{
			name: "helikon from go install",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.5", Main: debug.Module{Path: version.Module, Version: "v0.3.0"}, Settings: vcs[:2]},
			want: version.Info{Path: version.Module, Version: "v0.3.0", GoVersion: "go1.26.5", Platform: "darwin/arm64"},
			str:  "v0.3.0 go1.26.5 darwin/arm64",
		},
		{
			name: "another module linking helikon through a replace",
			bi: &debug.BuildInfo{GoVersion: "go1.26.5", Main: debug.Module{Path: "example.com/k8s", Version: "(devel)"}, Settings: vcs[:2],
				Deps: []*debug.Module{{Path: "k8s.io/api", Version: "v0.37.2"}, {Path: version.Module, Version: "v0.0.0", Replace: &debug.Module{Path: "../.."}}}},
			want: version.Info{Path: "example.com/k8s", Version: "(devel)", Helikon: "v0.0.0 => ../..", GoVersion: "go1.26.5", Platform: "darwin/arm64"},
			str:  "(devel) helikon v0.0.0 => ../.. go1.26.5 darwin/arm64",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := version.FromBuildInfo(tt.bi)
			if got != tt.want {
				t.Errorf("FromBuildInfo = %+v\nwant %+v", got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
		})
	}
}

func TestFromNilBuildInfoKnowsTheToolchain(t *testing.T) {
	got := version.FromBuildInfo(nil)
	if got.GoVersion == "" || !strings.Contains(got.Platform, "/") || got.Path != "" {
		t.Errorf("FromBuildInfo(nil) = %+v; want only the Go version and platform", got)
	}
}

func TestGetIsThisTestBinary(t *testing.T) {
	got := version.Get()
	// A test binary's main module is the module under test.
	if got.Path != version.Module || got.GoVersion == "" {
		t.Errorf("Get() = %+v; want module %s and a Go version", got, version.Module)
	}
	b, err := json.Marshal(got)
	if err != nil || !strings.Contains(string(b), `"module":"`+version.Module+`"`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}

func Example() {
	info := version.Get()
	// A bug report's line: the version, revision, Go version and platform.
	fmt.Println(strings.HasPrefix(info.String(), info.Version))
	// Output: true
}
