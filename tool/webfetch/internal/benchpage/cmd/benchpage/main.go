// Command benchpage writes the WebFetch benchmark page to stdout, for the
// Node reference measurement in tool/webfetch/testdata/nodebench.
package main

import (
	"os"

	"github.com/paigasus/helikon/tool/webfetch/internal/benchpage"
)

func main() {
	os.Stdout.Write(benchpage.Page(2 << 20))
}
