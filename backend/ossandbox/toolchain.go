package ossandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HiddenPaths are the credential locations, relative to the caller's home
// directory, that no command may read, even where a granted tree (a PATH
// directory's installation tree, [Options].ReadPaths) contains them:
// SSH and GPG keys, cloud command-line tools' credentials, git
// credentials, .netrc, registry authentication files (npm, pip, Docker,
// Cargo, Gradle, Maven), Kubernetes configuration, keyrings, password
// stores and browser profiles. The list is fixed;
// [Options].HidePaths adds to it and nothing removes from it. Each is
// hidden under its own name and, where it is a symbolic link, under the
// path it resolves to.
var HiddenPaths = []string{
	".ssh",
	".gnupg",
	".aws",
	".azure",
	".config/gcloud",
	".oci",
	".config/doctl",
	".config/hcloud",
	".config/gh",
	".config/hub",
	".config/glab-cli",
	".git-credentials",
	".config/git/credentials",
	".netrc",
	".npmrc",
	".yarnrc.yml",
	".pypirc",
	".config/pip/pip.conf",
	".pip/pip.conf",
	".docker/config.json",
	".config/containers/auth.json",
	".kube",
	".cargo/credentials",
	".cargo/credentials.toml",
	".gradle/gradle.properties",
	".m2/settings.xml",
	".m2/settings-security.xml",
	".gem/credentials",
	".terraform.d/credentials.tfrc.json",
	".vault-token",
	".password-store",
	".local/share/keyrings",
	".local/share/kwalletd",
	".config/op",
	".config/Bitwarden CLI",
	".mozilla",
	".config/google-chrome",
	".config/chromium",
	".config/BraveSoftware",
	".config/microsoft-edge",
	".snap/firefox",
	".config/helikon/credentials",
}

// ErrHidden is wrapped by [New] when a read path is one of the hidden
// credential locations ([HiddenPaths], [Options].HidePaths) or lies beneath
// one: it is never readable in the sandbox.
var ErrHidden = errors.New("ossandbox: hidden credential location")

// ErrNotReadable is wrapped by [Backend.Run] when a command's program could
// not be started because commands cannot read the directory it is in; the
// message names the directory and how to grant it.
var ErrNotReadable = errors.New("ossandbox: program in a directory commands cannot read")

// toolManagers are the roots, relative to the home directory, of the tool
// managers whose shims or binaries a PATH directory leads to: a PATH
// directory (or a binary it links to) beneath one grants the whole root,
// where the manager keeps the versions, the libraries and the standard
// library the shims run. env, when set, names the variable the manager
// reads its root from; it defaults to a path in HOME, which in the sandbox
// is the command's temporary directory, so it is set to the root.
var toolManagers = []struct {
	root, env string
	also      []string // roots the manager's binaries need too
}{
	{root: ".pyenv", env: "PYENV_ROOT"},
	{root: ".rbenv", env: "RBENV_ROOT"},
	{root: ".goenv", env: "GOENV_ROOT"},
	{root: ".nodenv", env: "NODENV_ROOT"},
	{root: ".nvm"},
	{root: ".fnm"},
	{root: ".local/share/fnm"},
	{root: ".volta", env: "VOLTA_HOME"},
	{root: ".cargo", also: []string{".rustup"}},
	{root: ".rustup", env: "RUSTUP_HOME"},
	{root: ".asdf", env: "ASDF_DATA_DIR"},
	{root: ".local/share/mise", env: "MISE_DATA_DIR"},
	{root: ".bun"},
	{root: ".deno"},
	{root: ".sdkman"},
	{root: ".juliaup"},
	{root: ".ghcup"},
	{root: ".elan"},
	{root: ".pixi"},
	{root: ".local/share/pnpm"},
	{root: "miniconda3"},
	{root: "anaconda3"},
	{root: "miniforge3"},
	{root: "mambaforge"},
	{root: ".conda"},
}

