package cli

import "testing"

// In the helikon binary (no workspace engines of its own) exec runs the
// local and per-command backends itself and hands the workspace engines to
// helikon-agent: docker always, forkd when a session is named or kept.
func TestExecHandsWorkspaceEnginesToTheAgent(t *testing.T) {
	if workspaceExec.engines != nil {
		t.Skip("this test binary registers workspace engines")
	}
	for _, tt := range []struct {
		name        string
		sessionKeep bool
		agent       bool
	}{
		{"", false, false},
		{"os", false, false},
		{"local", true, false},
		{"host", true, false},
		{"forkd", false, false},
		{"forkd", true, true},
		{"docker", false, true},
		{"docker", true, true},
		{"nonesuch", false, false},
	} {
		here, agent := workspaceBackend(tt.name, tt.sessionKeep)
		if here || agent != tt.agent {
			t.Errorf("workspaceBackend(%q, session or keep %v) = here %v, agent %v; want here false, agent %v", tt.name, tt.sessionKeep, here, agent, tt.agent)
		}
	}
}
