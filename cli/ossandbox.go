package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/policyfile"
)

func init() {
	RegisterBackend("os", osBackend)
	Register(&Command{Name: "guarantees", Summary: "print what a backend enforces on this machine, as JSON", Run: runGuarantees})
	Register(&Command{Name: "doctor", Summary: "report what this machine supports (Landlock, seccomp, namespaces) and what each backend guarantees here", Run: runDoctor})
}

// osBackend builds the OS-sandbox backend: Landlock and seccomp on Linux,
// Seatbelt on macOS; it fails (exit 125) where they are unavailable.
func osBackend(_ context.Context, _ *Env, root string, f *BackendFlags) (backend.Backend, error) {
	if f.Loopback && f.AllowNetwork {
		return nil, fmt.Errorf("%w: --loopback and --allow-network exclude each other: --allow-network gives the host's network, --loopback one of the session's own", backend.ErrUnavailable)
	}
	var eg *ossandbox.Egress
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		if f.AllowNetwork {
			return nil, fmt.Errorf("%w: --egress-allow and --allow-network exclude each other: --egress-allow already gives network access, only through the egress proxy", backend.ErrUnavailable)
		}
		// The session's commands share a network namespace whose only way
		// out is a proxy enforcing this filter (root and unprivileged
		// callers; where no namespace can be made, the command is refused
		// and the exit status is 125).
		eg = &ossandbox.Egress{Filter: egress.DenyAll().AllowDomains(*f.EgressAllow...)}
	}
	allow := slices.Clone(backend.DefaultEnvAllowlist)
	if f.Env != nil {
		allow = append(allow, *f.Env...)
	}
	opts := &ossandbox.Options{
		AllowNetwork:  f.AllowNetwork,
		Loopback:      f.Loopback,
		Egress:        eg,
		Timeout:       f.Timeout,
		EnvAllowlist:  allow,
		Limits:        f.Limits(),
		ReadOnlyPaths: policyfile.Dirs(),
		MapRootUser:   f.MapRootUser,
		HomeSize:      f.HomeSize,
		CacheSize:     f.CacheSize,

		UserCachesBeneath: f.UserCaches,
	}
	switch f.Caches {
	case "", "session":
	case "project", "user":
		opts.Caches = ossandbox.CacheScope(f.Caches)
	default:
		return nil, fmt.Errorf("--caches %q: want session, project or user", f.Caches)
	}
	if f.ReadPaths != nil {
		opts.ReadPaths = *f.ReadPaths
	}
	opts.NoPath, opts.ReadCaches = f.NoPath, f.ReadCaches
	if f.HidePaths != nil {
		opts.HidePaths = *f.HidePaths
	}
	if f.oneCommand && !f.MapRootUser && os.Geteuid() != 0 {
		// The launcher's start (a second Go runtime, in new namespaces)
		// overlaps New; the command takes it (about 0.5 ms less). It maps
		// the caller to its own ids: one mapped to root would not be
		// taken.
		f.launcher = ossandbox.StartLauncher(root)
		opts.Launcher = f.launcher
	}
	return ossandbox.New(root, opts)
}

func runGuarantees(ctx context.Context, env *Env, args []string) int {
	fs := NewFlagSet("guarantees", "guarantees [--backend B] [backend flags]\n\nBuilds the backend as exec would and prints its guarantees as JSON:\n{\"filesystem\", \"network\", \"syscalls\"} each none, os_kernel, virtualized or\nproxied, a label, and the mechanisms active on this machine. Exits 125 when\nthe backend cannot be built here.", env.Stderr)
	root := fs.String("root", ".", "the sandbox root `DIR` the backend would confine commands to")
	bflags := AddBackendFlags(fs)
	// The shared help offers docker, a session engine: guarantees builds
	// per-command backends only, so it offers those.
	fs.Lookup("backend").Usage = "execution `BACKEND`: " + strings.Join(BackendNames(), ", ") + " (local is os) (default: os where available)"
	pos, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return UsageFailf(env, fs, "guarantees: unexpected argument %q", pos[0])
	}
	dir, err := (&CommonFlags{Root: *root}).RootDir()
	if err != nil {
		return Failf(env, ExitUsage, "guarantees: %v", err)
	}
	b, err := BuildBackend(ctx, env, dir, bflags)
	if err != nil {
		if errors.Is(err, backend.ErrUnavailable) {
			return Failf(env, ExitUsage, "guarantees: %v", err)
		}
		return Failf(env, ExitOther, "guarantees: %v", err)
	}
	if c, ok := b.(io.Closer); ok {
		defer c.Close() // the OS sandbox's session home
	}
	out, _ := json.MarshalIndent(b.Guarantees(), "", "  ")
	fmt.Fprintln(env.Stdout, string(out))
	return ExitOK
}

