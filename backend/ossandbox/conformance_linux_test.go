package ossandbox

import (
	"testing"

	"github.com/paigasus/helikon/backend/backendtest"
)

func TestConformance(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	backendtest.Run(t, b, nil)
}

func TestProcessConformance(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	// Through the long-lived launcher (unprivileged callers), processes
	// are killed but not signalled, and a terminal does not control them.
	backendtest.RunProcesses(t, b, &backendtest.ProcessOptions{NoSignals: b.view().server})
}