// CacheDirs are the caches, relative to the home directory, that
// [Options].ReadCaches makes readable (never writable): Go's module cache,
// pip's, uv's and Poetry's caches, npm's and Yarn's, Cargo's registry and
// git checkouts, Maven's repository and Gradle's caches. GOMODCACHE is set
// to the Go module cache when it exists.
var CacheDirs = []string{
	"go/pkg/mod",
	".cache/pip",
	".cache/uv",
	".cache/pypoetry",
	".npm/_cacache",
	".cache/yarn",
	".cargo/registry",
	".cargo/git",
	".m2/repository",
	".gradle/caches",
}

// PathEntry says whether the programs of one PATH directory can run in
// the sandbox ([ExplainPath]).
type PathEntry struct {
	// Dir is the directory as PATH names it.
	Dir string `json:"dir"`
	// Usable is whether commands can read and execute its programs.
	Usable bool `json:"usable"`
	// Why says why, in words.
	Why string `json:"why"`
	// Grants are the trees this entry makes readable and executable
	// (resolved, hidden locations cut out), beyond the system paths.
	Grants []string `json:"grants,omitempty"`
}

// toolchain is what the caller's PATH, home and options grant.
type toolchain struct {
	entries []PathEntry
	grants  []string // read+execute, hidden locations cut out
	env     []string // KEY=VALUE for the tool managers granted
	hidden  []string // absolute, as listed and resolved
}

// hiddenFor returns the absolute hidden locations under home plus extra
// (absolute, or relative to home), each also as it resolves.
func hiddenFor(home string, extra []string) []string {
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
		// A location that does not exist resolves to nothing: one lstat
		// says so, where resolving it costs one per element (New does
		// this for every hidden location, BenchmarkExplainToolchain).
		if _, err := os.Lstat(p); err != nil {
			return
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	for _, h := range HiddenPaths {
		if home != "" {
			add(filepath.Join(home, h))
		}
	}
	for _, h := range extra {
		switch {
		case filepath.IsAbs(h):
			add(h)
		case home != "":
			add(filepath.Join(home, strings.TrimPrefix(h, "~/")))
		}
	}
	return out
}

// beneath reports whether p is dir or lies beneath it (both clean and
// absolute).
func beneath(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// hiddenAt returns the hidden location p is or lies beneath, or "".
func hiddenAt(p string, hidden []string) string {
	for _, h := range hidden {
		if beneath(p, h) {
			return h
		}
	}
	return ""
}

// cutHidden returns the paths to grant so that everything beneath grant
// is covered except the hidden locations. Landlock cannot deny beneath a
// granted directory, so a grant whose tree contains a hidden location is
// replaced by grants of its entries, recursively, leaving the hidden one
// out. list returns a directory's entries; symbolic links among them are
// not granted (Landlock checks what a link resolves to against the rules,
// so a link is usable exactly when its target is granted on its own); a
// directory that cannot be listed is not granted (fail closed). A grant
// that is, or lies beneath, a hidden location is dropped. Paths are clean
// and absolute. Hand-written: no library splits a tree around exceptions.
func cutHidden(grant string, hidden []string, list func(string) ([]fs.DirEntry, error)) []string {
	if hiddenAt(grant, hidden) != "" {
		return nil
	}
	inside := false
	for _, h := range hidden {
		if h != grant && beneath(h, grant) {
			inside = true
			break
		}
	}
	if !inside {
		return []string{grant}
	}
	entries, err := list(grant)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 || e.Name() == "" || strings.Contains(e.Name(), "/") || e.Name() == "." || e.Name() == ".." {
			continue
		}
		child := filepath.Join(grant, e.Name())
		if !e.IsDir() {
			if hiddenAt(child, hidden) == "" {
				out = append(out, child)
			}
			continue
		}
		out = append(out, cutHidden(child, hidden, list)...)
	}
	return out
}

// listDir is cutHidden's list on the real filesystem.
func listDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }

// systemPath reports whether p lies beneath one of SystemReadPaths, which
// every command can read anyway.
func systemPath(p string) bool {
	for _, s := range SystemReadPaths {
		if beneath(p, s) {
			return true
		}
	}
	return false
}

