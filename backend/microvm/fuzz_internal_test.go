package microvm

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// FuzzParseProxyEndpoint never panics and never accepts an endpoint
// without a port.
func FuzzParseProxyEndpoint(f *testing.F) {
	for _, s := range []string{"proxy:3128", "http://u:p@proxy:3128", "https://proxy:1", "proxy", "http://proxy", "[::1]:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hostport, _, err := parseProxyEndpoint(s)
		if err != nil {
			return
		}
		if _, port, err := net.SplitHostPort(hostport); err != nil || port == "" {
			t.Fatalf("%q: accepted %q without a port", s, hostport)
		}
	})
}

// FuzzArgvInDir: whatever the directory's name and a SetEnv value hold, the
// exec arguments RunIn sends start the program in that very directory with
// that very value, run here by the same sh the guest has.
func FuzzArgvInDir(f *testing.F) {
	for _, s := range []string{"ws", "a b", "$(touch x)", "`id`", "'\"", "-n", "--", ";exit 3", "*", "~", "\\"} {
		f.Add(s, s)
	}
	b := &Backend{proxy: new(string)}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, name, value string) {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 200 || strings.ContainsRune(value, 0) {
			return
		}
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return
		}
		args, err := b.argv(&backend.Request{Argv: []string{"sh", "-c", `pwd; printf %s "$V"`}, SetEnv: []string{"V=" + value}}, dir)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(args[0], args[1:]...).Output()
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if want := dir + "\n" + value; string(out) != want {
			t.Fatalf("ran as %q, want %q", out, want)
		}
	})
}
