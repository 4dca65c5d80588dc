package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/paigasus/helikon"
)

// AddAllowRules adds rules to the allow list of the project policy file
// ([ProjectFile]) in root, creating the file and its directory if need be,
// and returns the file's path. Rules already listed are not repeated; the
// file's other keys are kept, but the file is rewritten whole (keys
// sorted, two-space indented, comments and key order lost) through a
// temporary file renamed over it, so that a reader never sees half of it.
//
// It is meant for a person's answer (the "save" of an approval), not for a
// tool call: the pipeline's policy-file guard stops tools from writing the
// file, not this. The rules apply only to loads that trust the project
// ([Options].TrustProject, or trustedProjects in the user's file): an
// untrusted project file may only tighten.
func AddAllowRules(root string, rules []helikon.Rule) (string, error) {
	path := filepath.Join(root, filepath.FromSlash(ProjectFile))
	top := map[string]json.RawMessage{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &top); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := top["permissions"]; ok {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return "", fmt.Errorf("%s: permissions: %w", path, err)
		}
	}
	var allow []string
	if raw, ok := perms["allow"]; ok {
		if err := json.Unmarshal(raw, &allow); err != nil {
			return "", fmt.Errorf("%s: permissions.allow: %w", path, err)
		}
	}
	for _, r := range rules {
		if !slices.Contains(allow, r.String()) {
			allow = append(allow, r.String())
		}
	}
	perms["allow"], _ = json.Marshal(allow)
	top["permissions"], _ = json.Marshal(perms)
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// Dirs are the directories of the policy files that a backend with a
// kernel boundary should keep read-only for commands (the ReadOnlyPaths of
// the OS sandbox and of Docker workspaces): .helikon and .claude, relative
// to the root, and the directory of the user's file ([UserFile]), absolute
// (the backends drop it where the root does not contain it, since commands
// cannot write outside the root anyway). The pipeline's policy-file guard
// stays the first line, on what a command line names; these read-only
// mounts hold whatever program a command runs.
func Dirs() []string {
	dirs := []string{path.Dir(ProjectFile)}
	for _, f := range ClaudeFiles {
		if d := path.Dir(f); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	if u, err := UserFile(); err == nil {
		dirs = append(dirs, filepath.Dir(u))
	}
	return dirs
}
