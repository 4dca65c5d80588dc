// Package einoadapter gives CloudWeGo eino (github.com/cloudwego/eino,
// built and tested against v0.7.36) helikon's contained file system and
// shell: a [Backend] implementing eino's adk/filesystem.ShellBackend
// (LsInfo, Read, GrepRaw, GlobInfo, Write, Edit, Execute) over a
// [toolbox.Toolbox], for eino's filesystem middleware
// (adk/middlewares/filesystem.NewMiddleware), every call through helikon's
// permission pipeline, and a call that needs a person's approval as an
// eino interrupt (its Info a *toolbox.Question) that the application
// resumes with the person's answer.
//
//	tb, _ := toolbox.New[struct{}](ctx, &toolbox.Options{Root: dir, DeferAsks: true})
//	fsmw, _ := filesystem.NewMiddleware(ctx, &filesystem.Config{Backend: einoadapter.New(tb)})
//	agent, _ := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Model: m, Middlewares: []adk.AgentMiddleware{fsmw, einoadapter.Middleware()}})
//	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: store})
//	// on an event with Action.Interrupted: runner.ResumeWithParams(ctx, id, &adk.ResumeParams{Targets: map[string]any{ic.ID: toolbox.Yes}})
//
// It follows eino v0.7.36's adk/filesystem/backend.go (the Backend
// contract), adk/middlewares/filesystem/filesystem.go (the tools calling
// it), compose/interrupt.go (StatefulInterrupt) and compose/resume.go
// (GetInterruptState, GetResumeContext: the targeted resume).
//
// # Paths
//
// eino's tools name files by absolute paths. A path inside the
// workspace's directory is used as it is; any other absolute path is taken
// from the workspace's root ("/src/a.go" is src/a.go beneath the root), as
// eino's own in-memory backend takes "/" for its root. Paths the backend
// returns are of the second form, so a permission rule's root-relative
// pattern (Edit(/src/**)) reads the same.
//
// # What it guarantees
//
//   - Read, Write, Edit and Execute run only through [toolbox.Toolbox.Call]
//     (Execute is helikon's Bash tool: the OS sandbox unless the toolbox
//     was opened otherwise): deny rules, guards, ask rules, allow rules,
//     the mode and the policy decide each call.
//   - LsInfo, GlobInfo and GrepRaw list and search only files a Read of
//     them would be allowed without asking: each file (and the directory
//     listed) is checked by the pipeline as a Read before its name or
//     content is returned; a file denied or asked about is left out.
//   - An approval is used for the question it answers only: the resumed
//     call goes through the whole pipeline again, and the answer applies
//     when the pipeline asks the same question (same tool, arguments and
//     reason). A resume that targets another interrupt, or carries no
//     answer, interrupts again.
//   - [Middleware] hands a denial, invalid arguments or a failing helikon
//     tool to the model as the tool's result ("error: ..."), instead of
//     ending the agent's run; interrupts pass through.
//
// # What it does not guarantee
//
// Write replaces an existing file (helikon's Write), where eino's contract
// says a write to an existing file fails. Streaming (StreamingShell) is not
// offered: helikon's process contract has landed (package process, and
// Bash's run_in_background with BashOutput in tool/bashtool), but
// [toolbox.Toolbox], which every call here goes through, builds neither a
// process table nor those tools yet, and a stream started around it would
// skip the permission pipeline; until it does, Execute returns the whole
// output. The answer comes from the
// application, which is trusted. Per session workspaces are the
// application's: it passes a session's toolbox in the context
// ([WithToolbox]); the backend neither opens nor closes toolboxes.
package einoadapter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/filesystem"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/toolbox"
)

// The checkpoint eino saves at an interrupt holds its Info, encoded with
// gob: the type is registered under a name of its own.
func init() { schema.RegisterName[*toolbox.Question]("helikon.toolbox.Question") }

