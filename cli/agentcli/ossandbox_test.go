package agentcli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

// osSandboxAvailable skips the test where the OS sandbox cannot be built.
func osSandboxAvailable(t *testing.T, dir string) {
	t.Helper()
	if code, _, stderr := clitest.Run(t, "", "guarantees", "--backend", "os", "--root", dir); code != 0 {
		t.Skipf("the OS sandbox is unavailable here: %s", stderr)
	}
}

// TestOSSandboxEgressFlags covers --egress-allow with the OS sandbox: for
// root callers the command sees only the proxy (its variables set, the
// network axis proxied); unprivileged callers and the combination with
// --allow-network are refused with 125.
func TestOSSandboxEgressFlags(t *testing.T) {
	dir := t.TempDir()
	osSandboxAvailable(t, dir)
	if code, _, stderr := clitest.Run(t, "", "exec", "--backend", "os", "--root", dir, "--egress-allow", "example.com", "--allow-network", "--", "true"); code != 125 || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("--egress-allow with --allow-network: exit %d %q; want 125", code, stderr)
	}
	if os.Geteuid() != 0 {
		code, _, stderr := clitest.Run(t, "", "exec", "--backend", "os", "--root", dir, "--egress-allow", "example.com", "--", "true")
		if code != 125 || !strings.Contains(stderr, "root") {
			t.Errorf("unprivileged --egress-allow: exit %d %q; want 125 saying it needs root", code, stderr)
		}
		return
	}
	code, stdout, stderr := clitest.Run(t, "", "exec", "--backend", "os", "--root", dir, "--egress-allow", "example.com", "--", "env")
	if code != 0 || !strings.Contains(stdout, "HTTPS_PROXY=http://127.0.0.1:3128") || !strings.Contains(stdout, "http_proxy=http://127.0.0.1:3128") {
		t.Errorf("exec with --egress-allow: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = clitest.Run(t, "", "guarantees", "--backend", "os", "--root", dir, "--egress-allow", "example.com")
	if code != 0 || !strings.Contains(stdout, `"network": "proxied"`) {
		t.Errorf("guarantees with --egress-allow: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = clitest.Run(t, "", "tool", "--backend", "os", "--root", dir, "--egress-allow", "example.com", "Bash", `{"command":"echo $ALL_PROXY"}`)
	if code != 0 || !strings.Contains(stdout, `http://127.0.0.1:3128`) {
		t.Errorf("tool Bash with --egress-allow: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}
