package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Pins records the approved definition of each wrapped tool, by the name
// permission rules give it (mcp__SERVER__TOOL), as its [Fingerprint]. The
// zero value is an empty set kept in memory; [LoadPins] keeps one in a
// file. It is safe for concurrent use.
type Pins struct {
	mu   sync.Mutex
	path string
	m    map[string]string
}

// LoadPins reads the pins kept in the JSON file at path (an object from
// tool name to fingerprint); a missing file is an empty set. Pins
// approved later are written back to path (mode 0600, replaced
// atomically). Delete an entry to have its tool pinned afresh, as first
// seen, the next time the server is wrapped.
func LoadPins(path string) (*Pins, error) {
	p := &Pins{path: path, m: map[string]string{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mcptools: pins: %w", err)
	}
	if err := json.Unmarshal(b, &p.m); err != nil {
		return nil, fmt.Errorf("mcptools: pins %s: %w", path, err)
	}
	return p, nil
}

func (p *Pins) get(tool string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fp, ok := p.m[tool]
	return fp, ok
}

func (p *Pins) set(tool, fp string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]string{}
	}
	p.m[tool] = fp
}

// save writes the pins to their file, if they have one.
func (p *Pins) save() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(p.m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".pins-*")
	if err != nil {
		return fmt.Errorf("mcptools: saving pins: %w", err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("mcptools: saving pins: %w", err)
	}
	return nil
}
