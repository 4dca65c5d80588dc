package mcptools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/argcheck"
	"github.com/paigasus/helikon/version"
)

// WrapOptions configures [Wrap]. The zero value (or nil) names the server
// "server", serves in Default mode with the zero [helikon.Permissions]
// (guards on, no rules), asks the host by elicitation, trusts the
// annotations for each tool's effect and keeps the approved tool
// definitions in memory.
type WrapOptions struct {
	// Name is the server's name in permission rules: its tool T is the
	// tool mcp__NAME__T, as in helikon run. "" means "server".
	Name string
	// Permissions is the pipeline every call goes through; nil means the
	// zero value. Its Approver answers "ask" decisions (and held tools)
	// for hosts that do not support elicitation; without one they are
	// refused.
	Permissions *helikon.Permissions
	// Mode is the permission mode of every call.
	Mode helikon.PermissionMode
	// NoElicitation stops questions from being sent to the host: only
	// Permissions.Approver answers them.
	NoElicitation bool
	// IgnoreAnnotations treats every tool as a side effect, whatever its
	// annotations claim.
	IgnoreAnnotations bool
	// Pins keeps the approved definition of each tool; nil means a fresh
	// in-memory set, so that only changes during this connection are
	// caught. Use [LoadPins] to catch changes between runs (a server
	// updated by its package manager).
	Pins *Pins
	// Logger receives held tools (warnings) and one debug record per
	// call; nil means slog.Default.
	Logger *slog.Logger
}

// heldReason is the refusal of a call to a held tool (see [Wrap]).
const heldReason = "the MCP server changed this tool since it was approved (or added it afterwards); it stays held until its new definition is approved"

// A Wrapper relays an MCP server's tools to a host, through helikon's
// permission pipeline and the rug-pull guard. Build it with [Wrap].
type Wrapper struct {
	opts   WrapOptions
	log    *slog.Logger
	prefix string
	key    []byte
	srv    *mcp.Server
	cs     *mcp.ClientSession
	sopts  ServerOptions[struct{}]
	relist chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	mu     sync.Mutex
	tools  map[string]*wrappedTool // by the server's name
	listed bool                    // the first listing is done
}

// wrappedTool is one tool of the wrapped server as last listed.
type wrappedTool struct {
	def   *mcp.Tool
	fp    string // fingerprint of def (see Fingerprint)
	held  bool
	stub  proxiedTool // what the pipeline sees
	check *argcheck.Validator
}

// proxiedTool describes a wrapped tool to the permission pipeline; its
// calls are relayed by the Wrapper, never invoked.
type proxiedTool struct{ helikon.ToolInfo }

func (proxiedTool) Invoke(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) {
	return nil, helikon.Other(errors.New("mcptools: a wrapped tool is relayed, not invoked"))
}