// Limits of the listing and searching methods, which walk the workspace.
const (
	// maxWalk bounds the files GlobInfo and GrepRaw visit, so that a
	// pattern over a huge tree ends.
	maxWalk = 100_000
	// maxGrepFile is the largest file GrepRaw searches; larger files are
	// skipped, as a model rarely wants matches in them.
	maxGrepFile = 8 << 20
)

// Backend is a toolbox as eino's file system and shell backend.
type Backend struct {
	def *toolbox.Toolbox[struct{}]
}

var _ filesystem.ShellBackend = (*Backend)(nil)

type toolboxKey struct{}

// WithToolbox returns ctx whose calls run in tb instead of the toolbox
// given to [New]: one toolbox (one workspace) per eino session or user.
func WithToolbox(ctx context.Context, tb *toolbox.Toolbox[struct{}]) context.Context {
	return context.WithValue(ctx, toolboxKey{}, tb)
}

// New returns the backend over tb. tb should be opened with
// [toolbox.Options].DeferAsks, so that a call needing approval becomes an
// interrupt; without it such a call is denied (or asked through its
// Approver). tb must have Read, Write, Edit and Bash (its default tools).
func New(tb *toolbox.Toolbox[struct{}]) (*Backend, error) {
	if tb == nil {
		return nil, errors.New("einoadapter: New needs a toolbox (toolbox.New)")
	}
	for _, n := range []string{"Read", "Write", "Edit", bashtool.Name} {
		if _, ok := tb.Toolset().Lookup(n); !ok {
			return nil, fmt.Errorf("einoadapter: the toolbox has no %s tool: open it with Options.Tools nil or naming it", n)
		}
	}
	return &Backend{def: tb}, nil
}

func (b *Backend) toolbox(ctx context.Context) *toolbox.Toolbox[struct{}] {
	if t, ok := ctx.Value(toolboxKey{}).(*toolbox.Toolbox[struct{}]); ok && t != nil {
		return t
	}
	return b.def
}

// rel is an eino path as a path relative to tb's root ("." for the root).
func rel(tb *toolbox.Toolbox[struct{}], p string) string {
	dir := tb.Workspace().Dir()
	if p == dir {
		return "."
	}
	if r, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, "/")+"/"); ok {
		return path.Clean(r)
	}
	r := path.Clean("/" + p)
	if r == "/" {
		return "."
	}
	return r[1:]
}

// abs is a root-relative path as eino's tools name it.
func abs(r string) string { return path.Clean("/" + r) }

// call runs one helikon tool call, turning an ask into an eino interrupt
// and taking an answer from a targeted resume.
func (b *Backend) call(ctx context.Context, tool string, args any, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	tb := b.toolbox(ctx)
	callCtx := ctx
	if was, has, state := compose.GetInterruptState[string](ctx); was && has {
		var q toolbox.Question
		if err := json.Unmarshal([]byte(state), &q); err != nil {
			return fmt.Errorf("einoadapter: interrupt state: %w", err)
		}
		isTarget, hasAns, ans := compose.GetResumeContext[toolbox.Answer](ctx)
		if !isTarget || !hasAns {
			// Another interrupt is being resumed, or no answer came:
			// this one keeps waiting (compose/resume.go's guidance).
			return compose.StatefulInterrupt(ctx, &q, state)
		}
		callCtx = toolbox.Resume(ctx, q.Request(), ans)
	}
	res, err := tb.Call(callCtx, struct{}{}, tool, raw)
	var ask *toolbox.AskError
	switch {
	case errors.As(err, &ask):
		q := ask.Question()
		state, err := json.Marshal(q)
		if err != nil {
			return err
		}
		return compose.StatefulInterrupt(ctx, &q, string(state))
	case err != nil:
		return err
	}
	return json.Unmarshal(res, out)
}

// Read implements filesystem.Backend with helikon's Read (eino's offset is
// 0-based, helikon's 1-based).
func (b *Backend) Read(ctx context.Context, req *filesystem.ReadRequest) (string, error) {
	tb := b.toolbox(ctx)
	var out filetool.ReadResult
	if err := b.call(ctx, "Read", filetool.ReadArgs{Path: rel(tb, req.FilePath), Offset: max(req.Offset, 0) + 1, Limit: max(req.Limit, 0)}, &out); err != nil {
		return "", err
	}
	return out.Content, nil
}

