package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/paigasus/helikon"
)

// CommonFlags are the flags shared by every command that runs tools: the
// sandbox root and the permission pipeline, whose policy files (see
// settings.go) they are merged with.
type CommonFlags struct {
	Root     string    // --root, the sandbox root as given (default ".")
	Mode     string    // --mode, a permission mode name, parsed later; "" when not given
	Deny     *[]string // --deny rules, unparsed, filled when the flags are parsed
	Ask      *[]string // --ask rules, unparsed
	Allow    *[]string // --allow rules, unparsed, filled when the flags are parsed
	NoGuards bool      // --no-guards
	PolicyFileFlags

	fs *flag.FlagSet // to tell flags given from defaults
}

// AddCommonFlags defines the shared flags on fs.
func AddCommonFlags(fs *flag.FlagSet) *CommonFlags {
	c := &CommonFlags{fs: fs}
	fs.StringVar(&c.Root, "root", ".", "the sandbox root `DIR`: tools and commands are confined to it")
	fs.StringVar(&c.Mode, "mode", "", "permission `MODE`: default, accept-edits, plan, dont-ask or bypass (default: the policy files', else default)")
	c.Deny = Multi(fs, "deny", "deny `RULE` such as Bash(rm), Read(.env), Edit(src/**), WebFetch(example.com) (repeatable)")
	c.Ask = Multi(fs, "ask", "ask about calls matching `RULE` even where an allow rule or the mode would allow them (repeatable)")
	c.Allow = Multi(fs, "allow", "allow `RULE`, in the same form as --deny (repeatable)")
	fs.BoolVar(&c.NoGuards, "no-guards", false, "switch off the built-in guards (rm -rf /, writes to system paths, .git, .ssh, .env; never the policy-file guard)")
	c.PolicyFileFlags.add(fs)
	return c
}

// RootDir returns the absolute sandbox root with its symbolic links
// resolved, checking that it is a directory. Everything the CLI derives from
// the root (the policy files' paths, the trusted-project comparison, the
// guard's protected files, the tools' root) uses this one spelling, the one
// the sandbox opens: a root reached through a link (--root link, or a working
// directory entered through one) must not give a policy file a second name
// that the guard does not know.
func (c *CommonFlags) RootDir() (string, error) {
	abs, err := filepath.Abs(c.Root)
	if err != nil {
		return "", fmt.Errorf("--root %s: %w", c.Root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("--root %s: %w", c.Root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("--root %s: %w", c.Root, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("--root %s is not a directory", c.Root)
	}
	return real, nil
}

// Permissions builds the permission pipeline and mode from the policy files
// and the flags: the files' rules and the flags' all apply, the --mode flag
// overrides the files' mode.
func (c *CommonFlags) Permissions() (*helikon.Permissions, helikon.PermissionMode, error) {
	pol, err := c.Settings()
	if err != nil {
		return nil, 0, err
	}
	mode := pol.Mode.Value
	if c.Mode != "" {
		if mode, err = helikon.ParseMode(c.Mode); err != nil {
			return nil, 0, fmt.Errorf("--mode: %w", err)
		}
	}
	if mode == helikon.ModeBypass && pol.NoBypass != "" {
		return nil, 0, fmt.Errorf("bypass mode is disabled by disableBypassPermissionsMode at %s", pol.NoBypass)
	}
	var lists [3][]helikon.Rule
	for i, f := range []struct {
		name  string
		rules []string
	}{{"--deny", *c.Deny}, {"--ask", *c.Ask}, {"--allow", *c.Allow}} {
		rules, err := helikon.ParseRules(f.rules...)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.name, err)
		}
		lists[i] = append(append(lists[i], [][]helikon.Rule{pol.Deny, pol.Ask, pol.Allow}[i]...), rules...)
	}
	root, err := c.RootDir()
	if err != nil {
		return nil, 0, err
	}
	p := &helikon.Permissions{Deny: lists[0], Ask: lists[1], Allow: lists[2], NoGuards: c.NoGuards}
	for _, f := range pol.Protected {
		p.Protected = append(p.Protected, helikon.ProtectedFile{Path: f, Dir: root})
	}
	return p, mode, nil
}
