package mcptools_test

import (
	"testing"

	"github.com/paigasus/helikon/tool/mcptools"
	"github.com/paigasus/helikon/version"
)

func TestServerReportsItsBuild(t *testing.T) {
	k := newKit(t)
	for _, tt := range []struct {
		name    string
		opts    *mcptools.ServerOptions[app]
		want    string
		wantFor string
	}{
		{"default", nil, version.Get().String(), "helikon"},
		{"named", &mcptools.ServerOptions[app]{Name: "acme", Version: "v9"}, "v9", "acme"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := serve(t, k.tools, tt.opts, nil, "")
			info := cs.InitializeResult().ServerInfo
			if info.Version != tt.want || info.Name != tt.wantFor {
				t.Errorf("server info %+v; want %s %s", info, tt.wantFor, tt.want)
			}
		})
	}
}
