// Package toolbox assembles helikon's contained toolset, ready to use: the
// file tools Read, Write and Edit and the Bash tool on one workspace,
// WebFetch (and WebSearch, given a search service), and the permission
// pipeline every call goes through, as helikon run and helikon mcp
// assemble them.
//
//	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{Root: dir})
//	if err != nil { ... }             // no containment here: see below
//	defer tb.Close()
//	out, err := tb.Call(ctx, struct{}{}, "Read", json.RawMessage(`{"path":"notes.txt"}`))
//
// An agent gets [Toolbox.Toolset]'s tools and [Toolbox.Permissions]
// (llmagent.Config.Tools, runner.Config.Permissions and Mode).
//
// # What it guarantees
//
//   - The file tools act only beneath the root: paths are resolved by the
//     kernel beneath it (package fsroot), never compared as strings.
//   - Bash runs in the OS sandbox on the root by default (Landlock,
//     seccomp and namespaces on Linux, Seatbelt on macOS: package
//     ossandbox): commands write only beneath the root and their private
//     temporary directory, and have no network. Where the sandbox is
//     unavailable, [New] fails with an error wrapping
//     [backend.ErrUnavailable] that says why; it never falls back to a
//     weaker backend by itself. [Options].Uncontained opts into the host
//     backend, which contains nothing; [Options].Workspace runs everything
//     in a workspace the caller opened (a Docker container, a microVM).
//   - The policy files' directories (.helikon, .claude, and the user's
//     helikon directory: [policyfile.Dirs]) are read-only to sandboxed
//     commands, and the pipeline refuses any call that would write a
//     policy file of the root, even with NoGuards: an agent cannot loosen
//     its own policy.
//   - Every call of [Toolbox.Call] goes through the pipeline: deny rules,
//     guards, ask rules, allow rules, the mode, then the policy, by
//     default [AskUnlessReadOnly]: anything not read-only is asked about,
//     and denied without an approval handler.
//   - [New] refuses a rule that names no tool there is (Permissions.
//     CheckTools): a misspelt deny rule would otherwise deny nothing.
//
// # What it does not guarantee
//
// What WebFetch fetches is guarded against private addresses (package
// ssrf), not confined: it reaches the internet unless its host list says
// otherwise. The host backend ([Options].Uncontained) pins the working
// directory and scrubs the environment, nothing more: commands can read and
// write anything the process can. The limits of each backend are those of
// its package (ossandbox, host, the workspace engines); the limits of the
// command analysis behind Bash rules are package shellcmd's. The policy
// files are read once, by [New].
package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/policyfile"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/tool/webfetch"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// Options configure [New]. The zero value builds Read, Write, Edit, Bash
// and WebFetch on the working directory, Bash in the OS sandbox, in the
// default mode with [AskUnlessReadOnly] and no approval handler: read-only
// calls run, every other is denied until rules, a mode or an approval
// handler permit it.
type Options struct {
	// Root is the directory the tools are confined to; "" means the
	// working directory. Ignored when Workspace is set.
	Root string
	// Workspace, when set, is where the tools act instead of Root: its
	// files and its commands (a Docker container, a microVM, a local
	// workspace the caller opened). The toolbox does not close it, and
	// cannot add to its engine's options: open it with the policy files'
	// directories read-only (docker.Options.ReadOnlyPaths:
	// [policyfile.Dirs]), as helikon run does.
	Workspace workspace.Workspace
	// Sandbox configures the OS sandbox Bash runs in (network, extra
	// readable paths, limits); nil means its defaults. The policy files'
	// directories ([policyfile.Dirs]) are always added to its
	// ReadOnlyPaths. Sandbox and Uncontained are ignored with a Workspace.
	Sandbox *ossandbox.Options
	// Uncontained runs Bash on the host backend instead of the OS
	// sandbox: no containment at all (see the package doc). Only for a
	// caller that contains the whole process itself, or trusts every
	// command.
	Uncontained bool

	// Tools names the tools to build, from [Names]; nil means Read,
	// Write, Edit, Bash and WebFetch, WebSearch too when
	// ToolOptions.Searcher is set, and the [ProcessTools] when Processes
	// is set.
	Tools []string
	// Processes, when set, lets Bash start commands that keep running
	// (run_in_background) in a process table of the toolbox, with these
	// limits (at most MaxProcesses at once, RingSize bytes of output kept
	// each, the idle and lifetime bounds), and adds the [ProcessTools]:
	// BashOutput, BashInput (whose input the pipeline judges: see
	// bashtool.InputTool), KillShell and BashList. Close kills them all.
	// New fails with an error wrapping [backend.ErrNoProcesses] when the
	// workspace's engine cannot start processes. Nil: no background
	// commands (ToolOptions.ProcessTable may still give a table).
	Processes *process.Options
	// ToolOptions configure the tools.
	ToolOptions

	// Mode is the permission mode calls run in. With PolicyFiles, the
	// files' mode applies when Mode is ModeDefault.
	Mode helikon.PermissionMode
	// Deny, Ask and Allow are permission rules (see [helikon.Permissions]);
	// the policy files' rules are added to them.
	Deny, Ask, Allow []helikon.Rule
	// NoGuards switches the built-in guards off (never the policy-file
	// guard).
	NoGuards bool
	// Policy decides the calls no rule or mode settled; nil means
	// [AskUnlessReadOnly].
	Policy helikon.Policy
	// Approver answers the calls asked about; nil denies them. [Approver]
	// adds "always" answers to any way of asking.
	Approver helikon.Approver
	// DeferAsks makes a call that needs approval end at once with an
	// [*AskError] carrying the question, for an application that asks the
	// person later (an agent framework's interrupt and resume) and makes
	// the call again with [Resume]'s context. Approver must then be nil:
	// New fails otherwise. Only [Toolbox.Call] returns AskError; a call
	// made another way (an agent runner given [Toolbox.Permissions]) is
	// denied with [ErrAskDeferred] in its reason.
	DeferAsks bool
	// OtherTools are the names of tools the caller adds to the toolset
	// (its own, an MCP server's): rules may name them too.
	OtherTools []string

	// PolicyFiles, when set, reads the policy files it selects (package
	// policyfile; its Root is the toolbox's root): their rules, mode,
	// command limits, backend (os or host) and WebFetch host lists apply,
	// an untrusted project file only tightening. With a Workspace, its Root
	// must name the project's directory on this machine, and the files'
	// backend and limits do not apply (the workspace's engine has them).
	// Nil reads none (the root's policy files are still guarded).
	PolicyFiles *policyfile.Options
}

