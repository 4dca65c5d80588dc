package helikon

import "path"

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
}

// Command is one simple command a shell tool would run.
type Command struct {
	// Args is the argument vector with quoting removed. Args[0] is the
	// program as written, which may be a path such as /bin/rm. A word the
	// shell would expand at run time is kept as written (for example $HOME).
	Args []string
}

// Program returns the program name: the last element of Args[0], so that
// /bin/rm and ./rm are both "rm". It returns "" for an empty command.
func (c Command) Program() string {
	if len(c.Args) == 0 {
		return ""
	}
	return path.Base(c.Args[0])
}