// Wrap connects to the MCP server dial reaches (typically [Contained]: a
// stdio server in the OS sandbox), lists its tools and returns a Wrapper
// whose [Wrapper.Server] offers them to a host under the server's own
// names, so that a host configured with the bare server sees the same
// tools. Every call goes through the same steps as a helikon tool served by
// [NewServer]: the arguments are checked against the tool's input schema,
// the permission pipeline decides on the call mcp__NAME__TOOL (rules,
// modes, guards; the effect from the annotations), an "ask" goes to the
// host by elicitation, and only then is the call relayed, with the
// arguments the pipeline passed (a policy may replace them). The server's
// result is relayed unchanged.
//
// The rug-pull guard: each tool's definition (title, description, input
// and output schema, annotations) is fingerprinted ([Fingerprint]) and
// pinned the first time it is seen, in the first listing of the
// connection, unless [WrapOptions].Pins already holds one. A tool whose
// definition later differs from its pin, and a tool that first appears
// after the first listing, is held: the host is offered it with a neutral
// description and an empty schema (never the changed text, which is where
// a rug pull puts its instructions), and a call to it is refused
// (denied) unless the host's user (elicitation) or the Approver
// approves the new definition, shown in full; approved, it is pinned and
// offered as it now is, and the host is told the list changed.
//
// The server's instructions, prompts and resources are not relayed; nor
// are its requests to the host (sampling, elicitation, roots).
func Wrap(ctx context.Context, dial Dialer, opts *WrapOptions) (*Wrapper, error) {
	w := &Wrapper{relist: make(chan struct{}, 1), stop: make(chan struct{}), tools: map[string]*wrappedTool{}}
	if opts != nil {
		w.opts = *opts
	}
	if w.opts.Name == "" {
		w.opts.Name = "server"
	}
	w.prefix = "mcp__" + invalidNameChars.ReplaceAllString(w.opts.Name, "_") + "__"
	if w.opts.Pins == nil {
		w.opts.Pins = &Pins{}
	}
	w.log = w.opts.Logger
	if w.log == nil {
		w.log = slog.Default()
	}
	w.key = make([]byte, 32)
	rand.Read(w.key) // never fails (crypto/rand documents it)
	perms := &helikon.Permissions{}
	if w.opts.Permissions != nil {
		*perms = *w.opts.Permissions
	}
	if perms.Approver == nil {
		// Hosts that cannot ask their user get a refusal that says which
		// rule would decide the call without asking.
		perms.Approver = noOneToAsk{}
	}
	w.sopts = ServerOptions[struct{}]{Permissions: perms, Mode: w.opts.Mode, NoElicitation: w.opts.NoElicitation, ProgressInterval: -1, Logger: w.log}
	w.srv = mcp.NewServer(&mcp.Implementation{Name: "helikon-wrap-" + w.opts.Name, Version: version.Get().String()}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "helikon", Version: version.Get().String()}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case w.relist <- struct{}{}:
			default: // a listing is already due; it will see this change too
			}
		},
	})
	t, err := dial()
	if err != nil {
		return nil, fmt.Errorf("mcptools: %w", err)
	}
	if w.cs, err = client.Connect(ctx, t, nil); err != nil {
		return nil, fmt.Errorf("mcptools: connecting to the wrapped mcp server: %w", err)
	}
	if err := w.sync(ctx); err != nil {
		w.cs.Close()
		return nil, err
	}
	w.wg.Add(1)
	go w.relister()
	return w, nil
}

// Server returns the MCP server to serve to the host.
func (w *Wrapper) Server() *mcp.Server { return w.srv }

// ErrServerEnded is wrapped by the error of [Wrapper.Run] when the wrapped
// server's connection ended first (the server exited or was killed).
var ErrServerEnded = errors.New("the wrapped mcp server's connection ended")

// Run serves the host on t until the host disconnects or ctx ends (a nil
// error) or the wrapped server's connection ends ([ErrServerEnded]), then
// closes the Wrapper.
func (w *Wrapper) Run(ctx context.Context, t mcp.Transport) error {
	defer w.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan struct{})
	go func() {
		w.cs.Wait()
		close(ended)
		cancel()
	}()
	err := w.srv.Run(sctx, t)
	select {
	case <-ended:
		if ctx.Err() == nil {
			return fmt.Errorf("mcptools: %w", ErrServerEnded)
		}
	default:
	}
	if sctx.Err() != nil {
		return nil
	}
	return err
}

// Close ends the connection to the wrapped server (stopping a spawned one).
// It may be called more than once.
func (w *Wrapper) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		w.closeErr = w.cs.Close()
		w.wg.Wait()
	})
	return w.closeErr
}

// Held returns the names (the server's) of the tools held now, sorted.
func (w *Wrapper) Held() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var held []string
	for name, t := range w.tools {
		if t.held {
			held = append(held, name)
		}
	}
	sort.Strings(held)
	return held
}

// relisterTimeout bounds one listing after tools/list_changed.
const relisterTimeout = time.Minute

