package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/shell"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/argcheck"
	"github.com/paigasus/helikon/version"
)

// A Dialer returns a fresh transport for one connection attempt. Reconnecting
// needs a new transport (a spawned command runs once), hence a function.
type Dialer func() (mcp.Transport, error)

// Command returns a Dialer that spawns cmdline and speaks MCP over its stdin
// and stdout. cmdline is split into words as a POSIX shell would (quotes,
// backslashes, $VAR from the environment; no globbing or command
// substitution) and run without a shell. The server's stderr goes to this
// process's stderr. The server inherits this process's whole environment,
// API keys included, and runs with its privileges, unsandboxed: start only
// servers you trust, or start the server contained with [ContainedCommand].
func Command(cmdline string) Dialer {
	return func() (mcp.Transport, error) {
		words, err := shell.Fields(cmdline, nil)
		if err != nil {
			return nil, fmt.Errorf("mcp server command %q: %w", cmdline, err)
		}
		if len(words) == 0 {
			return nil, fmt.Errorf("mcp server command is empty")
		}
		return CommandArgs(words[0], words[1:]...)()
	}
}

// CommandArgs is like [Command] with the program and its arguments given
// separately (no splitting, no expansion).
func CommandArgs(name string, args ...string) Dialer {
	return func() (mcp.Transport, error) {
		cmd := exec.Command(name, args...)
		cmd.Stderr = os.Stderr
		return &mcp.CommandTransport{Command: cmd}, nil
	}
}

// HTTPClientOptions configures [HTTP].
type HTTPClientOptions struct {
	// Token, when set, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Client is the HTTP client; nil means http.DefaultClient.
	Client *http.Client
}

// HTTP returns a Dialer for an MCP server at endpoint, over the streamable
// HTTP transport.
func HTTP(endpoint string, opts *HTTPClientOptions) Dialer {
	if opts == nil {
		opts = &HTTPClientOptions{}
	}
	return func() (mcp.Transport, error) {
		hc := http.Client{}
		if opts.Client != nil {
			hc = *opts.Client
		}
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		if opts.Token != "" {
			u, err := url.Parse(endpoint)
			if err != nil {
				return nil, fmt.Errorf("mcp endpoint %q: %w", endpoint, err)
			}
			base = bearerTransport{base: base, token: opts.Token, scheme: u.Scheme, host: strings.ToLower(u.Host)}
		}
		hc.Transport = busyTransport{base}
		return &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &hc}, nil
	}
}

// bearerTransport adds the token to requests for the endpoint's scheme and
// host only. It sets the header itself, below the http.Client, so the
// client's own rule (Authorization is dropped on a redirect to another host)
// does not protect it: a server redirecting elsewhere would otherwise pass
// the token on.
type bearerTransport struct {
	base         http.RoundTripper
	token        string
	scheme, host string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != b.scheme || strings.ToLower(r.URL.Host) != b.host {
		return b.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// busyTransport turns a 503 or 429 answer whose body is a JSON-RPC error
// into an error with that message. The go-sdk client takes those statuses
// for transient and drops the body, where a server at its session cap (see
// [HTTPOptions].MaxSessions) says what to do.
type busyTransport struct{ base http.RoundTripper }

// maxRefusalBytes bounds the body of a refusal read by busyTransport: a
// JSON-RPC error is a few hundred bytes.
const maxRefusalBytes = 64 << 10

func (b busyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBytes))
	resp.Body.Close()
	var e rpcErrorResponse
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return nil, fmt.Errorf("%s (HTTP %d)", e.Error.Message, resp.StatusCode)
}

// Transport returns a Dialer that always returns t. Use it for transports
// that can connect only once (such as an in-memory transport): such a source
// cannot reconnect.
func Transport(t mcp.Transport) Dialer {
	var used atomic.Bool
	return func() (mcp.Transport, error) {
		if used.Swap(true) {
			return nil, errors.New("this transport can connect only once, so the connection cannot be re-established")
		}
		return t, nil
	}
}

// ClientOptions configures [Connect]. The zero value (or nil) names tools as
// the server does and trusts annotations for their effect.
type ClientOptions struct {
	// Prefix is prepended to every tool name ("github_" gives
	// github_create_issue). Set it when two sources offer tools of the same
	// name.
	Prefix string
	// IgnoreAnnotations treats every tool as a side effect, whatever its
	// annotations claim. Use it for servers you do not trust.
	IgnoreAnnotations bool
	// Name identifies this client to the server; "" means "helikon".
	Name string
	// OnToolsChanged, when not nil, is called (on its own goroutine) after
	// the tool list was fetched again following tools/list_changed.
	OnToolsChanged func()
	// Logger receives connection events; nil means slog.Default.
	Logger *slog.Logger
}

