package microvm_test

import (
	"testing"
	"time"

	"github.com/paigasus/helikon/backend/backendtest"
)

// The fake controller runs each exec as a local process, as the real one
// runs it in the microVM; forkd counts timeouts in whole seconds and has no
// streaming exec, so the request's own writers get the output at the end.
func TestConformance(t *testing.T) {
	_, srv := startTLS(t)
	backendtest.Run(t, newBackend(t, srv, nil), &backendtest.Options{TimeoutStep: time.Second})
}
