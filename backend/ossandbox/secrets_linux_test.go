//go:build linux

package ossandbox

import (
	"os"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// TestSystemSecretsHiddenFromRoot is the attack test of SystemSecrets: a
// root caller's command runs as uid 0, which owns /etc/shadow, so without
// the mask it reads the password hashes. Each probe prints what it read;
// the secret's first line must not appear. /etc/passwd stays readable.
func TestSystemSecretsHiddenFromRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the mask matters to root callers only (an unprivileged caller's commands cannot read these files); run as root")
	}
	b, _ := newTestBackend(t, Options{})
	var probed int
	for _, p := range systemSecrets(SystemSecrets) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		probed++
		cmd := "cat " + shellQuote(p)
		if fi.IsDir() {
			cmd = "ls -A " + shellQuote(p) + " && cat " + shellQuote(p) + "/*"
		}
		t.Run(p, func(t *testing.T) {
			res, err := b.Run(t.Context(), &backend.Request{Command: cmd})
			if err != nil {
				t.Fatal(err)
			}
			if *res.ExitCode == 0 || len(strings.TrimSpace(string(res.Stdout))) > 0 {
				t.Fatalf("%s: exit %d, read %q: a root caller's command reads the machine's secret", p, *res.ExitCode, res.Stdout)
			}
		})
	}
	if probed == 0 {
		t.Skip("none of SystemSecrets exists on this machine")
	}
	res, err := b.Run(t.Context(), &backend.Request{Command: "head -c 4 /etc/passwd"})
	if err != nil || *res.ExitCode != 0 || string(res.Stdout) != "root" {
		t.Fatalf("/etc/passwd must stay readable: %v %+v", err, res)
	}
}

func TestSystemSecretsExpandsGlobs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"ssh_host_rsa_key", "ssh_host_rsa_key.pub", "ssh_host_ed25519_key"} {
		os.WriteFile(dir+"/"+n, nil, 0o600)
	}
	got := systemSecrets([]string{dir + "/ssh_host_*key", dir + "/missing", dir + "/ssh_host_rsa_key"})
	want := []string{dir + "/ssh_host_ed25519_key", dir + "/ssh_host_rsa_key"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