func runDoctor(ctx context.Context, env *Env, args []string) int {
	fs := NewFlagSet("doctor", "doctor [--json] [--root DIR] [--claude-settings] [--user-settings FILE] [--mcp COMMAND]\n\nReports, in words, what this machine supports (Landlock ABI, seccomp, user\nand mount namespaces, pids cgroup) and what each backend would guarantee\nhere, and the policy files the commands in the root read: which, in what\norder, and where each setting and rule comes from, any rule that can\nnever match (it names no built-in tool), and the containment of each\nMCP server of the project's .mcp.json and of --mcp. Exits 0 whether or not the OS\nsandbox is available, 125 when a policy file is invalid or has such a rule.", env.Stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	root := fs.String("root", ".", "the sandbox root `DIR` to try the backends on, and whose policy files to report")
	common := &CommonFlags{fs: fs}
	common.PolicyFileFlags.add(fs)
	mcpServers := Multi(fs, "mcp", "report the containment of the MCP server `COMMAND` as helikon run --mcp would start it (repeatable)")
	mcpUnsandboxed := fs.Bool("mcp-unsandboxed", false, "as helikon run --mcp-unsandboxed")
	pos, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return UsageFailf(env, fs, "doctor: unexpected argument %q", pos[0])
	}
	common.Root = *root
	dir, err := (&CommonFlags{Root: *root}).RootDir()
	if err != nil {
		return Failf(env, ExitUsage, "doctor: %v", err)
	}
	sup := ossandbox.Probe()
	type backendReport struct {
		Name       string              `json:"name"`
		Guarantees *backend.Guarantees `json:"guarantees,omitempty"`
		Error      string              `json:"error,omitempty"`
	}
	var reports []backendReport
	for _, name := range BackendNames() {
		if name == "forkd" {
			// forkd needs a controller URL and credentials; building it
			// here would only report that they are missing.
			reports = append(reports, backendReport{Name: name, Error: "not probed: needs a forkd controller (see helikon forkd --help)"})
			continue
		}
		empty := []string{}
		f := &BackendFlags{Name: name, Env: &empty, ReadPaths: &empty, EgressAllow: &empty}
		b, err := BuildBackend(ctx, env, dir, f)
		if err != nil {
			reports = append(reports, backendReport{Name: name, Error: err.Error()})
			continue
		}
		g := b.Guarantees()
		if c, ok := b.(io.Closer); ok {
			c.Close() // the OS sandbox's session home
		}
		reports = append(reports, backendReport{Name: name, Guarantees: &g})
	}
	dockerReport := probeDocker(ctx, env)
	var hide []string // the policy files' hidden paths (sandbox.hidePaths)
	if pol, err := common.Settings(); err == nil && pol != nil {
		hide = pol.HidePaths
	}
	pathReport, pathErr := ossandbox.ExplainPath(&ossandbox.Options{HidePaths: hide})
	if pathErr != nil {
		pathReport = &ossandbox.PathReport{Error: pathErr.Error()}
	}
	policy := reportPolicy(common)
	servers, serversErr := reportMCPServers(dir, *mcpServers, *mcpUnsandboxed, sup)
	policyStatus := ExitOK
	if policy.Error != "" || policy.unmatchable() {
		policyStatus = ExitUsage // a policy file that stops every command
	}
	if *asJSON {
		out, _ := json.MarshalIndent(map[string]any{"machine": sup, "path": pathReport, "backends": reports, "workspaces": map[string]string{"docker": dockerReport}, "policy": policy, "mcp_servers": servers}, "", "  ")
		fmt.Fprintln(env.Stdout, string(out))
		return policyStatus
	}
	w := env.Stdout
	fmt.Fprintf(w, "This machine (%s, running as %s):\n", sup.OS, map[bool]string{true: "root", false: "an unprivileged user"}[sup.Root])
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-17s %s\n", k+":", v)
		}
	}
	line("Landlock", sup.Landlock)
	line("seccomp", sup.Seccomp)
	line("user namespaces", sup.UserNamespaces)
	line("mount namespaces", sup.MountNamespaces)
	line("pids cgroup", sup.PidsCgroup)
	line("Seatbelt", sup.Seatbelt)
	switch {
	case sup.OS == "linux" && sup.Available && (sup.Root || strings.HasPrefix(sup.UserNamespaces, "available")):
		line("network", "--loopback gives a session's commands a network namespace with loopback only; --egress-allow makes the egress proxy its only way out")
	case sup.OS == "linux" && sup.Available:
		line("network", "--loopback and --egress-allow need a network namespace, which needs user namespaces for this user: refused here")
	}
	if sup.Available {
		fmt.Fprintln(w, "  OS sandbox:       available (the default backend for exec, tool Bash and mcp)")
	} else {
		fmt.Fprintf(w, "  OS sandbox:       UNAVAILABLE: %s\n", sup.Reason)
		fmt.Fprintln(w, "                    commands that run programs refuse to run unless you pass --backend host")
	}
	fmt.Fprintln(w, "\nBackends here:")
	for _, r := range reports {
		if r.Guarantees == nil {
			fmt.Fprintf(w, "  %-6s %s\n", r.Name, r.Error)
			continue
		}
		g := r.Guarantees
		fmt.Fprintf(w, "  %-6s %s: filesystem %s, network %s, syscalls %s\n", r.Name, g.Label, g.Filesystem, g.Network, g.Syscalls)
		for _, f := range g.Features {
			fmt.Fprintf(w, "         - %s\n", f)
		}
	}
	printPathReport(w, sup, pathReport)
	fmt.Fprintln(w, "\nWorkspace engines here (a container or microVM per session, for run, mcp and tool):")
	fmt.Fprintf(w, "  docker %s\n", dockerReport)
	fmt.Fprintln(w, "  forkd  with FORKD_URL, FORKD_TOKEN and FORKD_SNAPSHOT set: one microVM per session (not probed)")
	if !sup.Available {
		fmt.Fprintln(w, "\nTo fix: "+doctorHint(sup))
	}
	printMCPServers(w, servers, serversErr)
	policy.print(w)
	return policyStatus
}

