package ossandbox

import (
	"testing"

	"github.com/paigasus/helikon/backend/backendtest"
)

func TestConformance(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	backendtest.Run(t, b, nil)
}
