package backend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// oneShot is a backend that only runs commands to their end.
type oneShot struct{}

func (oneShot) Run(context.Context, *backend.Request) (*backend.Result, error) {
	return &backend.Result{}, nil
}
func (oneShot) Guarantees() backend.Guarantees { return backend.Guarantees{Label: "one-shot"} }

func TestStartReportsABackendWithoutProcesses(t *testing.T) {
	p, err := backend.Start(t.Context(), oneShot{}, &backend.StartRequest{Request: backend.Request{Command: "sleep 1"}})
	if p != nil || !errors.Is(err, backend.ErrNoProcesses) {
		t.Fatalf("Start on a one-shot backend = %v, %v; want ErrNoProcesses", p, err)
	}
}
