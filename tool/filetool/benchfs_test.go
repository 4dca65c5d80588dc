package filetool_test

import (
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

// benchFS is what the benchmarks give the tools for sb.
func benchFS(sb *fsroot.FS) *local.FS { return local.NewFS(sb) }
