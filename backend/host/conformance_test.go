package host_test

import (
	"testing"

	"github.com/paigasus/helikon/backend/backendtest"
	"github.com/paigasus/helikon/backend/host"
)

func TestConformance(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	backendtest.Run(t, b, nil)
}

func TestProcessConformance(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	backendtest.RunProcesses(t, b, nil)
}