// ErrUnknownTool is returned by [Toolbox.Call] for a name no tool of the
// toolbox has.
var ErrUnknownTool = errors.New("toolbox: no tool called")

// Toolbox is the contained toolset and its permission pipeline. Its
// methods are safe for concurrent use; Close releases what [New] started.
type Toolbox[A any] struct {
	set    *helikon.Toolset[A]
	perms  *helikon.Permissions
	mode   helikon.PermissionMode
	ws     workspace.Workspace
	policy *policyfile.Settings
	defers bool
	closes []func(context.Context) error
}

// closeTimeout bounds Close's release of the workspace.
const closeTimeout = 30 * time.Second

// New builds the toolset o describes (nil o: the zero Options) and checks
// its rules. What it started is released on failure; on success the caller
// calls [Toolbox.Close].
func New[A any](ctx context.Context, o *Options) (_ *Toolbox[A], err error) {
	if o == nil {
		o = &Options{}
	}
	tb := &Toolbox[A]{mode: o.Mode, defers: o.DeferAsks}
	defer func() {
		if err != nil {
			tb.Close()
		}
	}()
	root := o.Root
	if o.Workspace != nil {
		root = o.Workspace.Dir()
	} else if root, err = rootDir(o.Root); err != nil {
		return nil, err
	}
	perms := &helikon.Permissions{
		Deny: slices.Clone(o.Deny), Ask: slices.Clone(o.Ask), Allow: slices.Clone(o.Allow),
		NoGuards: o.NoGuards, Policy: o.Policy, Approver: o.Approver,
	}
	if perms.Policy == nil {
		perms.Policy = AskUnlessReadOnly{}
	}
	if o.DeferAsks {
		if o.Approver != nil {
			return nil, errors.New("toolbox: DeferAsks with an Approver: set one of them (DeferAsks hands the questions to the caller of Call)")
		}
		perms.Approver = &Approver{Ask: deferredAsk}
	}
	sandbox := &ossandbox.Options{}
	if o.Sandbox != nil {
		*sandbox = *o.Sandbox
	}
	sandbox.ReadOnlyPaths = append(slices.Clone(sandbox.ReadOnlyPaths), policyfile.Dirs()...)
	uncontained := o.Uncontained
	tools := o.ToolOptions
	protected := protectedFiles(root)
	if o.PolicyFiles != nil {
		po := *o.PolicyFiles
		switch {
		case o.Workspace == nil:
			po.Root = root
		case po.Root == "":
			return nil, errors.New("toolbox: PolicyFiles with a Workspace: set PolicyFiles.Root to the project's directory on this machine")
		}
		pol, err := policyfile.Load(&po)
		if err != nil {
			return nil, err
		}
		tb.policy = pol
		if o.Workspace == nil {
			protected = pol.Protected
		}
		if err := applyPolicy(pol, perms, &tb.mode, &tools); err != nil {
			return nil, err
		}
		if o.Workspace == nil {
			if uncontained, err = applyBackend(pol, sandbox, uncontained); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range protected {
		perms.Protected = append(perms.Protected, helikon.ProtectedFile{Path: f, Dir: root})
	}
	if err := perms.CheckTools(append(slices.Clone(Names), o.OtherTools...)); err != nil {
		return nil, err
	}
	tb.perms = perms
	names := o.Tools
	if names == nil {
		names = slices.Clone(defaultTools)
		if tools.Searcher != nil {
			names = append(names, "WebSearch")
		}
		if o.Processes != nil {
			names = append(names, ProcessTools...)
		}
	}
	if tb.ws = o.Workspace; tb.ws == nil {
		if tb.ws, err = tb.open(ctx, root, sandbox, uncontained); err != nil {
			return nil, err
		}
	}
	if o.Processes != nil && tools.ProcessTable == nil {
		// Made here, after the workspace, so that Close kills the
		// processes before it closes the workspace.
		tab, err := process.New(context.Background(), tb.ws, o.Processes)
		if err != nil {
			return nil, fmt.Errorf("toolbox: background commands: %w", err)
		}
		tb.closes = append(tb.closes, func(context.Context) error { return tab.Close() })
		tools.ProcessTable = tab
	}
	set := make([]helikon.Tool[A], 0, len(names))
	for _, n := range names {
		t, err := NewTool[A](tb.ws, n, &tools)
		if err != nil {
			return nil, fmt.Errorf("toolbox: %s: %w", n, err)
		}
		set = append(set, t)
	}
	if tb.set, err = helikon.NewToolset(set...); err != nil {
		return nil, err
	}
	return tb, nil
}

// rootDir returns dir ("" the working directory) absolute, its symbolic
// links resolved: the policy files' paths, the guard's protected files and
// the sandbox all use this one spelling.
func rootDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("toolbox: root %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("toolbox: root %s: %w", dir, err)
	}
	if fi, err := os.Stat(real); err != nil {
		return "", fmt.Errorf("toolbox: root %s: %w", dir, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("toolbox: root %s is not a directory", dir)
	}
	return real, nil
}

// protectedFiles are the root's policy files, read or not.
func protectedFiles(root string) []string {
	files := []string{filepath.Join(root, filepath.FromSlash(policyfile.ProjectFile))}
	for _, f := range policyfile.ClaudeFiles {
		files = append(files, filepath.Join(root, filepath.FromSlash(f)))
	}
	return files
}

// applyPolicy merges the policy files' rules, mode and WebFetch hosts into
// what New builds.
func applyPolicy(pol *policyfile.Settings, perms *helikon.Permissions, mode *helikon.PermissionMode, tools *ToolOptions) error {
	perms.Deny = append(perms.Deny, pol.Deny...)
	perms.Ask = append(perms.Ask, pol.Ask...)
	perms.Allow = append(perms.Allow, pol.Allow...)
	if *mode == helikon.ModeDefault && pol.Mode.From != "" {
		*mode = pol.Mode.Value
	}
	if *mode == helikon.ModeBypass && pol.NoBypass != "" {
		return fmt.Errorf("toolbox: bypass mode is disabled by disableBypassPermissionsMode at %s", pol.NoBypass)
	}
	if pol.AllowHosts.From != "" || len(pol.DenyHosts) > 0 {
		wf := webfetch.Options{}
		if tools.WebFetch != nil {
			wf = *tools.WebFetch
		}
		if len(wf.AllowedHosts) == 0 {
			wf.AllowedHosts = pol.AllowHosts.Value
		}
		wf.DeniedHosts = append(slices.Clone(wf.DeniedHosts), pol.DenyHosts...)
		tools.WebFetch = &wf
	}
	return nil
}

// applyBackend applies the policy files' backend and command limits to the
// OS sandbox's options, and returns whether Bash runs uncontained.
func applyBackend(pol *policyfile.Settings, sb *ossandbox.Options, uncontained bool) (bool, error) {
	switch b := pol.Backend; b.Value {
	case "", "os", "local":
	case "host":
		uncontained = true
	default:
		return false, fmt.Errorf("%w: %s: backend %q: open its workspace and pass it as Options.Workspace", backend.ErrUnavailable, b.From, b.Value)
	}
	if sb.Timeout == 0 {
		sb.Timeout = pol.Timeout.Value
	}
	for _, l := range []struct {
		set policyfile.Setting[int64]
		dst *int64
	}{{pol.CPUSeconds, &sb.Limits.CPUSeconds}, {pol.FileSize, &sb.Limits.FileSize}, {pol.Memory, &sb.Limits.AddressSpace}} {
		if *l.dst == 0 {
			*l.dst = l.set.Value
		}
	}
	return uncontained, nil
}

// open builds the backend on root (the OS sandbox, or the host backend when
// uncontained) and a local workspace over it, and arranges for Close to
// release both.
func (tb *Toolbox[A]) open(ctx context.Context, root string, sb *ossandbox.Options, uncontained bool) (workspace.Workspace, error) {
	var b backend.Backend
	var err error
	if uncontained {
		b, err = host.New(root, &host.Options{Timeout: sb.Timeout, EnvAllowlist: sb.EnvAllowlist, Limits: sb.Limits})
	} else {
		b, err = ossandbox.New(root, sb)
		if err != nil && errors.Is(err, backend.ErrUnavailable) {
			err = fmt.Errorf("toolbox: %w (helikon doctor says what this machine lacks); to run commands without containment set Options.Uncontained, or run them elsewhere with Options.Workspace (a Docker workspace, package workspace/docker)", err)
		}
	}
	if err != nil {
		return nil, err
	}
	if c, ok := b.(io.Closer); ok {
		tb.closes = append(tb.closes, func(context.Context) error { return c.Close() })
	}
	eng, err := local.New(root, b)
	if err != nil {
		return nil, err
	}
	ws, err := eng.Create(ctx, workspace.SessionFor(session.NewID()))
	if err != nil {
		return nil, err
	}
	tb.closes = append(tb.closes, ws.Close)
	return ws, nil
}

// Toolset returns the tools, for an agent (llmagent.Config.Tools) or an MCP
// server (mcptools.NewServer).
func (tb *Toolbox[A]) Toolset() *helikon.Toolset[A] { return tb.set }

// Permissions returns the permission pipeline the tools' calls go through:
// the rules, guards, protected policy files, policy and approval handler.
// Pass it to the runner (runner.Config.Permissions) with [Toolbox.Mode].
// It is the toolbox's own: changing it changes what Call decides.
func (tb *Toolbox[A]) Permissions() *helikon.Permissions { return tb.perms }

// Mode returns the permission mode: Options.Mode, else the policy files'.
func (tb *Toolbox[A]) Mode() helikon.PermissionMode { return tb.mode }

// Workspace returns the workspace the tools act in: Options.Workspace, or
// the local one New opened on the root.
func (tb *Toolbox[A]) Workspace() workspace.Workspace { return tb.ws }

// PolicyFiles returns what New read from the policy files (where each rule
// and setting comes from); nil when Options.PolicyFiles was nil.
func (tb *Toolbox[A]) PolicyFiles() *policyfile.Settings { return tb.policy }

// Call calls the tool called name with args through the permission
// pipeline, in the toolbox's mode, with app as the run's application
// context (see [helikon.CallTool]). A call the pipeline refuses fails with
// an error of kind [helikon.KindDenied]; an unknown tool with
// [ErrUnknownTool]. With [Options].DeferAsks, a call that needs a person's
// answer fails with an [*AskError] (a denial too).
func (tb *Toolbox[A]) Call(ctx context.Context, app A, name string, args json.RawMessage) (json.RawMessage, error) {
	t, ok := tb.set.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %q (tools: %v)", ErrUnknownTool, name, tb.set.Names())
	}
	var slot *askSlot
	if tb.defers {
		slot = &askSlot{}
		ctx = context.WithValue(ctx, askKey{}, slot)
	}
	out, err := helikon.CallTool(helikon.NewToolContext(ctx, app, &helikon.RunConfig{Mode: tb.mode}), tb.perms, t, args)
	if err != nil && slot != nil {
		slot.mu.Lock()
		defer slot.mu.Unlock()
		if slot.req != nil {
			return nil, &AskError{Request: slot.req, Offer: slot.offer, Err: err}
		}
	}
	return out, err
}

// Close releases what New started: the local workspace and the OS
// sandbox's helper processes, the last started first. It does not close
// Options.Workspace. It is idempotent.
func (tb *Toolbox[A]) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	for _, c := range slices.Backward(tb.closes) {
		errs = append(errs, c(ctx))
	}
	tb.closes = nil
	return errors.Join(errs...)
}