func (w *Wrapper) relister() {
	defer w.wg.Done()
	for {
		select {
		case <-w.stop:
			return
		case <-w.relist:
		}
		ctx, cancel := context.WithTimeout(context.Background(), relisterTimeout)
		go func() {
			select {
			case <-w.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := w.sync(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("mcp wrap: listing the wrapped server's tools again failed", slog.String("server", w.opts.Name), slog.Any("error", err))
		}
		cancel()
	}
}

// Fingerprint returns the hex SHA-256 of what a host shows a model of def
// and what its arguments must be: title, description, input and output
// schema, annotations. A change to any of them changes the fingerprint;
// the name is the key it is pinned under.
func Fingerprint(def *mcp.Tool) string {
	b, _ := json.Marshal(definitionOf(def))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// definition is what of a tool a host shows a model and checks arguments
// against: what [Fingerprint] hashes and an approval question shows.
type definition struct {
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema,omitempty"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

func definitionOf(def *mcp.Tool) definition {
	return definition{def.Title, def.Description, def.InputSchema, def.OutputSchema, def.Annotations}
}

// sync lists the wrapped server's tools and brings the served list in line:
// pins what is first seen in the first listing, holds what changed or came
// later, removes what is gone.
func (w *Wrapper) sync(ctx context.Context) error {
	listed := map[string]*mcp.Tool{}
	for def, err := range w.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcptools: listing the wrapped server's tools: %w", err)
		}
		listed[def.Name] = def
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	first := !w.listed
	w.listed = true
	var gone []string
	for name := range w.tools {
		if listed[name] == nil {
			gone = append(gone, name)
			delete(w.tools, name)
		}
	}
	if len(gone) > 0 {
		w.srv.RemoveTools(gone...)
	}
	for name, def := range listed {
		fp := Fingerprint(def)
		old := w.tools[name]
		if old != nil && old.fp == fp {
			continue
		}
		pin, ok := w.opts.Pins.get(w.prefix + name)
		held := ok && pin != fp || !ok && !first
		if !ok && first {
			w.opts.Pins.set(w.prefix+name, fp)
		}
		t, err := w.newTool(def, fp, held)
		if err != nil {
			w.log.Warn("mcp wrap: tool not offered", slog.String("server", w.opts.Name), slog.String("tool", name), slog.Any("error", err))
			if old != nil {
				delete(w.tools, name)
				w.srv.RemoveTools(name)
			}
			continue
		}
		if held {
			w.log.Warn("mcp wrap: the server changed or added a tool after its tools were approved; it is held until approved again",
				slog.String("server", w.opts.Name), slog.String("tool", name))
		}
		w.tools[name] = t
		w.serve(t)
	}
	return w.opts.Pins.save()
}

// newTool prepares def for serving.
func (w *Wrapper) newTool(def *mcp.Tool, fp string, held bool) (*wrappedTool, error) {
	info, check, err := listedTool(w.prefix, def, w.opts.IgnoreAnnotations)
	if err != nil {
		return nil, err
	}
	return &wrappedTool{def: def, fp: fp, held: held, check: check, stub: proxiedTool{info}}, nil
}

// heldDescription is what the host is shown of a held tool.
const heldDescription = "Held by helikon: the MCP server changed this tool's description or schema after it was approved (or added it afterwards). Calls are refused until the new definition is approved; calling it asks for that approval where the host can ask its user."

// serve offers t to the host under its server's name.
func (w *Wrapper) serve(t *wrappedTool) {
	name := t.def.Name
	def := t.def
	if t.held {
		def = &mcp.Tool{Name: name, Description: heldDescription, InputSchema: map[string]any{"type": "object"}}
	}
	w.srv.AddTool(def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, outcome, err := w.call(ctx, name, req)
		w.log.LogAttrs(ctx, slog.LevelDebug, "mcp wrap call", slog.String("server", w.opts.Name), slog.String("tool", name),
			slog.String("outcome", outcome), slog.Duration("duration", time.Since(start)))
		return res, err
	})
}

// call relays one call of the tool the server names name.
func (w *Wrapper) call(ctx context.Context, name string, req *mcp.CallToolRequest) (*mcp.CallToolResult, string, error) {
	w.mu.Lock()
	t := w.tools[name]
	w.mu.Unlock()
	if t == nil {
		res, outcome := errorResult(name, helikon.Other(fmt.Errorf("the mcp server no longer offers tool %s; list the tools again", name)))
		return res, outcome, nil
	}
	if t.held {
		res, outcome := w.reapprove(ctx, req, t)
		return res, outcome, nil
	}
	c := &servedCall[struct{}]{tool: t.stub, check: t.check, opts: &w.sopts, key: w.key}
	ctx, checked, _, res, outcome := c.admit(ctx, req)
	if res != nil {
		return res, outcome, nil
	}
	out, err := w.cs.CallTool(ctx, &mcp.CallToolParams{Meta: req.Params.Meta, Name: name, Arguments: checked.Args()})
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return nil, "protocol_error", err // the server's own answer, relayed
		}
		res, outcome := errorResult(t.stub.Name(), helikon.Other(fmt.Errorf("the call to the wrapped mcp server failed: %w", err)))
		return res, outcome, nil
	}
	if out.IsError {
		return out, "tool_error", nil
	}
	return out, "ok", nil
}

