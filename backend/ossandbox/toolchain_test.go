package ossandbox

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// fakeHome is a home directory as developers have it: a pyenv-like shim
// tree, an nvm-like node tree, a cargo bin directory whose programs link
// to rustup, a pipx-like ~/.local/bin, and credential files, some of them
// inside the tool trees. Files ending in .sh are executable scripts.
var fakeHome = map[string]string{
	".pyenv/shims/python3":                         "#!/bin/sh\nexec \"$PYENV_ROOT/versions/3.0/bin/python3\" \"$@\"\n",
	".pyenv/versions/3.0/bin/python3":              "#!/bin/sh\ncat \"${0%/bin/*}/lib/stdlib.txt\"\n",
	".pyenv/versions/3.0/lib/stdlib.txt":           "python-stdlib\n",
	".nvm/versions/node/v1/bin/node":               "#!/bin/sh\ncat \"${0%/bin/*}/lib/node_modules/npm/x\"\n",
	".nvm/versions/node/v1/lib/node_modules/npm/x": "node-lib\n",
	".cargo/bin/rustup":                            "#!/bin/sh\ncat \"$RUSTUP_HOME/toolchains/stable/lib/rustlib.txt\"\n",
	".rustup/toolchains/stable/lib/rustlib.txt":    "rust-lib\n",
	".local/share/pipx/venvs/tool/bin/tool":        "#!/bin/sh\nd=$(readlink -f \"$0\")\ncat \"${d%/bin/*}/lib/site.txt\"\n",
	".local/share/pipx/venvs/tool/lib/site.txt":    "pipx-lib\n",
	".bashrc": "not a secret\n",
}

// fakeCredentials are the credential files of the fake home, each with the
// entry of HiddenPaths that hides it.
var fakeCredentials = []struct{ file, rule string }{
	{".ssh/id_ed25519", ".ssh"},
	{".gnupg/private-keys-v1.d/k.key", ".gnupg"},
	{".aws/credentials", ".aws"},
	{".config/gcloud/credentials.db", ".config/gcloud"},
	{".azure/msal_token_cache.json", ".azure"},
	{".config/gh/hosts.yml", ".config/gh"},
	{".git-credentials", ".git-credentials"},
	{".netrc", ".netrc"},
	{".npmrc", ".npmrc"},
	{".pypirc", ".pypirc"},
	{".docker/config.json", ".docker/config.json"},
	{".kube/config", ".kube"},
	{".local/share/keyrings/login.keyring", ".local/share/keyrings"},
	{".mozilla/firefox/p/cookies.sqlite", ".mozilla"},
	{".cargo/credentials.toml", ".cargo/credentials.toml"},
}

