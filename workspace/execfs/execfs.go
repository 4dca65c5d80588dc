package execfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"path"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/paigasus/helikon/workspace"
)

// ErrRace is wrapped by the error of an operation that found the path
// changing under it while it resolved it (a directory swapped for a link,
// a component renamed away): it did nothing, and may be tried again.
var ErrRace = errors.New("the path changed while it was being resolved")

// Defaults of [Options].
const (
	defaultShell     = "/bin/sh"
	defaultMaxArg    = 128<<10 - 1
	defaultMaxArgv   = 1 << 20
	defaultChunkSize = 1 << 20
)

// readBlock is the dd block size reads are counted in; ChunkSize is
// rounded up to a multiple of it.
const readBlock = 64 << 10

// maxListing caps the reply of one ReadDir, in bytes before any encoding:
// about 100,000 entries with short names.
const maxListing = 16 << 20

// replySlack is what a reply may hold beyond its payload: the trailer, a
// stat line and a path.
const replySlack = 2*workspace.MaxPathBytes + 512

// FS is a [workspace.FS] whose operations run as scripts in the
// workspace, through a [Runner]. It is safe for concurrent use.
type FS struct {
	r       Runner
	opts    Options
	dir     string // the root as given (commands see it so)
	phys    string // the root with links resolved, as getcwd reports it
	scripts map[string]string
	b64     bool // base64 encodes text-only replies and argument data
	locks   [64]sync.Mutex
	seed    maphash.Seed
}

var (
	_ workspace.FS           = (*FS)(nil)
	_ workspace.ExpectWriter = (*FS)(nil)
)

