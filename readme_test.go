package helikon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeProgramsCompile builds every complete Go program (a ```go block
// that starts with "package main") in README.md, so the README cannot drift
// from the API. The programs are laid over the module with -overlay, so
// nothing is written into the source tree.
func TestReadmeProgramsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	built := 0
	for i, b := range blocks {
		if !strings.HasPrefix(b[1], "package main") {
			continue
		}
		src := filepath.Join(t.TempDir(), "main.go")
		if err := os.WriteFile(src, []byte(b[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		virtual := filepath.Join(wd, "internal", "readmeprogram", "main.go")
		overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {virtual: src}})
		ov := filepath.Join(t.TempDir(), "overlay.json")
		if err := os.WriteFile(ov, overlay, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-o", os.DevNull, "-overlay", ov, "./internal/readmeprogram")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README program %d does not compile: %v\n%s", i, err, out)
		}
		built++
	}
	if built == 0 {
		t.Error("README has no complete Go program to check")
	}
}