// makeFakeHome writes fakeHome and fakeCredentials under dir/home and
// returns the home and the PATH a developer there has.
func makeFakeHome(t testing.TB, dir string) (home, path string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	write := func(rel, content string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for rel, c := range fakeHome {
		write(rel, c)
	}
	for _, c := range fakeCredentials {
		write(c.file, "SECRET "+c.file+"\n")
	}
	for _, l := range []struct{ link, target string }{
		{".cargo/bin/cargo", "rustup"},
		{".local/bin/tool", filepath.Join(home, ".local/share/pipx/venvs/tool/bin/tool")},
		{".local/bin/leak", filepath.Join(home, ".ssh/id_ed25519")},
	} {
		if err := os.MkdirAll(filepath.Join(home, filepath.Dir(l.link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, filepath.Join(home, l.link)); err != nil {
			t.Fatal(err)
		}
	}
	path = strings.Join([]string{
		filepath.Join(home, ".pyenv/shims"),
		filepath.Join(home, ".nvm/versions/node/v1/bin"),
		filepath.Join(home, ".cargo/bin"),
		filepath.Join(home, ".local/bin"),
		"/usr/bin", "/bin",
	}, ":")
	return home, path
}

func TestCutHidden(t *testing.T) {
	tree := fstest.MapFS{
		"h/.ssh/id":                 {},
		"h/.cargo/bin/cargo":        {},
		"h/.cargo/credentials.toml": {},
		"h/.cargo/registry/x":       {},
		"h/.config/gh/hosts.yml":    {},
		"h/.config/fish/config":     {},
		"h/.bashrc":                 {},
		"h/link":                    {Mode: fs.ModeSymlink},
	}
	list := func(dir string) ([]fs.DirEntry, error) {
		if dir == "/" {
			return fs.ReadDir(tree, ".")
		}
		return fs.ReadDir(tree, strings.TrimPrefix(dir, "/"))
	}
	hidden := []string{"/h/.ssh", "/h/.cargo/credentials.toml", "/h/.config/gh"}
	for _, tc := range []struct {
		grant string
		want  []string
	}{
		{"/h/.cargo/bin", []string{"/h/.cargo/bin"}},
		{"/h/.cargo", []string{"/h/.cargo/bin", "/h/.cargo/registry"}},
		{"/h", []string{"/h/.bashrc", "/h/.cargo/bin", "/h/.cargo/registry", "/h/.config/fish"}},
		{"/h/.ssh", nil},
		{"/h/.ssh/id", nil},
		{"/", []string{"/h/.bashrc", "/h/.cargo/bin", "/h/.cargo/registry", "/h/.config/fish"}},
	} {
		got := cutHidden(tc.grant, hidden, list)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("cutHidden(%s) = %q, want %q", tc.grant, got, tc.want)
		}
	}
	// A directory that cannot be listed is not granted.
	if got := cutHidden("/h", hidden, func(string) ([]fs.DirEntry, error) { return nil, fs.ErrPermission }); got != nil {
		t.Errorf("unlistable: %q, want nothing", got)
	}
}

// FuzzCutHidden checks cutHidden on trees and hidden sets built from the
// input: no grant reaches a hidden location, and every file of the tree
// outside the hidden locations (and not a symbolic link) is covered.
func FuzzCutHidden(f *testing.F) {
	f.Add("a/b/c\na/d\ne", "a/b", "")
	f.Add("x/.ssh/k\nx/bin/t\nx/y/z/w", "x/.ssh\nx/y/z", "x")
	f.Add("a", "a", "")
	f.Fuzz(func(t *testing.T, files, hide, grant string) {
		tree := fstest.MapFS{}
		for _, p := range strings.Split(files, "\n") {
			p = path.Clean(strings.Trim(p, "/"))
			if !fs.ValidPath(p) || p == "." || len(tree) > 64 {
				continue
			}
			tree[p] = &fstest.MapFile{}
		}
		var hidden []string
		for _, h := range strings.Split(hide, "\n") {
			h = path.Clean(strings.Trim(h, "/"))
			if fs.ValidPath(h) && h != "." {
				hidden = append(hidden, "/"+h)
			}
		}
		g := "/" + path.Clean(strings.Trim(grant, "/"))
		if g == "/." {
			g = "/"
		}
		list := func(dir string) ([]fs.DirEntry, error) {
			d := strings.TrimPrefix(dir, "/")
			if d == "" {
				d = "."
			}
			return fs.ReadDir(tree, d)
		}
		got := cutHidden(g, hidden, list)
		for _, p := range got {
			if !beneath(p, g) {
				t.Fatalf("grant %s of %s is outside it", p, g)
			}
			for _, h := range hidden {
				if beneath(p, h) || beneath(h, p) {
					t.Fatalf("grant %s reaches hidden %s (hidden %q, grant %s)", p, h, hidden, g)
				}
			}
		}
		for p := range tree {
			abs := "/" + p
			if !beneath(abs, g) || hiddenAt(abs, hidden) != "" {
				continue
			}
			if !covered(abs, got) {
				t.Fatalf("file %s beneath %s is not covered by %q (hidden %q)", abs, g, got, hidden)
			}
		}
	})
}

func TestExplainToolchainGrantsToolTrees(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	home, path := makeFakeHome(t, dir)
	tc, err := explainToolchain(path, home, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".pyenv", ".nvm", ".cargo/bin", ".rustup", ".local/bin", ".local/share/pipx/venvs/tool"} {
		if !covered(filepath.Join(home, want), tc.grants) {
			t.Errorf("%s is not granted: %q", want, tc.grants)
		}
	}
	for _, c := range fakeCredentials {
		if covered(filepath.Join(home, c.file), tc.grants) {
			t.Errorf("credential %s is granted: %q", c.file, tc.grants)
		}
	}
	for _, g := range tc.grants {
		if g == home || beneath(home, g) {
			t.Errorf("the home directory is granted: %s", g)
		}
	}
	if !slices.Contains(tc.env, "RUSTUP_HOME="+filepath.Join(home, ".rustup")) || !slices.Contains(tc.env, "PYENV_ROOT="+filepath.Join(home, ".pyenv")) {
		t.Errorf("tool manager variables: %q", tc.env)
	}
	for _, e := range tc.entries {
		if strings.HasPrefix(e.Dir, home) && !e.Usable {
			t.Errorf("PATH entry %s not usable: %s", e.Dir, e.Why)
		}
	}
	if tc, err = explainToolchain(path, home, &Options{NoPath: true}); err != nil || len(tc.grants) != 0 {
		t.Errorf("NoPath: grants %q, %v", tc.grants, err)
	}
}

func TestExplainToolchainRefusesHiddenReadPath(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := makeFakeHome(t, dir)
	for _, p := range []string{".ssh", ".ssh/id_ed25519", ".kube", ".config/gh"} {
		_, err := explainToolchain("", home, &Options{ReadPaths: []string{filepath.Join(home, p)}})
		if !errors.Is(err, ErrHidden) {
			t.Errorf("read path %s: %v, want ErrHidden", p, err)
		}
	}
	_, err := explainToolchain("", home, &Options{ReadPaths: []string{filepath.Join(home, ".bashrc")}, HidePaths: []string{".bashrc"}})
	if !errors.Is(err, ErrHidden) {
		t.Errorf("HidePaths: %v, want ErrHidden", err)
	}
}