// A Source is a connection to one MCP server whose tools are offered as
// helikon tools. It is safe for concurrent use.
type Source[C any] struct {
	dial   Dialer
	opts   ClientOptions
	client *mcp.Client
	log    *slog.Logger

	dialMu sync.Mutex // serializes reconnection

	// refreshMu guards relisting and relistAgain: at most one listing
	// after tools/list_changed runs at a time, and the notifications that
	// arrive meanwhile cause one more, however many they are (a server
	// can send them as fast as it likes).
	refreshMu   sync.Mutex
	relisting   bool
	relistAgain bool
	closeCtx    context.Context // cancelled by Close: stops a listing in progress
	closeCancel context.CancelFunc

	mu      sync.Mutex
	session *mcp.ClientSession // nil: disconnected
	tools   []helikon.Tool[C]
	remote  map[string]*mcpTool[C] // by remote name
	closed  bool
}

// Connect connects to the MCP server dial reaches and lists its tools. The
// tools are then available from [Source.Tools]. Close the source when done
// (it stops a spawned server).
func Connect[C any](ctx context.Context, dial Dialer, opts *ClientOptions) (*Source[C], error) {
	s := &Source[C]{dial: dial}
	s.closeCtx, s.closeCancel = context.WithCancel(context.Background())
	if opts != nil {
		s.opts = *opts
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	name := s.opts.Name
	if name == "" {
		name = "helikon"
	}
	s.client = mcp.NewClient(&mcp.Implementation{Name: name, Version: version.Get().String()}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: s.listChanged,
	})
	cs, err := s.connect(ctx)
	if err != nil {
		s.closeCancel()
		return nil, err
	}
	if err := s.refresh(ctx, cs); err != nil {
		s.closeCancel()
		cs.Close()
		return nil, err
	}
	return s, nil
}

// Tools returns the server's tools as helikon tools, as last listed (at
// Connect, after each tools/list_changed and after each reconnection). When
// the connection has dropped it reconnects first. A Source is therefore an
// llmagent.ToolSource: an agent gets the current list at the start of each
// run.
func (s *Source[C]) Tools(ctx context.Context) ([]helikon.Tool[C], error) {
	if _, err := s.current(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]helikon.Tool[C](nil), s.tools...), nil
}

// Close closes the connection (stopping a spawned server). Calls made after
// Close fail.
func (s *Source[C]) Close() error {
	s.mu.Lock()
	cs := s.session
	s.session, s.closed = nil, true
	s.mu.Unlock()
	s.closeCancel()
	if cs != nil {
		return cs.Close()
	}
	return nil
}

