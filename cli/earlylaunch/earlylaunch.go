// Package earlylaunch starts the OS sandbox's launcher while the helikon
// binary is still initialising, when its command line asks for one command
// on the OS sandbox and the caller is not root: the launcher's start, a
// second Go runtime in new user, mount and pid namespaces, then overlaps
// the rest of the binary's initialisation and the flag and policy parsing
// of helikon exec instead of following them (see internal/prelaunch; the
// backend takes it through ossandbox.StartLauncher). Importing the package
// is enough: its initialiser does it, and it imports nothing heavier than
// internal/prelaunch so that the initialiser runs before most of the
// binary's.
//
// The decision is taken on the command line alone, before the policy files
// are read; where it is wrong (a policy file chooses another backend, say),
// the launcher is not taken and the CLI kills it ([prelaunch.DiscardEarly]);
// where it is not taken, nothing but the time is lost.
package earlylaunch

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/paigasus/helikon/internal/prelaunch"
)

func init() {
	if root, ok := Wanted(os.Args[1:], os.Geteuid()); ok {
		prelaunch.Early(root)
	}
}

// BoolFlags are helikon exec's flags that take no value; every other flag
// takes one (as the next argument or after =). A test holds this list to the
// flags helikon exec defines.
var BoolFlags = []string{"allow-network", "claude-settings", "isolate", "keep-workspace", "loopback", "map-root-user", "no-path", "read-caches", "t", "trust-project", "user-caches-beneath"}

// remoteFlags are helikon exec's flags that only a remote backend uses:
// with them the launcher would not be taken. (--egress-allow and
// --loopback are the launcher's too: it makes the session's network
// namespace.)
var remoteFlags = []string{"session", "keep-workspace", "image", "isolate", "runtime", "cpus", "memory"}

// Wanted reports whether args, a helikon command line without the program
// name, run one command on the OS sandbox's long-lived launcher for a caller
// of effective user id euid (not root, whose commands need no launcher), and
// the launcher's root: --root made absolute, free of symbolic links, as the
// backend makes it.
func Wanted(args []string, euid int) (root string, ok bool) {
	if euid == 0 || len(args) < 2 || args[0] != "exec" {
		return "", false
	}
	dir := "."
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break // the program and its arguments
		}
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !inline && !slices.Contains(BoolFlags, name) {
			if i+1 >= len(args) {
				return "", false // a usage error
			}
			i++
			value = args[i]
		}
		switch {
		case name == "h" || name == "help" || slices.Contains(remoteFlags, name):
			return "", false
		case name == "backend" && value != "" && value != "os" && value != "local":
			return "", false
		case name == "map-root-user" && !isFalse(value):
			// The launcher started here maps the caller to its own ids;
			// a backend that maps it to root would not take it.
			return "", false
		case name == "root":
			dir = value
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if root, err = filepath.EvalSymlinks(abs); err != nil {
		return "", false
	}
	return root, true
}

// isFalse reports whether a boolean flag's value is false as package flag
// parses it; "" (the flag given without a value) is true.
func isFalse(value string) bool {
	v, err := strconv.ParseBool(value)
	return value != "" && err == nil && !v
}
