package agentcli

import (
	"slices"
	"testing"

	"github.com/paigasus/helikon/cli"
)

// The helikon binary hands exec to this one for cli.AgentBackends: the
// list must name exactly this binary's workspace engines, or exec with an
// engine would be refused there (a name missing) or handed over in vain
// (a name too many).
func TestAgentBackendsAreTheEngines(t *testing.T) {
	if got, want := slices.Sorted(slices.Values(cli.AgentBackends)), engineNames(); !slices.Equal(got, want) {
		t.Fatalf("cli.AgentBackends = %v, the agent binary's engines = %v", got, want)
	}
}