// New returns the file tree rooted at dir (an absolute path in the
// workspace) whose operations run through r. It runs one exec, to resolve
// dir's links and check that it is a directory; a dir that does not exist
// is an error wrapping [workspace.ErrGone].
func New(ctx context.Context, r Runner, dir string, opts *Options) (*FS, error) {
	if r == nil {
		return nil, errors.New("execfs: nil Runner")
	}
	if !path.IsAbs(dir) || strings.IndexByte(dir, 0) >= 0 {
		return nil, fmt.Errorf("execfs: root %q: want an absolute path", dir)
	}
	f := &FS{r: r, dir: path.Clean(dir), seed: maphash.MakeSeed()}
	if opts != nil {
		f.opts = *opts
	}
	o := &f.opts
	if o.Shell == "" {
		o.Shell = defaultShell
	}
	if o.MaxArgBytes <= 0 {
		o.MaxArgBytes = defaultMaxArg
	}
	if o.MaxArgvBytes <= 0 {
		o.MaxArgvBytes = defaultMaxArgv
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = defaultChunkSize
	}
	o.ChunkSize = (o.ChunkSize + readBlock - 1) / readBlock * readBlock
	if err := f.build(); err != nil {
		return nil, err
	}
	f.phys = f.dir // scriptRoot resolves it
	if o.Resolved && !o.NoStdin && !o.TextOnly {
		return f, nil
	}
	out, err := f.run(ctx, "root", nil, nil, workspace.MaxPathBytes+8)
	if err != nil {
		return nil, f.pathErr("open root", dir, err)
	}
	i := bytes.LastIndexByte(out, '\n')
	if i < 0 {
		return nil, fmt.Errorf("execfs: malformed root reply %.80q", out)
	}
	f.phys = string(out[:i])
	if !path.IsAbs(f.phys) {
		return nil, fmt.Errorf("execfs: root %s resolves to %q, not an absolute path", dir, f.phys)
	}
	if string(out[i+1:]) == "b64" && (o.TextOnly || o.NoStdin) {
		f.b64 = true
		if err := f.build(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// build assembles the scripts. For a text-only runner the whole reply,
// trailer included, goes through base64 when the workspace has it (4
// characters per 3 bytes) or od (49 per 16); a reply cut short still has
// no trailer.
func (f *FS) build() error {
	tail := "\n"
	if f.opts.TextOnly {
		tail = "\n} | od -An -v -tx1\n"
		if f.b64 {
			tail = "\n} | base64\n"
		}
	}
	f.scripts = make(map[string]string)
	for name, body := range map[string]string{
		"root": scriptRoot, "stat": scriptStat, "read": scriptRead, "readdir": scriptReadDir,
		"write": scriptWrite, "abort": scriptAbort, "remove": scriptRemove, "rename": scriptRename,
	} {
		s := prelude + body
		if f.opts.TextOnly {
			s = "{\n" + s
		}
		f.scripts[name] = s + tail
		if len(f.scripts[name]) > f.opts.MaxArgBytes {
			return fmt.Errorf("execfs: the %s script (%d bytes) is over MaxArgBytes (%d)", name, len(s), f.opts.MaxArgBytes)
		}
	}
	return nil
}

// Dir is the root as it was given to [New].
func (f *FS) Dir() string { return f.dir }

// rel converts a caller's path into one relative to the root with
// [workspace.Rel], the lexical half of confinement; an absolute path may
// name the root as given or as its links resolve. The scripts resolve the
// rest.
func (f *FS) rel(name string) (string, error) {
	if f.opts.TextOnly && !utf8.ValidString(name) {
		return "", fmt.Errorf("path is not valid UTF-8, which this workspace's exec cannot carry: %w", fs.ErrInvalid)
	}
	rel, err := workspace.Rel(f.dir, name)
	if errors.Is(err, workspace.ErrOutside) && f.phys != f.dir && path.IsAbs(name) {
		rel, err = workspace.Rel(f.phys, name)
	}
	return rel, err
}

// run runs the script name with args after the root, and returns the
// payload of a reply whose trailer says ok. maxOut is the largest payload
// expected.
//
// The trailer carries a fresh nonce, which a runner that takes standard
// input gets as the first line of it, before the data: not in the argument
// vector, which any process of the workspace reads in /proc/PID/cmdline,
// nor in the environment, which one of the same user reads in
// /proc/PID/environ, and either could then forge a reply. It costs no
// round trip: the input travels with the exec. A runner without standard
// input (forkd) gets it as an argument (see the package doc).
func (f *FS) run(ctx context.Context, name string, args []string, stdin []byte, maxOut int64) ([]byte, error) {
	nonce := newNonce()
	nonceArg := nonce
	if !f.opts.NoStdin {
		nonceArg = "-"
		in := make([]byte, 0, len(nonce)+1+len(stdin))
		stdin = append(append(append(in, nonce...), '\n'), stdin...)
	}
	argv := make([]string, 0, 6+len(args))
	argv = append(argv, f.opts.Shell, "-c", f.scripts[name], "execfs", f.phys, nonceArg)
	argv = append(argv, args...)
	capOut := maxOut + 64
	if f.opts.TextOnly {
		capOut = capOut*4 + 64 // od: 49 characters per 16 bytes
	}
	stdout, stderr, code, err := f.r.Exec(ctx, argv, stdin, capOut)
	if err != nil {
		if errors.Is(err, workspace.ErrGone) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("exec in the workspace: %w", err)
	}
	if f.opts.TextOnly {
		decode := decodeHex
		if f.b64 {
			decode = decodeBase64
		}
		if stdout, err = decode(stdout); err != nil {
			return nil, fmt.Errorf("reply of the workspace's shell: %w (%s)", err, quoteStderr(stderr))
		}
	}
	marker := "\n" + nonce + " "
	i := bytes.LastIndex(stdout, []byte(marker))
	if i < 0 {
		if int64(len(stdout)) >= capOut {
			return nil, fmt.Errorf("reply of the workspace's shell is over %d bytes: %w", maxOut, workspace.ErrTooLarge)
		}
		return nil, fmt.Errorf("no reply from the workspace's shell (%s exited %d): %s", f.opts.Shell, code, quoteStderr(stderr))
	}
	status := string(stdout[i+len(marker):])
	payload := stdout[:i]
	if status == "ok\n" {
		return payload, nil
	}
	code2, ok := strings.CutPrefix(status, "E ")
	if !ok || !strings.HasSuffix(code2, "\n") {
		return nil, fmt.Errorf("malformed reply from the workspace's shell: %q", status)
	}
	if code2 == "elsewhere\n" {
		real := string(payload)
		if real == "" {
			real = "."
		}
		return nil, &workspace.UnexpectedPathError{Path: real}
	}
	return nil, codeErr(strings.TrimSuffix(code2, "\n"), stderr)
}

// codeErr maps a script's error code to the error callers match.
func codeErr(code string, stderr []byte) error {
	switch code {
	case "gone":
		return fmt.Errorf("the root directory is missing: %w", workspace.ErrGone)
	case "outside":
		return fmt.Errorf("\"..\" leads above the root: %w", workspace.ErrOutside)
	case "abslink":
		return fmt.Errorf("an absolute symbolic link (only relative links inside the root are followed): %w", workspace.ErrOutside)
	case "noent":
		return fs.ErrNotExist
	case "notdir":
		return syscall.ENOTDIR
	case "loop":
		return fmt.Errorf("more than %d symbolic links: %w", maxSymlinks, syscall.ELOOP)
	case "toolong":
		return fmt.Errorf("too many components and \"..\" steps to resolve: %w", syscall.ENAMETOOLONG)
	case "notreg":
		return workspace.ErrNotRegular
	case "changed":
		return workspace.ErrChanged
	case "race":
		return ErrRace
	case "notempty":
		return syscall.ENOTEMPTY
	case "io":
		return errors.New(quoteStderr(stderr))
	}
	return fmt.Errorf("unknown error code %q from the workspace's shell: %s", code, quoteStderr(stderr))
}

// maxSymlinks is the links one resolution follows, os.Root's limit
// (POSIX's _POSIX_SYMLOOP_MAX); the scripts hold the same number.
const maxSymlinks = 8

// quoteStderr is the first line or so of a tool's complaint, for an error
// message.
func quoteStderr(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 512 {
		s = s[:512] + "..."
	}
	if s == "" {
		return "no message"
	}
	return s
}

func (f *FS) pathErr(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: "execfs " + op, Path: name, Err: err}
}

// lock serialises writes of one path within this FS.
func (f *FS) lock(rel string) func() {
	m := &f.locks[maphash.String(f.seed, path.Clean(rel))%uint64(len(f.locks))]
	m.Lock()
	return m.Unlock
}

func newNonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// decodeBase64 decodes base64 output, lines of 76 characters or so.
func decodeBase64(b []byte) ([]byte, error) {
	b = bytes.Join(bytes.Fields(b), nil)
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(out, b)
	if err != nil {
		return nil, fmt.Errorf("not base64 output: %w", err)
	}
	return out[:n], nil
}

// decodeHex decodes od -An -tx1 output: hex byte pairs between white
// space.
func decodeHex(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b)/3)
	for _, w := range bytes.Fields(b) {
		if len(w) != 2 {
			return nil, fmt.Errorf("not od output: %q", w)
		}
		var v [1]byte
		if _, err := hex.Decode(v[:], w); err != nil {
			return nil, fmt.Errorf("not od output: %w", err)
		}
		out = append(out, v[0])
	}
	return out, nil
}
