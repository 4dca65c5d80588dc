package filetool_test

import "github.com/paigasus/helikon/sandbox"

// benchFS is what the benchmarks give the tools for sb.
func benchFS(sb *sandbox.Sandbox) *sandbox.Sandbox { return sb }
