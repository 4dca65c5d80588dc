//go:build !unix

package cli

import (
	"os"

	"github.com/paigasus/helikon/backend"
)

// followSize does nothing where there is no SIGWINCH: the terminal keeps
// its first size.
func followSize(*os.File, backend.Process) (stop func()) { return func() {} }
