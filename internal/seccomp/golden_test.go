package seccomp

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/bpf"
)

var update = flag.Bool("update", false, "rewrite testdata/filters.golden from the current Build")

// goldenPrograms renders the assembled filter of both architectures under
// every Options, one instruction a line: the kernel's form (code, jt, jf, k)
// and its disassembly.
func goldenPrograms(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, arch := range []*Arch{amd64, arm64} {
		for _, p := range allOptions() {
			prog, err := Build(arch, p)
			if err != nil {
				t.Fatalf("%s %+v: %v", arch.Name, p, err)
			}
			raw, err := bpf.Assemble(prog)
			if err != nil {
				t.Fatalf("%s %+v: %v", arch.Name, p, err)
			}
			fmt.Fprintf(&b, "# %s %+v: %d instructions\n", arch.Name, p, len(raw))
			for i, r := range raw {
				fmt.Fprintf(&b, "%04d %04x %02x %02x %08x  %v\n", i, r.Op, r.Jt, r.Jf, r.K, prog[i])
			}
		}
	}
	return b.Bytes()
}

// TestFilterMatchesGolden compares the filter of every Options on both
// architectures, instruction by instruction, with the one recorded in
// testdata/filters.golden. A change to the filter, a rule dropped or a
// jump retargeted, fails it; a deliberate change is recorded with
// go test -run TestFilterMatchesGolden -update and reviewed in the diff.
func TestFilterMatchesGolden(t *testing.T) {
	path := filepath.Join("testdata", "filters.golden")
	got := goldenPrograms(t)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	// Report the first few lines that differ: the header of each program
	// names its architecture and options.
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	reported := 0
	for i := 0; i < max(len(gl), len(wl)) && reported < 5; i++ {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) {
			t.Errorf("filter differs from %s at line %d:\n got: %s\nwant: %s", path, i+1, g, w)
			reported++
		}
	}
}
