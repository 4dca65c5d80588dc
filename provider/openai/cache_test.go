package openai

import (
	"runtime"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func cached(m *Model) int {
	n := 0
	m.schemas.Range(func(any, any) bool { n++; return true })
	return n
}

// TestSchemaCacheForgetsCollectedSchemas: a model that has seen many
// generations of tool schemas (an MCP server whose tool list keeps
// changing) does not keep them once they are gone.
func TestSchemaCacheForgetsCollectedSchemas(t *testing.T) {
	m, err := New("m", &Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	kept := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}}}
	first, err := m.schemaFor(kept)
	if err != nil {
		t.Fatal(err)
	}
	// Held until counted: a collection during the loop may otherwise
	// forget some of them early.
	generations := make([]*jsonschema.Schema, 100)
	for i := range generations {
		generations[i] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}}}
		if _, err := m.schemaFor(generations[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := cached(m); n != 101 {
		t.Fatalf("%d schemas cached, want 101", n)
	}
	runtime.KeepAlive(generations)
	// Cleanups run after a collection, on their own goroutine.
	for deadline := time.Now().Add(10 * time.Second); cached(m) > 1 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := cached(m); n != 1 {
		t.Errorf("%d schemas still cached after they were collected, want 1 (the live one)", n)
	}
	if again, _ := m.schemaFor(kept); again != first {
		t.Error("a live schema lost its cache entry")
	}
	runtime.KeepAlive(kept)
}