// installRoot returns the tree behind a directory of programs (resolved),
// how far a PATH directory's grant reaches: the tool manager's root when
// it lies beneath one in the home directory (with the roots it needs too,
// and the variable naming the root); otherwise, for a directory named bin,
// its parent, the installation prefix whose lib and share the programs
// read (~/.local/bin reaches ~/.local/lib, Python's user site, not the
// rest of ~/.local, which holds application data); otherwise the
// directory alone. It never reaches the home directory itself or above.
func installRoot(dir, home string) (roots, env []string) {
	if home != "" {
		for _, m := range toolManagers {
			r := filepath.Join(home, m.root)
			if !beneath(dir, r) {
				continue
			}
			roots = append(roots, r)
			for _, a := range m.also {
				roots = append(roots, filepath.Join(home, a))
			}
			for _, mm := range toolManagers {
				if mm.env != "" && slices.Contains(roots, filepath.Join(home, mm.root)) {
					env = append(env, mm.env+"="+filepath.Join(home, mm.root))
				}
			}
			return roots, env
		}
		if dir == filepath.Join(home, ".local", "bin") {
			return []string{dir, filepath.Join(home, ".local", "lib")}, nil
		}
	}
	if filepath.Base(dir) == "bin" {
		parent := filepath.Dir(dir)
		if parent != "/" && (home == "" || !beneath(home, parent)) {
			return []string{parent}, nil
		}
	}
	return []string{dir}, nil
}

// explainToolchain works out what the caller's PATH grants (unless noPath),
// what the read paths and, with readCaches, the caches grant, all with
// the hidden locations cut out.
func explainToolchain(path, home string, o *Options) (*toolchain, error) {
	tc := &toolchain{hidden: hiddenFor(home, o.HidePaths)}
	var roots []string
	addRoot := func(r string) {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		} else {
			return // a root that does not exist grants nothing
		}
		if !systemPath(r) && !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	addEnv := func(kv []string) {
		for _, e := range kv {
			if !slices.Contains(tc.env, e) {
				tc.env = append(tc.env, e)
			}
		}
	}
	if !o.NoPath {
		for _, d := range filepath.SplitList(path) {
			e := PathEntry{Dir: d}
			tc.entries = append(tc.entries, e)
			ep := &tc.entries[len(tc.entries)-1]
			if d == "" || !filepath.IsAbs(d) {
				ep.Why = "not granted: a relative PATH entry names a directory of the command's, not this one"
				continue
			}
			real, err := filepath.EvalSymlinks(d)
			if err != nil {
				ep.Why = fmt.Sprintf("not granted: %v", err)
				continue
			}
			if h := hiddenAt(real, tc.hidden); h != "" {
				ep.Why = fmt.Sprintf("not granted: %s is a hidden credential location", h)
				continue
			}
			if systemPath(real) {
				ep.Usable, ep.Why = true, "a system directory, readable by every command"
				continue
			}
			before := len(roots)
			rs, env := installRoot(real, home)
			for _, r := range rs {
				addRoot(r)
			}
			addEnv(env)
			// Programs linked from here into another tree (pipx's
			// venvs, a tool installed elsewhere) need that tree.
			if ents, err := os.ReadDir(real); err == nil {
				for _, en := range ents {
					if en.Type()&fs.ModeSymlink == 0 {
						continue
					}
					if t, err := os.Readlink(filepath.Join(real, en.Name())); err == nil && t != "." && t != ".." && !strings.Contains(t, "/") {
						continue // a link within the directory (cargo's to rustup): granted with it, no resolving needed
					}
					t, err := filepath.EvalSymlinks(filepath.Join(real, en.Name()))
					if err != nil || systemPath(t) || covered(t, roots) || hiddenAt(t, tc.hidden) != "" {
						continue
					}
					rs, env := installRoot(filepath.Dir(t), home)
					for _, r := range rs {
						addRoot(r)
					}
					addEnv(env)
				}
			}
			ep.Usable = true
			ep.Why = "readable and executable, never writable"
			for _, r := range roots[before:] {
				ep.Grants = append(ep.Grants, cutHidden(r, tc.hidden, listDir)...)
			}
			if len(ep.Grants) == 0 && !covered(real, roots) {
				ep.Usable, ep.Why = false, "not granted: its tree could not be read"
			} else if len(ep.Grants) == 0 {
				ep.Why = "readable and executable, never writable (granted by an entry before it)"
			}
		}
	}
	if o.ReadCaches && home != "" {
		for _, c := range CacheDirs {
			addRoot(filepath.Join(home, c))
		}
		if _, err := os.Stat(filepath.Join(home, "go", "pkg", "mod")); err == nil {
			addEnv([]string{"GOMODCACHE=" + filepath.Join(home, "go", "pkg", "mod")})
		}
	}
	for _, p := range o.ReadPaths {
		a, err := filepath.Abs(p)
		if err == nil {
			a, err = filepath.EvalSymlinks(a)
		}
		if err != nil {
			return nil, fmt.Errorf("ossandbox: read path: %w", err)
		}
		if h := hiddenAt(a, tc.hidden); h != "" {
			return nil, fmt.Errorf("%w: read path %s is or lies beneath %s, which commands never read; remove it from the read paths", ErrHidden, p, h)
		}
		if !slices.Contains(roots, a) {
			roots = append(roots, a)
		}
	}
	for _, r := range roots {
		for _, g := range cutHidden(r, tc.hidden, listDir) {
			if !slices.Contains(tc.grants, g) {
				tc.grants = append(tc.grants, g)
			}
		}
	}
	return tc, nil
}

