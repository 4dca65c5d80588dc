package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/paigasus/helikon"
)

// CommonFlags are the flags shared by every command that runs tools: the
// sandbox root and the permission pipeline.
type CommonFlags struct {
	Root     string    // --root, the sandbox root as given (default ".")
	Mode     string    // --mode, a permission mode name, parsed later
	Deny     *[]string // --deny rules, unparsed, filled when the flags are parsed
	Allow    *[]string // --allow rules, unparsed, filled when the flags are parsed
	NoGuards bool      // --no-guards
}

// AddCommonFlags defines the shared flags on fs.
func AddCommonFlags(fs *flag.FlagSet) *CommonFlags {
	c := &CommonFlags{}
	fs.StringVar(&c.Root, "root", ".", "the sandbox root `DIR`: tools and commands are confined to it")
	fs.StringVar(&c.Mode, "mode", "default", "permission `MODE`: default, accept-edits, plan, dont-ask or bypass")
	c.Deny = Multi(fs, "deny", "deny `RULE` such as Bash(rm), Read(.env), Edit(src/**), WebFetch(example.com) (repeatable)")
	c.Allow = Multi(fs, "allow", "allow `RULE`, in the same form as --deny (repeatable)")
	fs.BoolVar(&c.NoGuards, "no-guards", false, "switch off the built-in guards (rm -rf /, writes to system paths, .git, .ssh, .env)")
	return c
}

// RootDir returns the absolute sandbox root, checking that it is a directory.
func (c *CommonFlags) RootDir() (string, error) {
	abs, err := filepath.Abs(c.Root)
	if err != nil {
		return "", fmt.Errorf("--root %s: %w", c.Root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("--root %s: %w", c.Root, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("--root %s is not a directory", c.Root)
	}
	return abs, nil
}

// Permissions builds the permission pipeline and mode from the flags.
func (c *CommonFlags) Permissions() (*helikon.Permissions, helikon.PermissionMode, error) {
	mode, err := helikon.ParseMode(c.Mode)
	if err != nil {
		return nil, 0, fmt.Errorf("--mode: %w", err)
	}
	deny, err := helikon.ParseRules(*c.Deny...)
	if err != nil {
		return nil, 0, fmt.Errorf("--deny: %w", err)
	}
	allow, err := helikon.ParseRules(*c.Allow...)
	if err != nil {
		return nil, 0, fmt.Errorf("--allow: %w", err)
	}
	return &helikon.Permissions{Deny: deny, Allow: allow, NoGuards: c.NoGuards}, mode, nil
}