// connect dials and starts watching the session for a drop.
func (s *Source[C]) connect(ctx context.Context) (*mcp.ClientSession, error) {
	t, err := s.dial()
	if err != nil {
		return nil, fmt.Errorf("mcptools: %w", err)
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("mcptools: connecting to the mcp server: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cs.Close()
		return nil, errors.New("mcptools: source is closed")
	}
	s.session = cs
	s.mu.Unlock()
	go func() {
		cs.Wait()
		s.mu.Lock()
		if s.session == cs {
			s.session = nil
			if !s.closed {
				s.log.Warn("mcp server connection dropped; it will be re-established on the next call")
			}
		}
		s.mu.Unlock()
	}()
	return cs, nil
}

// drop forgets cs, a session found dead, so that the next call reconnects
// without waiting for the watcher to notice.
func (s *Source[C]) drop(cs *mcp.ClientSession) {
	s.mu.Lock()
	if s.session == cs {
		s.session = nil
	}
	s.mu.Unlock()
	cs.Close()
}

// current returns a live session, reconnecting when the last one dropped.
func (s *Source[C]) current(ctx context.Context) (*mcp.ClientSession, error) {
	s.mu.Lock()
	cs, closed := s.session, s.closed
	s.mu.Unlock()
	if closed {
		return nil, errors.New("mcptools: source is closed")
	}
	if cs != nil {
		return cs, nil
	}
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	s.mu.Lock()
	cs = s.session
	s.mu.Unlock()
	if cs != nil {
		return cs, nil // another call reconnected meanwhile
	}
	cs, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	s.log.Info("mcp server connection re-established")
	if err := s.refresh(ctx, cs); err != nil {
		return nil, err
	}
	return cs, nil
}

func (s *Source[C]) listChanged(context.Context, *mcp.ToolListChangedRequest) {
	// The handler runs on the session's reader: list on another goroutine,
	// one at a time.
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.relisting {
		s.relistAgain = true
		return
	}
	s.relisting = true
	go func() {
		for {
			s.relist()
			s.refreshMu.Lock()
			if !s.relistAgain {
				s.relisting = false
				s.refreshMu.Unlock()
				return
			}
			s.relistAgain = false
			s.refreshMu.Unlock()
		}
	}()
}

// relist fetches the tool list again after tools/list_changed.
func (s *Source[C]) relist() {
	ctx, cancel := context.WithTimeout(s.closeCtx, time.Minute)
	defer cancel()
	cs, err := s.current(ctx)
	if err == nil {
		err = s.refresh(ctx, cs)
	}
	if err != nil {
		if s.closeCtx.Err() == nil {
			s.log.Warn("mcp tools/list_changed: listing tools again failed", slog.Any("error", err))
		}
		return
	}
	if s.opts.OnToolsChanged != nil {
		s.opts.OnToolsChanged()
	}
}

// refresh lists the server's tools and replaces the snapshot.
func (s *Source[C]) refresh(ctx context.Context, cs *mcp.ClientSession) error {
	var tools []helikon.Tool[C]
	remote := map[string]*mcpTool[C]{}
	local := map[string]string{}
	for def, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcptools: listing tools: %w", err)
		}
		t, err := s.wrap(def)
		if err != nil {
			s.log.Warn("mcp tool skipped", slog.String("tool", def.Name), slog.Any("error", err))
			continue
		}
		if other, dup := local[t.name]; dup {
			return fmt.Errorf("mcptools: the server's tools %q and %q both become %q", other, def.Name, t.name)
		}
		local[t.name] = def.Name
		remote[def.Name] = t
		tools = append(tools, t)
	}
	s.mu.Lock()
	s.tools, s.remote = tools, remote
	s.mu.Unlock()
	return nil
}

// invalidNameChars are the characters MCP allows in tool names (dots,
// slashes) that helikon's tool-name grammar does not.
var invalidNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func (s *Source[C]) wrap(def *mcp.Tool) (*mcpTool[C], error) {
	info, check, err := listedTool(s.opts.Prefix, def, s.opts.IgnoreAnnotations)
	if err != nil {
		return nil, err
	}
	if info.Output, err = toSchema(def.OutputSchema); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return &mcpTool[C]{ToolInfo: info, src: s, name: info.ToolName, remoteName: def.Name, check: check}, nil
}

// listedTool is what helikon makes of a tool another server lists, for
// [Source] and [Wrapper] alike: its local name (prefix and the name, with
// the characters helikon's names do not allow replaced), description,
// input schema with its compiled check, and effect ([toolEffect], or a side
// effect with ignoreAnnotations). The output schema is the caller's.
func listedTool(prefix string, def *mcp.Tool, ignoreAnnotations bool) (helikon.ToolInfo, *argcheck.Validator, error) {
	name := prefix + invalidNameChars.ReplaceAllString(def.Name, "_")
	if err := helikon.ValidateToolName(name); err != nil {
		return helikon.ToolInfo{}, nil, err
	}
	in, err := toSchema(def.InputSchema)
	if err != nil || in == nil {
		return helikon.ToolInfo{}, nil, fmt.Errorf("input schema: %v", err)
	}
	check, err := argcheck.Compile(in)
	if err != nil {
		return helikon.ToolInfo{}, nil, fmt.Errorf("input schema: %w", err)
	}
	effect := toolEffect(def)
	if ignoreAnnotations {
		effect = helikon.EffectSideEffect
	}
	return helikon.ToolInfo{ToolName: name, ToolDescription: def.Description, InputSchema: in, ToolEffect: effect}, check, nil
}

// toolEffect is the effect of a listed tool: [EffectOf] its annotations,
// except that write needs the [MetaEffect] mark a helikon server adds. In
// helikon, write means "changes files inside the sandbox and nothing else",
// and AcceptEdits approves such calls without asking; the closed world of
// another server's tool (a database, a service's own state) is not that, so
// an unmarked tool annotated openWorldHint false is a side effect.
func toolEffect(def *mcp.Tool) helikon.Effect {
	e := EffectOf(def.Annotations)
	if e == helikon.EffectWrite && def.Meta[MetaEffect] != helikon.EffectWrite.String() {
		return helikon.EffectSideEffect
	}
	return e
}

