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
// unshare, xargs and find -exec/-execdir/-ok/-okdir. Command strings
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
// [Policy] matches the analysis against allow and deny lists with the
// semantics of the core's Bash(...) rules, failing closed as described
// there. [Analysis.Targets] hands the analysis to the core's permission
// pipeline.
//
// # What is guaranteed
//
// When [Analysis.Unresolved] is empty, every program the line can start by
// name, through the constructs and wrappers above, is in
// [Analysis.Commands]. When some program cannot be known statically the
// analysis says so in Unresolved instead of guessing, and a [Policy] with an
// allow list or a deny list then refuses the line (fail closed). Unresolved
// is set for: a program name computed at run time ($CMD, "$(echo rm)",
// `echo rm`, a glob, ~); eval, source and .; alias definitions, hash -p,
// enable -f, fc, compgen -C, mapfile -C, let; a shell reading its commands
// from a pipe or inherited standard input; shells with a language this
// package does not parse (fish, csh, pwsh, ...); unknown options of a
// wrapper, or wrapper options computed at run time; a wrapper under xargs
// whose program or options come from the input; assignments to PS0-PS4 or
// PROMPT_COMMAND; assignments to BASH_CMDS or BASH_ALIASES (like hash -p
// and alias); a named descriptor {var}> whose name has a subscript; a $ in
// the command words of sudo -s or -i, which sudo leaves for the shell;
// assignments to BASH_ENV or ENV (start-up files a shell
// expands and sources) of anything but a plain file name, or of /dev/stdin
// or a descriptor's file; BASH_FUNC_* functions exported through env or
// sudo; a --rcfile or --init-file (also written -rcfile, as bash reads long
// options with one dash) computed at run time or naming a descriptor's file,
// while /dev/stdin there is analysed like a shell's input; an env or sudo operand computed at run time that
// may or may not be an assignment; arithmetic, [[ -eq ]], ${a[i]}, ${s:i}, and the names
// given to read, printf -v, unset and [[ -v ]], where they could evaluate
// text not known to be a number (bash runs command substitutions found in
// array subscripts there); assignments of anything but a number to the
// variables bash itself makes integers (OPTIND, RANDOM, SRANDOM, HISTCMD,
// BASHPID), which evaluate what they are given the same way; single quotes
// where bash does not take them for quotes and expands what they enclose:
// in arithmetic ($(( '$(cmd)' )), a['$(cmd)']), and, holding $ or `, in
// ${x:-word}, :=, :+ and :? within double quotes or a here-document; $"..."
// (bash translates it through a message catalog the line may write, and
// expands the translation); a value that declare, typeset, local or
// readonly may read as a compound array assignment and expand again: a
// quoted (...) holding $, `, [, < or >, or a value computed at run time
// for a variable that is an array (-a, -A, made one anywhere in the line,
// or one of bash's own); ${x@P}; an
// extended glob pattern holding an expansion (@($(cmd)) runs cmd, in
// [[ == ]] even without shopt -s extglob, and the parser keeps the pattern
// as raw text); options that make bash rewrite or re-read a line before it
// runs: history expansion turned on (set -H, set -o history or histexpand,
// shopt -so, the same options on a shell's command line, SHELLOPTS) or an
// interactive shell reading its commands from its input (history expansion
// is on there), set -k (assignment words anywhere in a command go to its
// environment), shopt -u interactive_comments, and set or shopt options
// computed at run time; a compgen or complete -W word list holding $ or `
// (it is expanded when the completion runs); SHELL set to anything but a
// plain path of sh or bash (sudo -s, su -m and flock -c give their command
// to $SHELL), and su -s with another interpreter; a line
// that does not parse; nesting deeper than the limit.
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
// and tracers (gdb, strace), terminal multiplexers (screen, tmux), and a
// script the command wrote earlier. The contents of script files are not
// read: bash ./x.sh and ./x.sh are listed as bash and x.sh, and neither are start-up files named
// by a plain BASH_ENV, ENV or --rcfile value, those an interactive or login
// shell reads by itself (~/.bashrc, ~/.profile, /etc/profile), nor a
// loadable builtin that enable NAME finds on BASH_LOADABLES_PATH. The
// analysis assumes that $SHELL, when the line does not set it, and the
// target user's login shell for su, are Bourne shells.
// Variables that make a program load or run code (LD_PRELOAD, PYTHONSTARTUP,
// GIT_SSH_COMMAND, EDITOR, VISUAL, SUDO_EDITOR, PAGER, ...) are not
// modelled. PATH, which the line may change, decides which file a name
// runs; a deny list of names
// does not stop a copy or link of a program under another name. Wrappers not
// listed above (strace, systemd-run, parallel, prlimit, numactl, ...) are
// listed as programs without looking inside. Leading-argument patterns such
// as "git push" compare the first words only: git -C dir push does not
// match. Write targets are only those of redirections; programs that write
// files themselves (tee, cp, dd) are not reflected in [Analysis.Writes].
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
