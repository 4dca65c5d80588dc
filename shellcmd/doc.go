// Package shellcmd finds the programs a shell command line would run, before
// it runs, and matches them against allow and deny lists.
//
// [Analyze] parses the line with a real shell parser (mvdan.cc/sh/v3/syntax,
// bash syntax) and lists every simple command in it: each part of ;, &&, ||,
// pipes and &, subshells, $(...), backticks, process substitution, the
// bodies of if, for, while, case and functions, and trap actions. It looks
// through wrappers and lists both the wrapper and the program it runs: env
// (options and NAME=value), command, builtin, exec, nice, nohup, timeout,
// stdbuf, time (also time -- cmd, where bash skips the --), sudo, doas,
// pkexec, setsid, ionice, chroot, flock, unbuffer, watch, busybox, jobs -x,
// runuser -u, taskset, chrt, setarch (and linux32, linux64, ...), nsenter,
// unshare, setpriv, prlimit, fakeroot, the dynamic loader (ld.so,
// /lib64/ld-linux-x86-64.so.2, ld-musl-*.so.1), logsave, capsh (-- and -+
// run its shell, == and =+ capsh again), ssh-agent, strace (and a -o
// |command, which it runs with sh), dbus-run-session (and its
// --dbus-daemon), xargs and find -exec/-execdir/-ok/-okdir. Command strings
// given to sh -c, bash -c, dash -c, zsh -c (and the other Bourne-family
// shells, with their option clusters such as -oc NAME), su and runuser (-c
// and the shell arguments after the user, options anywhere, as GNU getopt
// permutes them), flock -c and watch, and here-documents fed to a shell
// (sudo -s, doas -s, pkexec and su without a command included), script -c,
// sg and newgrp, are parsed in
// turn, to [DefaultMaxDepth] levels. Quoting is removed as the
// shell removes it, so r""m, r\m, "rm", $'\x72m' and $'rm\c@x' are rm
// ($'...' is decoded as bash decodes it); a program given by path (/bin/rm, ./rm) is matched by its last element. Brace expansion is
// applied (bash) and also not applied (POSIX sh), and both readings are
// listed; likewise ((...)) is also read as dash reads it, as two nested
// subshells, so ((rm)) lists rm. Write targets of redirections, nested
// command strings included, are collected in [Analysis.Writes]. Where the
// line holds a backslash-newline, it is also read with those removed, as
// bash removes them before it tokenizes (the parser keeps some, such as
// "$\<newline>(cmd)" and a here-document line EO\<newline>F).
//
// git is listed with its global options removed (git help git lists them:
// -C, -c, --git-dir, --work-tree, --no-pager, -P, --literal-pathspecs, ...),
// so git -C . push is listed as git push and matches a pattern "git push";
// a dashed git-push is git push too. Where the subcommand may not be the
// command git runs, it is listed as a word computed at run time, which a
// deny pattern naming a git subcommand matches and an allow pattern does
// not: a name that is not one of git's own commands (it may be an alias,
// defined by git -c alias.p=push, GIT_CONFIG_COUNT/KEY/VALUE,
// GIT_CONFIG_PARAMETERS or an earlier git config alias.p push), and any
// subcommand under -c, --config-env or --exec-path=, or in a line that sets
// a GIT_CONFIG* variable or GIT_EXEC_PATH. git's own commands are the
// builtins of git 2.39 and the commands every installation ships, which an
// alias cannot hide; on an older git some of them (switch, restore) may be
// aliases.
//
// [Filter] matches the analysis against allow and deny lists with the
// semantics of the core's Bash(...) rules, failing closed as described
// there. [Analysis.Targets] hands the analysis to the core's permission
// pipeline.
//
// # What is guaranteed
//
// When [Analysis.Unresolved] is empty, every program the line can start by
// name, through the constructs and wrappers above, is in
// [Analysis.Commands]. When some program cannot be known statically the
// analysis says so in Unresolved instead of guessing, and a [Filter] with an
// allow list or a deny list then refuses the line (fail closed). Unresolved
// is set for the forms below, by kind:
//
//   - Programs not known statically: a name computed at run time ($CMD,
//     "$(echo rm)", `echo rm`, a glob, ~); eval, source and .; alias
//     definitions, hash -p, enable -f, fc, compgen -C, mapfile -C, let;
//     assignments to BASH_CMDS or BASH_ALIASES; BASH_FUNC_* functions
//     exported through env or sudo; programs under /proc or /dev (below).
//   - Shells whose commands are not in the line: a shell reading a pipe or
//     inherited standard input; fish, csh, pwsh and other languages this
//     package does not parse; an interactive shell reading its input.
//   - Wrappers: unknown options, or options computed at run time; a
//     wrapper under xargs whose program or options come from the input; a
//     $ in the command words of sudo -s or -i, which sudo leaves for the
//     shell; an env or sudo operand computed at run time that may or may
//     not be an assignment; SHELL set to anything but a plain path of sh or
//     bash (sudo -s, su -m and flock -c give their command to $SHELL), su
//     -s with another interpreter; ld.so --preload and --audit, fakeroot
//     --lib and --faked, which load code.
//   - Start-up files: BASH_ENV or ENV set to anything but a plain file
//     name; a --rcfile or --init-file (also -rcfile) computed at run time;
//     any of them, a script operand, a shell's < input or a PATH directory
//     that leads under /proc or /dev by any spelling (below).
//   - Text bash evaluates again: arithmetic, [[ -eq ]], ${a[i]}, ${s:i},
//     and the names given to read, printf -v, unset and [[ -v ]], where
//     the text is not known to be a number; non-numbers assigned to OPTIND,
//     RANDOM, SRANDOM, HISTCMD, BASHPID; single quotes bash does not take
//     for quotes ($(( '$(cmd)' )), a['$(cmd)'], and holding $ or ` in
//     ${x:-word}, :=, :+, :? within double quotes or a here-document);
//     $"..." (translated through a catalog the line may write); a value
//     declare, typeset, local or readonly may read as a compound array
//     assignment (a quoted (...) holding $, `, [, < or >, or a computed
//     value for an array variable); ${x@P}; an extended glob pattern
//     holding an expansion; a compgen or complete -W word list holding $
//     or `; a named descriptor {var}> whose name has a subscript;
//     assignments to PS0-PS4 or PROMPT_COMMAND.
//   - Options that make bash rewrite or re-read a line: history expansion
//     turned on (set -H, set -o history or histexpand, shopt -so, the same
//     on a shell's command line, SHELLOPTS), set -k, shopt -u
//     interactive_comments, set or shopt options computed at run time.
//   - The character set: LC_ALL, LC_CTYPE or LANG set, in any form, to
//     anything but C, POSIX or a UTF-8 locale, and LOCPATH set at all
//     (below).
//   - A line that does not parse, or nests deeper than the limit.
//
// Names under /proc and /dev reach a process's own program and descriptors
// (/proc/self/exe is whatever program opens it: the shell in a sandbox, the
// tool's own process on a direct exec path; /dev/stdin, /dev/fd/3,
// /proc/thread-self/root/dev/stdin hold text the line supplies), so they are
// recognised by where they lead, not by spelling: an absolute name is
// cleaned and refused under /proc or /dev (a shell's script or start-up file
// may be /dev/null; a name of the standard input spelt plainly is analysed
// as the shell's input); a name with .. after a directory name is refused,
// as the kernel resolves a/.. through a symbolic link a; a relative name is
// resolved against [Options.Dir] and every absolute directory a cd or pushd
// in the line names, and refused when the directory is not known: after a cd
// or pushd to a computed directory, ~, -, /, /proc, /dev or through .. after
// a directory name (a cd .. may reach /, from where names into proc or dev
// are refused), after CDPATH is set, and after a wrapper that changes
// directory (env -C, sudo -D, -R or -i, su -, chroot, nsenter -w, unshare
// --wd, capsh --chroot, find -execdir). This is decided over the whole line,
// so a cd after the name in the source (run first in a loop) counts. With
// Options.Dir unset, a relative name that goes up with .. is refused and one
// that does not is taken to stay outside /proc and /dev. Why the directory
// is not known is also reported on its own ([Analysis].DirUnknown), without
// making the line unresolved, for callers that judge the commands'
// arguments relative to where they run (the policy-file guard).
//
// bash splits its input into characters by the character set of its locale
// (LC_ALL, else LC_CTYPE, else LANG), and reads the variables again as soon
// as the line assigns them. In GBK, BIG5, SJIS and the like a backslash or
// backquote may be the second byte of a character, so \ after the UTF-8
// bytes of 中 is no escape there and echo 中\; rm x runs rm. The analysis
// reads text as UTF-8 or C do, so it refuses a line that selects another
// character set, and the backends pass no such locale and no LOCPATH to the
// shell (backend.ScrubEnv). LANGUAGE is not refused: it picks message
// catalogs, never the character set.
//
// # What is NOT guaranteed
//
// Matching is by program name, so it cannot stop a program that runs other
// programs on its own: such a code runner is listed under its own name, and
// what it runs is not. An allow list must name only programs that do not run
// others, and a deny list of a program is bypassed by any code runner that
// is not denied too. Code runners include interpreters (python, perl, ruby,
// node, php, lua), awk (system(), print | "cmd"), GNU sed (the e command
// and s///e), tar (--to-command, -I, --checkpoint-action=exec), git
// (aliases, -c core.pager=, core.sshCommand, hooks), make, npm and other
// package managers (scripts), ssh (the remote command, ProxyCommand),
// rsync -e, pagers and editors (less, man, vim: shell escapes), debuggers
// (gdb), terminal multiplexers (screen, tmux), and a
// script the command wrote earlier. The contents of script files are not
// read: bash ./x.sh and ./x.sh are listed as bash and x.sh, nor is a
// symbolic link the command or an earlier one made followed (ln -s
// /proc/self/exe x; ./x, like a script it wrote, runs what the analysis does
// not see), and neither are start-up files named
// by a plain BASH_ENV, ENV or --rcfile value, those an interactive or login
// shell reads by itself (~/.bashrc, ~/.profile, /etc/profile), nor a
// loadable builtin that enable NAME finds on BASH_LOADABLES_PATH. The
// analysis assumes that $SHELL, when the line does not set it, and the
// target user's login shell for su, are Bourne shells.
// The locale that a login shell's start-up files select (/etc/profile, for
// su -, sudo -i and bash -l) is assumed to be UTF-8 or C, as is every
// system locale whose name says UTF-8.
// Variables that make a program load or run code (LD_PRELOAD, PYTHONSTARTUP,
// GIT_SSH_COMMAND, EDITOR, VISUAL, SUDO_EDITOR, PAGER, ...) are not
// modelled. PATH, which the line may change, decides which file a name
// runs; a deny list of names
// does not stop a copy or link of a program under another name. Wrappers not
// listed above (systemd-run, parallel, numactl, ...) are listed as programs
// without looking inside, and ld.so --argv0 NAME and exec -a NAME, which
// change only what the program is told its name is, are listed under the
// program's file name (a multi-call binary such as busybox then runs NAME).
// Leading-argument patterns compare the first words only, of git after its
// global options: a program's own options before its subcommand (npm
// --prefix x publish) are compared as written. Write targets are only those
// of redirections; programs that write files themselves (tee, cp, dd,
// logsave's log, strace -o) are not reflected in [Analysis.Writes].
// Arithmetic on a variable that is assigned a number in the line but read
// before that assignment takes its value from the environment. Command
// strings for zsh are parsed with the parser's experimental zsh support, and
// any "(" right after a pattern character, and zsh's --NAME options, are
// refused there rather than analysed. For sh -c strings bash syntax is assumed, with the POSIX
// readings above and two more where sh may be dash: in command strings of
// sh, dash, ash, posh, watch and flock -c that hold $'...', $"..." or [[,
// dash's reading (a $ followed by a quoted string, [[ a command) is
// analysed too, and
// refused when it does not parse as POSIX sh; and everywhere the words after
// a &> redirection are also read as the command dash runs there. Other
// dash-only differences are not modelled, and the top-level line is not
// given dash's $'...' reading (the Bash tool runs it with bash where bash is
// installed).
package shellcmd