// covered reports whether p lies beneath one of roots.
func covered(p string, roots []string) bool {
	for _, r := range roots {
		if beneath(p, r) {
			return true
		}
	}
	return false
}

// PathReport is what [ExplainPath] finds.
type PathReport struct {
	// Entries are the caller's PATH directories, in order.
	Entries []PathEntry `json:"entries"`
	// Hidden are the credential locations no command reads: absolute,
	// as listed and as resolved, whether or not they exist.
	Hidden []string `json:"hidden"`
	// Linked are the hidden files that have another name (a hard link),
	// which stays readable if it lies in a granted tree.
	Linked []string `json:"linked,omitempty"`
	// Exposed are the other names of Linked files found in the trees
	// commands may read (PATH trees, caches, read paths): commands read
	// the hidden file by them. Landlock checks the path a file is opened
	// by, and a hard link is another path to the same file, so hiding one
	// name does not hide the others; remove the link, or hide its name
	// too ([Options].HidePaths).
	Exposed []HardLink `json:"exposed,omitempty"`
	// Error is set by callers that could not build the report.
	Error string `json:"error,omitempty"`
}

// ExplainPath reports, for each directory of the caller's PATH, whether
// commands of a backend built with opts can run its programs and what it
// grants, and the credential locations hidden from them. It is what
// helikon doctor prints. It fails as [New] would on a read path that is
// hidden ([ErrHidden]).
func ExplainPath(opts *Options) (*PathReport, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	home, _ := os.UserHomeDir()
	tc, err := explainToolchain(os.Getenv("PATH"), home, &o)
	if err != nil {
		return nil, err
	}
	r := &PathReport{Entries: tc.entries, Hidden: tc.hidden}
	for _, h := range tc.hidden {
		_ = filepath.WalkDir(h, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && linkCount(p) > 1 {
				r.Linked = append(r.Linked, p)
			}
			return nil
		})
	}
	r.Exposed = exposedLinks(r.Linked, tc.grants)
	return r, nil
}

// HardLink is a hidden file's other name in a granted tree ([PathReport]).
type HardLink struct {
	// Hidden is the file as hidden.
	Hidden string `json:"hidden"`
	// Name is its other name, which commands can read it by.
	Name string `json:"name"`
}

// exposedLinks returns the names, in the granted trees, of the linked
// hidden files: a walk of every granted tree, only done when a hidden file
// has another name (rare), so only by ExplainPath (helikon doctor), not by
// New, which would walk the trees for every backend.
func exposedLinks(linked, grants []string) []HardLink {
	type file struct {
		path string
		fi   fs.FileInfo
	}
	var files []file
	for _, l := range linked {
		if fi, err := os.Stat(l); err == nil {
			files = append(files, file{l, fi})
		}
	}
	if len(files) == 0 {
		return nil
	}
	var out []HardLink
	for _, g := range grants {
		_ = filepath.WalkDir(g, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			for _, f := range files {
				if p != f.path && os.SameFile(fi, f.fi) {
					out = append(out, HardLink{Hidden: f.path, Name: p})
				}
			}
			return nil
		})
	}
	return out
}