func toSchema(v any) (*jsonschema.Schema, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// mcpTool is one tool of an MCP server as a helikon tool.
type mcpTool[C any] struct {
	helikon.ToolInfo
	src        *Source[C]
	name       string
	remoteName string
	check      *argcheck.Validator
}

func (t *mcpTool[C]) Invoke(tc *helikon.ToolContext[C], args json.RawMessage) (json.RawMessage, error) {
	args, err := checkArgs(t.name, t.check, args)
	if err != nil {
		return nil, err
	}
	t.src.mu.Lock()
	_, offered := t.src.remote[t.remoteName]
	t.src.mu.Unlock()
	if !offered {
		return nil, helikon.Other(fmt.Errorf("the mcp server no longer offers tool %s; use another tool", t.remoteName))
	}
	cs, err := t.src.current(tc)
	if err != nil {
		return nil, helikon.Other(err)
	}
	res, err := cs.CallTool(tc, &mcp.CallToolParams{Name: t.remoteName, Arguments: json.RawMessage(args)})
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) && tc.Err() == nil {
			// Not an answer from the server: the connection failed.
			t.src.drop(cs)
			return nil, helikon.Other(fmt.Errorf("the connection to the mcp server failed during the call to %s, which may or may not have run; it will be re-established for the next call: %w", t.remoteName, err))
		}
		return nil, t.callError(tc, err)
	}
	if res.IsError {
		return nil, t.toolError(res)
	}
	return resultJSON(res)
}

// callError maps a protocol-level failure to a tool error.
func (t *mcpTool[C]) callError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return helikon.Other(fmt.Errorf("mcp tool %s: %w", t.remoteName, ctx.Err()))
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams {
		return &helikon.InvalidArgsError{Tool: t.name, Problems: []string{we.Message}}
	}
	return helikon.Other(fmt.Errorf("mcp tool %s: %w", t.remoteName, err))
}

// toolError maps an isError result to a tool error: exactly the error a
// helikon server reported, or "other" with the result's text.
func (t *mcpTool[C]) toolError(res *mcp.CallToolResult) error {
	text := contentText(res.Content)
	if raw, ok := res.Meta[MetaError]; ok {
		var em ErrorMeta
		if b, err := json.Marshal(raw); err == nil && json.Unmarshal(b, &em) == nil {
			switch em.Kind {
			case helikon.KindDenied:
				return &helikon.DeniedError{Reason: em.Reason}
			case helikon.KindInvalidArgs:
				if len(em.SchemaErrors) == 0 {
					em.SchemaErrors = []string{em.Message}
				}
				return &helikon.InvalidArgsError{Tool: t.name, Problems: em.SchemaErrors}
			case helikon.KindOther:
				if em.Message != "" {
					return helikon.Other(errors.New(em.Message))
				}
			}
		}
	}
	if text == "" {
		text = "the mcp tool " + t.remoteName + " failed without saying why"
	}
	return helikon.Other(errors.New(text))
}

// resultJSON returns a successful result as the tool's JSON output: the
// structured content when there is some, else the text when it is JSON, else
// the text as a JSON string, else the content blocks themselves.
func resultJSON(res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, helikon.Other(fmt.Errorf("reading the mcp tool's structured result: %w", err))
		}
		return b, nil
	}
	allText := true
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			allText = false
		}
	}
	if allText {
		text := contentText(res.Content)
		if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) {
			return json.RawMessage(t), nil
		}
		b, _ := json.Marshal(text)
		return b, nil
	}
	b, err := json.Marshal(res.Content)
	if err != nil {
		return nil, helikon.Other(fmt.Errorf("reading the mcp tool's result: %w", err))
	}
	return b, nil
}

func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Toolset builds one toolset from local tools and the tools of sources. Two
// tools of the same name are an error naming where each comes from; give one
// source a [ClientOptions].Prefix to resolve it.
func Toolset[C any](ctx context.Context, local []helikon.Tool[C], sources ...*Source[C]) (*helikon.Toolset[C], error) {
	from := map[string]string{}
	all := append([]helikon.Tool[C](nil), local...)
	for _, t := range local {
		from[t.Name()] = "the local tools"
	}
	for i, src := range sources {
		where := fmt.Sprintf("mcp source %d", i+1)
		tools, err := src.Tools(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			if other, dup := from[t.Name()]; dup {
				return nil, fmt.Errorf("mcptools: tool %s is offered by both %s and %s: set ClientOptions.Prefix on one of them", t.Name(), other, where)
			}
			from[t.Name()] = where
			all = append(all, t)
		}
	}
	return helikon.NewToolset(all...)
}
