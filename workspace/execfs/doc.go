// Package execfs is a [github.com/paigasus/helikon/workspace.FS]
// implemented by running commands inside a remote workspace: a container,
// a microVM or a pod reached only through its engine's exec call. The
// Docker (isolated mode), forkd and Kubernetes engines supply a [Runner];
// [New] turns it into the file tree the file tools act on, with the
// guarantees package workspace lists.
//
// Every operation is one exec of a fixed POSIX sh script whose paths and
// data are positional arguments ("$3"), never part of the script's text:
// no file name or content can become code, an option or several words.
// The script resolves the path inside the workspace and does the
// operation in the same exec, so a remote round trip (10-100 ms) is paid
// once. What each operation costs, in execs:
//
//   - Stat, ReadDir, Remove, Rename: 1.
//   - Open: 1, which also reads the first [Options].ChunkSize bytes (1 MiB
//     by default); a larger file costs 1 more per chunk read. An open File
//     holds at most one chunk in memory.
//   - WriteFile: 1. A runner that cannot pass standard input
//     ([Options].NoStdin) carries the data in arguments, and needs one exec
//     per [Options].MaxArgvBytes of encoded data (base64 where the
//     workspace has it, else printf escapes: 4/3 of the data's size, and
//     up to 5 times for binary data with escapes).
//   - UpdateFile: 2 (the read and the write), or more as Open and
//     WriteFile for large files. An update cannot take fewer: its
//     function runs on this side, on the content the read brought back.
//   - WriteFileExpect and UpdateFileExpect
//     ([github.com/paigasus/helikon/workspace.ExpectWriter]): as WriteFile
//     and UpdateFile; the comparison of the resolved path with the
//     expected ones runs in the same exec.
//   - New: 1, to resolve the root's own links and look for base64.
//
// # What is guaranteed
//
//   - Confinement as package fsroot has it on this machine with os.Root,
//     checked inside the workspace: a path is resolved component by
//     component from the root, following relative links only while they
//     stay inside; absolute links are refused even when they point inside
//     (as os.Root refuses them), as are ".." above the root, more than 8
//     links (_POSIX_SYMLOOP_MAX) and paths over 4096 bytes (PATH_MAX), with
//     errors matching [workspace.ErrOutside], syscall.ELOOP and
//     [fs.ErrInvalid]. A component after a file is syscall.ENOTDIR; a
//     missing file [fs.ErrNotExist]. Links that a command in the workspace
//     created pointing at its own "/" lead nowhere. A differential fuzz
//     test holds the scripts' resolution to package fsroot's on trees of
//     links.
//   - After resolving, the script changes into the directory the
//     operation acts in and checks, with the kernel's getcwd (pwd -P in a
//     child process), that it is the resolved directory inside the root;
//     every later step names files relative to it. A directory swapped
//     for a link out of the root between the resolution and the operation
//     is refused with an error wrapping [ErrRace] (tested with a process
//     swapping one atomically while operations run).
//   - Open, UpdateFile and a write over an existing path look at the
//     file's type first: a directory, FIFO, device or socket is refused
//     with [workspace.ErrNotRegular] and never opened, so nothing blocks.
//   - WriteFile and UpdateFile write a temporary file
//     (".NAME.helikon-HEX.tmp", created exclusively, 0600 when it replaces
//     a file) in the target's directory and rename it over the target (mv
//     -T, which never moves into a directory): a reader, or a writer killed
//     mid-way, sees the old content or the new, never a mix; a failed write
//     removes its temporary file (a write in several execs runs a clean-up
//     exec). Missing parents are created. An existing file keeps its
//     permission and sticky bits and, where chown allows it (as root, or
//     unchanged), its owner and group; set-user-ID and set-group-ID bits
//     are dropped. A link at the path is followed inside the root and its
//     target replaced; the link stays.
//   - UpdateFile compares, in the exec that renames and just before the
//     rename, the file's stat line (device, inode, size, mode, owner, link
//     count and the modification time in nanoseconds) with the one it
//     read, and fails with [workspace.ErrChanged] if they differ.
//     Reading a File past its first chunk checks the same before each
//     chunk: a file replaced or modified while it is read fails with
//     ErrChanged instead of mixing two contents.
//   - WriteFileExpect and UpdateFileExpect compare the resolved path with
//     the expected ones right after the walk, whole strings, never
//     patterns: before a parent directory is made or a byte written (in
//     every exec of a write in several), and for an update before the
//     content is read, so a file the caller did not expect is neither
//     changed nor read. The refusal names the resolved path
//     ([github.com/paigasus/helikon/workspace.UnexpectedPathError]). Every
//     update's write also expects the path its read resolved: a link
//     swapped in between is [workspace.ErrChanged].
//   - Writes of one path through one FS are serialised (by the name
//     given: two names for one file, or two FS values, are not; the last
//     writer wins, whole).
//   - A reply carries a trailer with a fresh random nonce: a reply cut
//     short by an output cap or a killed shell is an error, never a short
//     read or a false success, and no file content can forge the trailer.
//     A runner that takes standard input gets the nonce as its first line,
//     read by the shell before the data, in the same exec: it is in no
//     argument vector (/proc/PID/cmdline, which every process reads) and
//     no environment (/proc/PID/environ, which a process of the same user
//     reads), so another process of the workspace cannot learn it there
//     to forge a reply.
//
// # What is not guaranteed
//
//   - The checks run in the workspace, as separate steps of a shell
//     script, not with openat relative to held descriptors as package
//     sandbox does: a concurrent process inside the workspace can win the
//     races between them. Swapping the last component for a link between
//     the type check and the open makes a read follow the link; swapping a
//     directory on the way of a write with missing parents can make mkdir
//     -p create empty directories elsewhere; moving the entered directory
//     out of the root after the getcwd check makes the operation happen
//     where it moved to; a FIFO swapped in for a file after the check
//     blocks the read until ctx ends. All of these reach only the
//     workspace's own file system (the container's or microVM's), which
//     that process can already read and write itself; never the host's.
//     Do not use execfs for a workspace whose commands see the host's file
//     system: package workspace/local (os.Root) is the one for that.
//   - The nonce is secret from processes of the workspace only as far as
//     the kernel keeps the script's memory and descriptors: one running as
//     the script's user may open the script's standard input through
//     /proc/PID/fd/0 and, if it reads before the shell does, take the
//     nonce line (the shell then never gets a nonce and the call fails as
//     "no reply", unless the thief also writes it back and then forges the
//     reply through /proc/PID/fd/1); one that may ptrace the shell reads
//     its memory. A runner without standard input ([Options].NoStdin,
//     forkd's exec API) carries the nonce as an argument, visible in
//     /proc/PID/cmdline: forkd runs every command as root in the microVM,
//     which can read any process's memory anyway, so no channel there
//     would keep it. In every case, what a forged reply reaches is the
//     workspace's own files, which that process could already change.
//     The record separator of ReadDir is another random value in stat's
//     arguments: knowing it forges only entries of a listing.
//   - Hard links are not seen: a hard link inside the root to a file
//     elsewhere in the workspace is read like any other file (a write
//     replaces the name and never writes through it).
//   - Durability after a power loss: the temporary file and the directory
//     are not fsynced (the workspaces are disposable; atomicity holds).
//   - Stale temporary files of a write killed with its exec (SIGKILL of
//     the shell, a destroyed connection mid-write) stay until removed; the
//     workspace's end removes them with it.
//   - The update check cannot see a change that keeps every field of the
//     stat line, and leaves a window of a few process starts (chmod, stat,
//     mv) between itself and the rename.
//   - Names that are not valid UTF-8 are refused with [fs.ErrInvalid] by
//     an FS whose runner is [Options].TextOnly (its transport is text).
//   - Access control lists and extended attributes are not carried over
//     to a rewritten file.
//
// # What the workspace must have
//
// A POSIX sh (dash, bash and busybox sh are tested, each with its own
// tools: the busybox world has nothing on its PATH but busybox's applets)
// and cat, chmod, chown, dd (with iflag=fullblock), ls, mkdir, mv (with
// -T), pwd, readlink, rm, rmdir and stat (with -c, %y in nanoseconds as
// GNU and busybox print it), plus od or base64 for a [Options].TextOnly
// runner. busybox 1.35 and GNU coreutils have all of them.
package execfs
