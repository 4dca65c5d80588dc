package helikon

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
)

// Targets is what a tool call would touch, as reported by a [Targeter] before
// the call runs. Permission rules and guards are matched against it.
type Targets struct {
	// Paths are the files and directories the call reads or writes.
	Paths []PathTarget
	// Commands are the simple commands a shell tool would run, each with its
	// argument vector as the shell would pass it, wrappers (env, sudo, xargs,
	// sh -c …) already looked through.
	Commands []Command
	// Hosts are the network hosts the call would contact.
	Hosts []string
	// Unresolved, when not empty, says why the tool could not determine
	// everything the call would touch (a program named by a variable, eval,
	// an unparseable command). Deny rules with a pattern then match and allow
	// rules with a pattern do not: the pipeline fails closed.
	Unresolved string

	// decoded is the tool's own decoding of the arguments it reported these
	// targets for (see [Targets.WithDecoded]); a pointer, so that the
	// targets of the many tools that store none grow by one word only.
	decoded *decodedArgs
}

// decodedArgs is a value stored by [Targets.WithDecoded].
type decodedArgs struct {
	args json.RawMessage
	v    any
}

// WithDecoded returns a copy of t that carries v, the tool's own decoding of
// args, the arguments it reported t for. A tool whose [Targeter] validates
// and decodes the arguments to report them calls it, so that the decoded
// value reaches the call with the targets ([ToolContext.Targets]) and the
// tool does not validate and decode the same arguments a second time
// (package tool/functiontool does this for the tools built on it). Rules,
// guards and the [Policy] never see v.
func (t Targets) WithDecoded(args json.RawMessage, v any) Targets {
	t.decoded = &decodedArgs{args: args, v: v}
	return t
}

// Decoded returns the value given to [Targets.WithDecoded] when args are the
// same bytes it was given with, and false otherwise: when t is nil, carries
// no value, or was reported for other arguments (a tool invoked with other
// arguments than the ones checked). Only the tool that stored the value
// knows its type.
func (t *Targets) Decoded(args json.RawMessage) (any, bool) {
	if t == nil || t.decoded == nil || t.decoded.v == nil || !bytes.Equal(t.decoded.args, args) {
		return nil, false
	}
	return t.decoded.v, true
}

// Access says whether a path is read or written.
type Access int

const (
	// AccessRead marks a path the call only reads.
	AccessRead Access = iota
	// AccessWrite marks a path the call creates, changes or removes.
	AccessWrite
)

// PathTarget is one path a call touches.
type PathTarget struct {
	// Path is absolute and lexically clean.
	Path string
	// Root is the absolute sandbox root the path was resolved against, or ""
	// when there is none. Rule patterns are matched relative to it.
	Root string
	// Access says whether the path is read or written.
	Access Access
	// Computed marks a path computed at run time (> "$f"), reported as
	// written: a Write or Edit deny rule refuses it whatever its pattern.
	Computed bool
}

// Command is one simple command a shell tool would run.
type Command struct {
	// Args is the argument vector with quoting removed. Args[0] is the
	// program as written, which may be a path such as /bin/rm. A word the
	// shell would expand at run time is kept as written (for example $HOME).
	Args []string
	// Dynamic, when not nil, has one entry per element of Args: true for a
	// word computed at run time (git $sub), whose value cannot be known
	// before the command runs.
	Dynamic []bool
	// Dirs are the absolute directories the command may run in, when the
	// tool knows them: for a shell, its root and every directory a literal
	// cd or pushd on the line leads to (the same list for every command of
	// the line, since a loop or a function may run a command after a cd
	// written later). The policy-file guard resolves relative arguments
	// against each. Nil means the tool does not say, and relative arguments
	// are taken against [ProtectedFile].Dir.
	Dirs []string
	// DirUnknown, when not "", says why the command may also run in a
	// directory the tool cannot know before it runs (cd "$d", cd -, env -C).
	// A relative argument may then name any file whose path ends as it
	// does, and the policy-file guard refuses one that may name a
	// protected file.
	DirUnknown string
}

// Program returns the program name: the last element of Args[0], so that
// /bin/rm and ./rm are both "rm". It returns "" for an empty command.
func (c Command) Program() string {
	if len(c.Args) == 0 {
		return ""
	}
	return path.Base(c.Args[0])
}

// DeniedBy reports whether a deny pattern, the program name followed by
// leading arguments ("git", "push"), matches c. The program is compared by
// its last path element and without case (a case-insensitive file system
// runs rm for RM), and a word computed at run time at or before a compared
// position matches: a deny pattern fails closed.
func (c Command) DeniedBy(words []string) bool { return c.matchPattern(words, true) }

// AllowedBy reports whether an allow pattern (as for [Command.DeniedBy])
// matches c. Names compare exactly and a word computed at run time does not
// match: an allow pattern fails closed too.
func (c Command) AllowedBy(words []string) bool { return c.matchPattern(words, false) }

// matchPattern is DeniedBy (deny) or AllowedBy.
func (c Command) matchPattern(words []string, deny bool) bool {
	if len(words) == 0 || len(c.Args) == 0 {
		return false
	}
	prog, want := c.Program(), path.Base(words[0])
	if prog != want && !(deny && strings.EqualFold(prog, want)) {
		return false
	}
	shifted := false // a computed word earlier may have moved the arguments
	for i := 1; i < len(words); i++ {
		if i < len(c.Dynamic) && c.Dynamic[i] || shifted {
			return deny
		}
		if i >= len(c.Args) || c.Args[i] != words[i] {
			return false
		}
		shifted = i < len(c.Dynamic) && c.Dynamic[i]
	}
	return true
}