// ErrNoOneToAsk is wrapped by the refusal of a call that needs approval
// when the host cannot ask its user (it does not support elicitation, or
// [WrapOptions].NoElicitation) and there is no [helikon.Permissions]
// Approver: the message names the allow and deny rules that would decide
// the call without asking.
var ErrNoOneToAsk = errors.New("the MCP host cannot ask its user (it does not support elicitation)")

// noOneToAsk answers the questions of a Wrapper whose host cannot ask.
type noOneToAsk struct{}

func (noOneToAsk) Approve(_ context.Context, ar *helikon.ApprovalRequest) (bool, error) {
	return false, fmt.Errorf("%w: to allow it without asking, add the rule %s to the allow rules (--allow %s, or permissions.allow in a policy file); to refuse it, add it to the deny rules",
		ErrNoOneToAsk, ar.Tool, ar.Tool)
}

// reapprove asks for approval of a held tool's new definition.
func (w *Wrapper) reapprove(ctx context.Context, req *mcp.CallToolRequest, t *wrappedTool) (*mcp.CallToolResult, string) {
	def, _ := json.MarshalIndent(definitionOf(t.def), "", "  ")
	ar := &helikon.ApprovalRequest{Tool: t.stub.Name(), Effect: t.stub.ToolEffect, Args: def,
		Reason: fmt.Sprintf("the MCP server %s changed tool %s since it was approved (or added it afterwards); approve its new definition (shown as the arguments)", w.opts.Name, t.def.Name)}
	var approver helikon.Approver
	var asker *elicitApprover
	if !w.opts.NoElicitation && clientElicits(req) {
		asker = &elicitApprover{req: req, key: w.key, modern: req.ProtocolVersion() >= modernProtocol}
		approver = asker
	} else if w.opts.Permissions != nil && w.opts.Permissions.Approver != nil {
		approver = w.opts.Permissions.Approver
	}
	refused := &helikon.DeniedError{Reason: heldReason}
	if approver == nil {
		return errorResult(t.stub.Name(), refused)
	}
	ok, err := approver.Approve(ctx, ar)
	if errors.Is(err, errNeedsInput) && asker != nil {
		return &mcp.CallToolResult{InputRequests: asker.pending}, "input_required"
	}
	if err != nil || !ok {
		return errorResult(t.stub.Name(), refused)
	}
	w.mu.Lock()
	cur := w.tools[t.def.Name]
	if cur != nil && cur.fp == t.fp {
		w.opts.Pins.set(t.stub.Name(), t.fp)
		cur.held = false
		w.serve(cur)
	}
	err = w.opts.Pins.save()
	w.mu.Unlock()
	if err != nil {
		w.log.Warn("mcp wrap: saving the pins failed", slog.Any("error", err))
	}
	return errorResult(t.stub.Name(), helikon.Other(fmt.Errorf("approved: the new definition of %s is offered now; list the tools again and call it anew", t.def.Name)))
}
