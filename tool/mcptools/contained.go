package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/shell"

	"github.com/paigasus/helikon/backend"
)

// ContainedOptions configures [Contained]. The zero value passes no extra
// variables and sends the server's stderr to this process's stderr.
type ContainedOptions struct {
	// Env names variables of this process's environment passed to the
	// server on top of the backend's allowlist (see [backend.Request].Env).
	Env []string
	// SetEnv sets variables in the server's environment (NAME=value).
	SetEnv []string
	// Stderr receives the server's standard error; nil means os.Stderr.
	Stderr io.Writer
	// Limits override the backend's resource limits; nil keeps them.
	Limits *backend.ResourceLimits
}

// closeGrace is how long a contained server has to exit after its input
// is closed before it is killed (the SDK's CommandTransport waits 5 s; a
// server in the sandbox has nothing to flush outside it).
const closeGrace = 2 * time.Second

// ContainedCommand is [Contained] with the command given as a command line,
// split as [Command] splits it (quotes, backslashes, $VAR from this
// process's environment, which the server itself does not get). It is the
// contained counterpart of [Command] for an SDK's MCP tool source:
//
//	sb, err := ossandbox.New(root, &ossandbox.Options{Timeout: backend.MaxLifetime})
//	// ... fail closed when err wraps backend.ErrUnavailable
//	src, err := mcptools.Connect[C](ctx, mcptools.ContainedCommand(sb, "npx -y SERVER", nil), nil)
//
// A command line that does not split fails at the first connection.
func ContainedCommand(b backend.Backend, cmdline string, opts *ContainedOptions) Dialer {
	argv, err := shell.Fields(cmdline, nil)
	if err != nil {
		return func() (mcp.Transport, error) {
			return nil, fmt.Errorf("mcp server command %q: %w", cmdline, err)
		}
	}
	return Contained(b, argv, opts)
}

// Contained returns a Dialer that runs argv (a program and its arguments,
// no shell) with b, speaking MCP over the command's standard input and
// output. With the OS sandbox (backend/ossandbox) the server is contained
// as any command of that backend: it reads and writes beneath the
// backend's root only, sees none of the caller's home or credentials, gets
// only the allowlisted environment, has no network unless the backend
// allows it, and everything it starts dies with it. The command runs as
// long as the backend's timeout allows: give the backend one as long as
// the server should live. Closing the connection closes the server's
// input, waits briefly for it to exit, then kills it and its descendants.
//
// Each connection attempt starts a new command; b must be able to connect
// the command's streams to files ([backend.Request].Stdin, Stdout).
func Contained(b backend.Backend, argv []string, opts *ContainedOptions) Dialer {
	var o ContainedOptions
	if opts != nil {
		o = *opts
	}
	return func() (mcp.Transport, error) {
		if len(argv) == 0 {
			return nil, errors.New("mcp server command is empty")
		}
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, err
		}
		stderr := o.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		ctx, cancel := context.WithCancel(context.Background())
		p := &containedProc{in: inW, out: outR, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(p.done)
			res, err := b.Run(ctx, &backend.Request{Argv: argv, Stdin: inR, Stdout: outW, Stderr: stderr, Env: o.Env, SetEnv: o.SetEnv, Limits: o.Limits})
			inR.Close()
			outW.Close()
			switch {
			case err != nil:
				p.err = fmt.Errorf("the contained mcp server %q did not run: %w", argv[0], err)
			case res.TimedOut:
				p.err = fmt.Errorf("the contained mcp server %q reached the backend's timeout and was killed", argv[0])
			}
		}()
		return &mcp.IOTransport{Reader: p, Writer: p.writer()}, nil
	}
}

// containedProc is the server's output as the transport's reader; its
// Close ends the server.
type containedProc struct {
	in     *os.File
	out    *os.File
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
	once   sync.Once
}

// Read reads the server's output. At its end it reports why the server
// could not run, when it could not (the sandbox was unavailable, say),
// rather than a bare end of file.
func (p *containedProc) Read(b []byte) (int, error) {
	n, err := p.out.Read(b)
	if errors.Is(err, io.EOF) {
		<-p.done
		if p.err != nil {
			return n, p.err
		}
	}
	return n, err
}

// Close closes the server's input, gives it closeGrace to exit, then
// kills it (and, through the backend, everything it started).
func (p *containedProc) Close() error {
	p.once.Do(func() {
		p.in.Close()
		select {
		case <-p.done:
		case <-time.After(closeGrace):
		}
		p.cancel()
		<-p.done
		p.out.Close()
	})
	return nil
}

// writer returns the server's input as the transport's writer; closing it
// is left to the reader's Close, which the transport calls first.
func (p *containedProc) writer() io.WriteCloser { return containedInput{p} }

type containedInput struct{ p *containedProc }

func (w containedInput) Write(b []byte) (int, error) { return w.p.in.Write(b) }
func (w containedInput) Close() error                { return w.p.Close() }