// Write implements filesystem.Backend with helikon's Write.
func (b *Backend) Write(ctx context.Context, req *filesystem.WriteRequest) error {
	var out filetool.WriteResult
	return b.call(ctx, "Write", filetool.WriteArgs{Path: rel(b.toolbox(ctx), req.FilePath), Content: req.Content}, &out)
}

// Edit implements filesystem.Backend with helikon's Edit.
func (b *Backend) Edit(ctx context.Context, req *filesystem.EditRequest) error {
	var out filetool.EditResult
	return b.call(ctx, "Edit", filetool.EditArgs{Path: rel(b.toolbox(ctx), req.FilePath), OldString: req.OldString, NewString: req.NewString, ReplaceAll: req.ReplaceAll}, &out)
}

// Execute implements filesystem.ShellBackend with helikon's Bash: standard
// output, then standard error.
func (b *Backend) Execute(ctx context.Context, req *filesystem.ExecuteRequest) (*filesystem.ExecuteResponse, error) {
	var out bashtool.Output
	if err := b.call(ctx, bashtool.Name, bashtool.Args{Command: req.Command}, &out); err != nil {
		return nil, err
	}
	return &filesystem.ExecuteResponse{Output: out.Stdout + out.Stderr, ExitCode: out.ExitCode, Truncated: out.Truncated}, nil
}

// readable reports whether the pipeline allows a Read of r without asking.
func readable(ctx context.Context, tb *toolbox.Toolbox[struct{}], r string) bool {
	t, _ := tb.Toolset().Lookup("Read")
	args, err := json.Marshal(filetool.ReadArgs{Path: r})
	if err != nil {
		return false
	}
	rc := helikon.NewRunContext(struct{}{}, &helikon.RunConfig{Mode: tb.Mode()})
	_, _, err = helikon.CheckCall(ctx, rc, tb.Permissions(), t, args)
	return err == nil
}

// LsInfo implements filesystem.Backend: the entries of a directory a Read
// may see.
func (b *Backend) LsInfo(ctx context.Context, req *filesystem.LsInfoRequest) ([]filesystem.FileInfo, error) {
	tb := b.toolbox(ctx)
	dir := rel(tb, req.Path)
	if !readable(ctx, tb, dir) {
		return nil, helikon.Denied("%s may not be read: a rule or the policy stops a Read of it", abs(dir))
	}
	ents, err := tb.Workspace().ReadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	var infos []filesystem.FileInfo
	for _, e := range ents {
		r := path.Join(dir, e.Name())
		if readable(ctx, tb, r) {
			infos = append(infos, filesystem.FileInfo{Path: abs(r)})
		}
	}
	return infos, nil
}

// walk calls fn with each regular file beneath dir that a Read may see, at
// most maxWalk files; fn returning false stops it.
func walk(ctx context.Context, tb *toolbox.Toolbox[struct{}], dir string, fn func(r string) bool) error {
	if !readable(ctx, tb, dir) {
		return helikon.Denied("%s may not be read: a rule or the policy stops a Read of it", abs(dir))
	}
	seen := 0
	stack := []string{dir}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := tb.Workspace().ReadDir(ctx, d)
		if err != nil {
			continue // vanished or unreadable: not listed
		}
		for _, e := range ents {
			r := path.Join(d, e.Name())
			if !readable(ctx, tb, r) {
				continue
			}
			switch {
			case e.IsDir():
				stack = append(stack, r)
			case e.Type().IsRegular():
				if seen++; seen > maxWalk || !fn(r) {
					return nil
				}
			}
		}
	}
	return nil
}