// doctorHint says what would make the OS sandbox available.
func doctorHint(s ossandbox.Support) string {
	switch {
	case s.OS != "linux" && s.OS != "darwin":
		return "the OS sandbox needs Linux (Landlock, seccomp) or macOS (Seatbelt)."
	case s.OS == "linux" && s.LandlockABI == 0:
		return "boot a kernel with Landlock enabled (Linux 6.2+, CONFIG_SECURITY_LANDLOCK=y, landlock in lsm=)."
	case s.OS == "linux" && strings.Contains(s.Landlock, "below"):
		return "upgrade to Linux 6.2 or later (Landlock ABI 3)."
	}
	return s.Reason
}

// printPathReport prints what the OS sandbox makes of the caller's PATH and
// which credential locations it hides.
func printPathReport(w io.Writer, sup ossandbox.Support, r *ossandbox.PathReport) {
	if sup.OS != "linux" {
		return // Seatbelt lets commands read everywhere; the report is Landlock's
	}
	fmt.Fprintln(w, "\nYour PATH in the OS sandbox (--no-path grants none of it, --read-path adds, --hide-path hides):")
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
		return
	}
	for _, e := range r.Entries {
		state := "usable"
		if !e.Usable {
			state = "NOT usable"
		}
		fmt.Fprintf(w, "  %-10s %s: %s\n", state, e.Dir, e.Why)
		for _, g := range e.Grants {
			fmt.Fprintf(w, "             grants %s\n", g)
		}
	}
	fmt.Fprintln(w, "Credential locations commands never read (those present here):")
	for _, h := range r.Hidden {
		if _, err := os.Lstat(h); err == nil {
			fmt.Fprintf(w, "  %s\n", h)
		}
	}
	for _, l := range r.Linked {
		fmt.Fprintf(w, "  WARNING: %s has another name (a hard link); under a granted directory that name is readable\n", l)
	}
	for _, e := range r.Exposed {
		fmt.Fprintf(w, "  EXPOSED: %s is readable by commands as %s, a hard link in a granted tree: remove the link, or --hide-path it\n", e.Hidden, e.Name)
	}
}
