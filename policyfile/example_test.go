package policyfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/paigasus/helikon/policyfile"
)

// ExampleLoad reads a project's Claude Code settings and shows the helikon
// rules they map to, and where each is written.
func ExampleLoad() {
	root, _ := os.MkdirTemp("", "policyfile-example-")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(`{
  "permissions": {
    "allow": ["Bash(npm run test:*)", "WebFetch(domain:docs.rs)"],
    "deny": ["Read(./.env)"]
  }
}`), 0o644)

	pol, err := policyfile.Load(&policyfile.Options{Root: root, NoUserFile: true, Claude: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range append(pol.Deny, pol.Allow...) {
		o := pol.Origins[r]
		fmt.Printf("%-5s %-22s written %s\n", o.List, r, o.Text)
	}
	// Output:
	// deny  Read(/**/.env)         written Read(./.env)
	// allow Bash(npm run test)     written Bash(npm run test:*)
	// allow WebFetch(=docs.rs)     written WebFetch(domain:docs.rs)
}