// GlobInfo implements filesystem.Backend: the files beneath Path whose
// path relative to it matches Pattern (doublestar syntax: ** crosses
// directories).
func (b *Backend) GlobInfo(ctx context.Context, req *filesystem.GlobInfoRequest) ([]filesystem.FileInfo, error) {
	if !doublestar.ValidatePattern(req.Pattern) {
		return nil, helikon.InvalidArgs(fmt.Sprintf("the glob pattern %q is not valid", req.Pattern))
	}
	tb := b.toolbox(ctx)
	base := rel(tb, req.Path)
	var infos []filesystem.FileInfo
	err := walk(ctx, tb, base, func(r string) bool {
		sub := strings.TrimPrefix(r, base+"/")
		if base == "." {
			sub = r
		}
		if ok, _ := doublestar.Match(strings.TrimPrefix(req.Pattern, "/"), sub); ok {
			infos = append(infos, filesystem.FileInfo{Path: abs(r)})
		}
		return true
	})
	return infos, err
}

// GrepRaw implements filesystem.Backend: the lines containing Pattern (a
// literal string) of the files beneath Path a Read may see, filtered by
// Glob on their base name (or path, with a slash in it).
func (b *Backend) GrepRaw(ctx context.Context, req *filesystem.GrepRequest) ([]filesystem.GrepMatch, error) {
	if req.Glob != "" && !doublestar.ValidatePattern(req.Glob) {
		return nil, helikon.InvalidArgs(fmt.Sprintf("the glob pattern %q is not valid", req.Glob))
	}
	tb := b.toolbox(ctx)
	var matches []filesystem.GrepMatch
	err := walk(ctx, tb, rel(tb, req.Path), func(r string) bool {
		if req.Glob != "" {
			name := path.Base(r)
			if strings.Contains(req.Glob, "/") {
				name = r
			}
			if ok, _ := doublestar.Match(strings.TrimPrefix(req.Glob, "/"), name); !ok {
				return true
			}
		}
		matches = append(matches, grepFile(ctx, tb, r, req.Pattern)...)
		return true
	})
	return matches, err
}

// grepFile returns the lines of r containing pattern; a file that cannot
// be read, or is larger than maxGrepFile, has none.
func grepFile(ctx context.Context, tb *toolbox.Toolbox[struct{}], r, pattern string) []filesystem.GrepMatch {
	f, err := tb.Workspace().Open(ctx, r)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxGrepFile {
		return nil
	}
	var out []filesystem.GrepMatch
	sc := bufio.NewScanner(io.LimitReader(f, maxGrepFile))
	sc.Buffer(make([]byte, 64<<10), maxGrepFile)
	for n := 1; sc.Scan(); n++ {
		if line := sc.Text(); strings.Contains(line, pattern) {
			out = append(out, filesystem.GrepMatch{Path: abs(r), Line: n, Content: line})
		}
	}
	return out
}

// Middleware returns the agent middleware that hands helikon's tool errors
// (a denial, invalid arguments, a tool's failure) to the model as the
// tool's result, "error: " and the message, instead of ending the run:
// the model reads why and can work around it. Interrupts and errors that
// are not helikon's pass through.
func Middleware() adk.AgentMiddleware {
	return adk.AgentMiddleware{WrapToolCall: compose.ToolMiddleware{
		Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
				out, err := next(ctx, in)
				if err == nil {
					return out, nil
				}
				if _, ok := compose.IsInterruptRerunError(err); ok {
					return nil, err
				}
				if h := helikonError(err); h != nil {
					return &compose.ToolOutput{Result: "error: " + h.Error()}, nil
				}
				return nil, err
			}
		},
	}}
}

// helikonError returns the helikon tool error in err's chain (eino's tool
// wrapper prefixes its own words, which the model need not read), or nil.
func helikonError(err error) error {
	var d *helikon.DeniedError
	var ia *helikon.InvalidArgsError
	var o *helikon.OtherError
	switch {
	case errors.As(err, &d):
		return d
	case errors.As(err, &ia):
		return ia
	case errors.As(err, &o):
		return o
	}
	return nil
}
