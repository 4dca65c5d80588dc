package agentcli

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/cli"
)

// TestMCPServerFailsClosed: where the OS sandbox cannot be built for the
// server, newMCPServer refuses (errMCPUncontained) instead of starting the
// server unsandboxed; only --mcp-unsandboxed starts it without one.
func TestMCPServerFailsClosed(t *testing.T) {
	env := &cli.Env{Stdin: nil, Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	missing := filepath.Join(t.TempDir(), "missing") // no sandbox can be built over it
	for _, tc := range []struct {
		name        string
		unsandboxed bool
		wantErr     bool
	}{
		{"contained", false, true},
		{"unsandboxed", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newMCPServer(context.Background(), env, missing, "some-server --flag", tc.unsandboxed, &cli.BackendFlags{})
			if tc.wantErr {
				if err == nil || !errors.Is(err, errMCPUncontained) {
					t.Fatalf("got %v, %v; want errMCPUncontained", s, err)
				}
				return
			}
			if err != nil || s.backend != nil {
				t.Fatalf("unsandboxed: %+v %v", s, err)
			}
		})
	}
	if _, err := newMCPServer(context.Background(), env, t.TempDir(), "'unterminated", false, &cli.BackendFlags{}); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}
