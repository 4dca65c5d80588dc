package shellcmd

import (
	"errors"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Option grammars of the wrappers, from their manuals.
var (
	envSpec = optSpec{short: "0iva:C:P:S:u:", long: longs(
		"ignore-environment null unset: chdir: split-string: block-signal:: default-signal:: " +
			"ignore-signal:: list-signal-handling debug argv0: help version")}
	execSpec    = optSpec{short: "cla:"}
	commandSpec = optSpec{short: "pvV"}
	niceSpec    = optSpec{short: "n:", long: longs("adjustment: help version")}
	nohupSpec   = optSpec{long: longs("help version")}
	timeoutSpec = optSpec{short: "fk:ps:v", long: longs(
		"foreground kill-after: preserve-status signal: verbose help version")}
	stdbufSpec = optSpec{short: "i:o:e:", long: longs("input: output: error: help version")}
	timeSpec   = optSpec{short: "af:o:pqvV", long: longs(
		"append format: output: portability quiet verbose help version")}
	sudoSpec = optSpec{short: "AbBC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv", long: longs(
		"askpass background bell chdir: chroot: close-from: command-timeout: edit group: help host: " +
			"list login login-class: no-update non-interactive other-user: preserve-env:: preserve-groups " +
			"prompt: remove-timestamp reset-timestamp role: set-home shell stdin type: user: validate version")}
	doasSpec   = optSpec{short: "a:C:Lnsu:"}
	pkexecSpec = optSpec{long: longs("user: disable-internal-agent keep-cwd help version")}
	xargsSpec  = optSpec{short: "0a:d:E:e::I:i::L:l::n:oP:prs:tx", long: longs(
		"null arg-file: delimiter: eof:: replace:: max-lines:: max-args: max-procs: interactive open-tty " +
			"no-run-if-empty max-chars: verbose exit show-limits process-slot-var: help version")}
	setsidSpec = optSpec{short: "cfw", long: longs("ctty fork wait help version")}
	chrootSpec = optSpec{long: longs("userspec: groups: skip-chdir help version")}
	ioniceSpec = optSpec{short: "c:n:p:P:tu:", long: longs("class: classdata: pid: pgid: ignore uid: help version")}
	flockSpec  = optSpec{short: "sxuneow:E:c:FhV", long: longs(
		"shared exclusive unlock nonblock no-fork close timeout: wait: conflict-exit-code: command: fcntl verbose help version")}
	unbufferSpec = optSpec{short: "p"}
	jobsSpec     = optSpec{short: "lnprsx"}
	suSpec       = optSpec{short: "c:fg:G:lmpPs:hVw:", permute: true, long: longs(
		"command: session-command: fast group: supp-group: login preserve-environment pty shell: " +
			"whitelist-environment: help version")}
	runuserSpec = optSpec{short: "c:fg:G:lmpPs:u:hVw:", permute: true, long: longs(
		"command: session-command: fast group: supp-group: login preserve-environment pty shell: user: " +
			"whitelist-environment: help version")}
	scriptSpec = optSpec{short: "I:O:B:T:t::m:ac:efE:o:qhV", permute: true, long: longs(
		"log-in: log-out: log-io: log-timing: timing:: logging-format: append command: return flush force " +
			"echo: output-limit: quiet help version")}
	tasksetSpec = optSpec{short: "apchV", long: longs("all-tasks pid cpu-list help version")}
	chrtSpec    = optSpec{short: "abdD:fiphmoP:T:rRvV", long: longs(
		"all-tasks batch deadline fifo idle other rr reset-on-fork sched-runtime: sched-period: sched-deadline: " +
			"max pid verbose help version")}
	setarchSpec = optSpec{short: "hVv3BFILRSTXZ", long: longs(
		"32bit fdpic-funcptrs short-inode addr-compat-layout addr-no-randomize whole-seconds sticky-timeouts " +
			"read-implies-exec mmap-page-zero 3gb 4gb uname-2.6 verbose list help version")}
	nsenterSpec = optSpec{short: "ahVt:m::u::i::n::p::C::U::T::S:G:r::w::W:FZ", long: longs(
		"all target: mount:: uts:: ipc:: net:: pid:: cgroup:: user:: time:: setuid: setgid: preserve-credentials " +
			"root:: wd:: wdns: no-fork follow-context help version")}
	unshareSpec = optSpec{short: "fhVmuinpCTUrR:w:S:G:c", long: longs(
		"mount:: uts:: ipc:: net:: pid:: user:: cgroup:: time:: fork kill-child:: mount-proc:: mount-binfmt:: " +
			"map-user: map-group: map-users: map-groups: map-root-user map-current-user map-auto propagation: " +
			"setgroups: keep-caps setuid: setgid: root: wd: monotonic: boottime: load-interp: help version")}
	watchSpec = optSpec{short: "bcCd::egn:pq:rtwxhv", long: longs(
		"beep color no-color differences:: errexit chgexit interval: precise no-rerun no-title no-wrap no-linewrap exec help version")}
	shellLong = map[string]int{"rcfile": argRequired, "init-file": argRequired, "emulate": argRequired}
)

// shells whose command strings are parsed, and the syntax used to parse them.
var shells = map[string]syntax.LangVariant{
	"sh": syntax.LangBash, "bash": syntax.LangBash, "rbash": syntax.LangBash, "dash": syntax.LangBash,
	"ash": syntax.LangBash, "ksh": syntax.LangBash, "ksh93": syntax.LangBash, "pdksh": syntax.LangBash,
	"oksh": syntax.LangBash, "yash": syntax.LangBash, "posh": syntax.LangBash,
	"mksh": syntax.LangMirBSDKorn, "lksh": syntax.LangMirBSDKorn,
	"zsh": syntax.LangZsh,
}

// posixShells are shells that may be dash, which reads $'...' and $"..."
// unlike bash (see dashScript).
var posixShells = map[string]bool{"sh": true, "dash": true, "ash": true, "posh": true}

// otherShells run command languages this package does not parse.
var otherShells = map[string]bool{
	"fish": true, "csh": true, "tcsh": true, "nu": true, "pwsh": true, "powershell": true,
	"elvish": true, "xonsh": true, "rc": true, "es": true, "ion": true, "murex": true, "oil": true, "osh": true, "ysh": true,
}

var (
	legacyNice = regexp.MustCompile(`^--?[+-]?[0-9]+$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// unwrap handles the program prog (a base name) called with args. It returns
// the argument vector of the program prog runs in turn, or nil when it runs
// none (or when that was reported as unresolved).
//
// The dispatch is two switches of direct calls rather than a map of
// handlers: a call through a func value makes ctx escape to the heap, which
// costs each command an allocation.
func (a *analyzer) unwrap(prog string, args []field, ctx *callCtx) []field {
	if prog == "" {
		return nil
	}
	if next, ok := a.unwrapBuiltin(prog, args, ctx); ok {
		return next
	}
	if next, ok := a.unwrapProgram(prog, args, ctx); ok {
		return next
	}
	if next, ok := a.launcher(prog, args, ctx); ok {
		return next
	}
	if next := dashedGit(prog, args); next != nil {
		return next
	}
	if lang, ok := shells[prog]; ok {
		a.shell(prog, lang, args, ctx)
	} else if otherShells[prog] {
		a.unresolved("%s runs commands in a language helikon cannot analyse; use bash", prog)
	}
	return nil
}

// unwrapBuiltin handles prog when it is a shell builtin that runs code from
// elsewhere, changes what a name or the shell's reading does, or runs its
// operands, as unwrap does; it returns false for any other name.
func (a *analyzer) unwrapBuiltin(prog string, args []field, ctx *callCtx) ([]field, bool) {
	switch prog {
	case ".", "source":
		a.unresolved("%s runs commands from a file, which cannot be checked before it runs; run the commands directly", prog)
	case "eval":
		a.unresolved("eval runs a string as commands, which cannot be checked before it runs; write the command directly")
	case "fc":
		a.unresolved("fc re-runs commands from the history; write the command directly")
	case "let":
		a.unresolved("let evaluates its arguments as arithmetic, which can run commands hidden in variables; use $((...)) with literal numbers")
	case "alias":
		a.aliasBuiltin(args)
	case "hash":
		a.hashBuiltin(args)
	case "enable":
		a.enableBuiltin(args)
	case "compgen", "complete":
		a.completeBuiltin(prog, args)
	case "trap":
		a.trap(args, ctx)
	case "set":
		a.setBuiltin(args)
	case "shopt":
		a.shopt(args)
	case "read", "mapfile", "readarray", "printf", "unset", "getopts", "wait", "test", "[", "declare", "typeset", "local", "export", "readonly":
		a.vars.builtin(a, prog, args)
	case "cd", "pushd", "popd":
		a.cd(prog, args)
	case "jobs":
		return a.jobs(prog, args, ctx), true
	case "--":
		// bash's time keyword skips a -- after it (time -p -- rm x runs
		// rm), which the parser reads as a command named --.
		return args, true
	case "builtin":
		return a.builtinPrefix(prog, args, ctx), true
	case "command":
		return a.command(prog, args, ctx), true
	case "exec":
		return a.exec(prog, args, ctx), true
	default:
		return nil, false
	}
	return nil, true
}

// unwrapProgram handles prog when it is a program that runs another: its
// operands, a command string, or a shell, as unwrap does; it returns false
// for any other name.
func (a *analyzer) unwrapProgram(prog string, args []field, ctx *callCtx) ([]field, bool) {
	switch prog {
	case "env":
		return a.env(args, ctx), true
	case "nice":
		return a.nice(prog, args, ctx), true
	case "nohup":
		return a.simple(prog, nohupSpec, args, ctx), true
	case "setsid":
		return a.simple(prog, setsidSpec, args, ctx), true
	case "unbuffer":
		return a.simple(prog, unbufferSpec, args, ctx), true
	case "stdbuf":
		return a.simple(prog, stdbufSpec, args, ctx), true
	case "time":
		return a.simple(prog, timeSpec, args, ctx), true
	case "pkexec":
		return a.pkexec(prog, args, ctx), true
	case "ionice":
		return a.ionice(prog, args, ctx), true
	case "timeout":
		return a.timeout(prog, args, ctx), true
	case "chroot":
		return a.chroot(prog, args, ctx), true
	case "sudo", "doas":
		return a.sudo(prog, args, ctx), true
	case "sudoedit":
		return nil, true
	case "xargs":
		return a.xargs(args, ctx), true
	case "flock":
		return a.flock(args, ctx), true
	case "watch":
		return a.watch(args, ctx), true
	case "busybox":
		return busybox(args), true
	case "taskset":
		return a.taskset(prog, args, ctx), true
	case "chrt":
		return a.chrt(prog, args, ctx), true
	case "setarch", "linux32", "linux64", "i386", "i486", "i586", "i686", "x86_64", "uname26":
		return a.setarch(prog, args, ctx), true
	case "nsenter", "unshare":
		return a.nsenter(prog, args, ctx), true
	case "find":
		a.find(args, ctx)
	case "script":
		a.script1(args, ctx)
	case "sg", "newgrp":
		a.sg(prog, args, ctx)
	case "su", "runuser":
		a.su(prog, args, ctx)
	default:
		return nil, false
	}
	return nil, true
}

// aliasBuiltin refuses an alias that defines a name (or may: a word computed
// at run time).
func (a *analyzer) aliasBuiltin(args []field) {
	for _, f := range args {
		if f.dynamic || strings.Contains(f.text, "=") {
			a.unresolved("alias can make a name run another program; call the program directly")
			return
		}
	}
}

// hashBuiltin refuses hash -p, which binds a name to a program.
func (a *analyzer) hashBuiltin(args []field) {
	if anyOpt(args, 'p') {
		a.unresolved("hash -p makes a name run another program; call the program directly")
	}
}

// enableBuiltin refuses enable -f, which loads a builtin from a library.
func (a *analyzer) enableBuiltin(args []field) {
	if anyOpt(args, 'f') {
		a.unresolved("enable -f loads a builtin from a shared library, which cannot be checked; call the program directly")
	}
}

// completeBuiltin refuses compgen and complete with -C or -F, which run
// command strings, and checks the word list of -W.
func (a *analyzer) completeBuiltin(prog string, args []field) {
	if anyOpt(args, 'C') || anyOpt(args, 'F') {
		a.unresolved("%s -C/-F runs commands given as strings; call the program directly", prog)
	} else if anyOpt(args, 'W') {
		// The word list is expanded like a line of words when the
		// completion runs: a $(...) in it runs.
		a.compWords(prog, args)
	}
}

// jobs -x runs its operands as a command, jobspecs (%1) replaced by process
// group IDs.
func (a *analyzer) jobs(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := jobsSpec.parse(prog, args)
	if err != nil || !has(opts, "x") {
		if err != nil && !errors.Is(err, errMissing) {
			a.unresolved("%v; write the command without it", err)
		}
		return nil
	}
	out := make([]field, len(rest))
	for i, f := range rest {
		out[i] = f
		if strings.Contains(f.text, "%") {
			out[i].dynamic = true // replaced by a process group ID
		}
	}
	return a.need(prog, out, ctx)
}

// builtinPrefix runs the builtin named by builtin's operands.
func (a *analyzer) builtinPrefix(prog string, args []field, ctx *callCtx) []field {
	if len(args) > 0 && !args[0].dynamic && args[0].text == "--" {
		args = args[1:]
	}
	return a.need(prog, args, ctx)
}

// command runs its operands, unless -v or -V only describes them.
func (a *analyzer) command(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := commandSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "v", "V") {
		return nil
	}
	return a.need(prog, rest, ctx)
}

// exec runs its operands in place of the shell; alone it only redirects.
func (a *analyzer) exec(prog string, args []field, ctx *callCtx) []field {
	_, rest, err := execSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) {
		return nil
	}
	return rest
}

// nice runs its operands, after the legacy -N adjustment if there is one.
func (a *analyzer) nice(prog string, args []field, ctx *callCtx) []field {
	if len(args) > 0 && !args[0].dynamic && legacyNice.MatchString(args[0].text) {
		args = args[1:]
	}
	return a.simple(prog, niceSpec, args, ctx)
}

// pkexec runs its operands, or without any a shell on its input.
func (a *analyzer) pkexec(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := pkexecSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "help", "version") {
		return nil
	}
	if len(rest) == 0 && !ctx.openEnded {
		a.shellStdin(prog, ctx) // pkexec alone runs a shell
		return nil
	}
	return a.need(prog, rest, ctx)
}

// ionice runs its operands, unless -p, -P or -u makes it work on running
// processes.
func (a *analyzer) ionice(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := ioniceSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "p", "P", "u", "pid", "pgid", "uid") {
		return nil
	}
	return a.need(prog, rest, ctx)
}

// timeout runs the operands after its first, the duration (5s, 1.5m,
// infinity).
func (a *analyzer) timeout(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := timeoutSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "help", "version") {
		return nil
	}
	if len(rest) == 0 {
		return a.need(prog, rest, ctx)
	}
	if rest[0].splits {
		a.unresolved("cannot tell the program timeout runs: its duration %s is computed at run time", rest[0].text)
		return nil
	}
	return a.need(prog, rest[1:], ctx)
}

// chroot runs the operands after the new root, or without any $SHELL.
func (a *analyzer) chroot(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := chrootSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "help", "version") {
		return nil
	}
	if len(rest) == 0 {
		return a.need(prog, rest, ctx)
	}
	if rest[0].splits {
		a.unresolved("cannot tell the program chroot runs: its directory %s is computed at run time", rest[0].text)
		return nil
	}
	if len(rest) == 1 && !ctx.openEnded {
		a.unresolved("chroot without a program starts the shell named by $SHELL; name the program")
		return nil
	}
	a.cwdChanged("chroot changes into the new root")
	return a.need(prog, rest[1:], ctx)
}

// busybox runs its operands as an applet, unless an option comes first.
func busybox(args []field) []field {
	if len(args) > 0 && (args[0].dynamic || !strings.HasPrefix(args[0].text, "-")) {
		return args
	}
	return nil
}

// taskset [options] MASK PROGRAM... ; -p works on a pid.
func (a *analyzer) taskset(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := tasksetSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "p", "pid", "h", "V", "help", "version") {
		return nil
	}
	return a.afterOperand(prog, "mask", rest, ctx)
}

// chrt [options] PRIORITY PROGRAM... ; -p works on a pid, -m prints.
func (a *analyzer) chrt(prog string, args []field, ctx *callCtx) []field {
	opts, rest, err := chrtSpec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "p", "pid", "m", "max", "h", "V", "help", "version") {
		return nil
	}
	return a.afterOperand(prog, "priority", rest, ctx)
}

// setarch [ARCH] [options] [PROGRAM...], and its aliases named for an
// architecture (linux32, x86_64); without a program it runs $SHELL, which
// reads its input.
func (a *analyzer) setarch(prog string, args []field, ctx *callCtx) []field {
	if prog == "setarch" && len(args) > 0 && !args[0].dynamic && !strings.HasPrefix(args[0].text, "-") {
		args = args[1:]
	}
	return a.shellIfNone(prog, setarchSpec, args, ctx, "list")
}

// nsenter and unshare run their operands, or without any $SHELL; --wd and
// --root change directory.
func (a *analyzer) nsenter(prog string, args []field, ctx *callCtx) []field {
	spec := nsenterSpec
	dirOpts := []string{"w", "wd", "r", "root"} // nsenter -r is --root
	if prog == "unshare" {
		spec, dirOpts = unshareSpec, []string{"w", "wd", "R", "root"} // unshare -r maps root
	}
	if opts, _, err := spec.parse(prog, args); err == nil && has(opts, dirOpts...) {
		a.cwdChanged(prog + " --wd or --root changes directory")
	}
	return a.shellIfNone(prog, spec, args, ctx, "")
}

// need returns rest, the vector of the wrapped program, reporting the case
// where it is missing but may come from xargs input.
func (a *analyzer) need(prog string, rest []field, ctx *callCtx) []field {
	if len(rest) == 0 {
		if ctx.openEnded {
			a.unresolved("%s under xargs takes its program from the input, which cannot be checked; name the program", prog)
		}
		return nil
	}
	return rest
}

// optErr reports an option parsing failure; it returns true when the
// wrapper runs nothing analysable.
func (a *analyzer) optErr(prog string, err error, ctx *callCtx) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, errMissing):
		if ctx.openEnded {
			a.unresolved("%s under xargs takes its options from the input, which cannot be checked; name the program", prog)
		}
		// Otherwise the program fails with a usage error and runs nothing.
		return true
	default:
		a.unresolved("%v; write the command without it", err)
		return true
	}
}

// simple handles a wrapper whose operands are exactly the program to run.
func (a *analyzer) simple(prog string, spec optSpec, args []field, ctx *callCtx) []field {
	opts, rest, err := spec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "help", "version") {
		return nil
	}
	return a.need(prog, rest, ctx)
}

// envOperand checks f, an operand env or sudo takes for a NAME=value
// assignment for the program it runs. It returns false, with the line
// unresolved, when the assignment can make that program run code the line
// does not show and the program's position is unknown too.
func (a *analyzer) envOperand(prog string, f field) bool {
	switch {
	case envName.MatchString(f.text):
		// The name is static (what precedes "=" holds no expansion).
		a.vars.envAssign(a, f)
	case f.dynamic:
		// "${x:=rm}" shows an "=" that its value lacks: the value may be
		// the program itself, or any variable name.
		a.unresolved("cannot tell whether %s takes %s for a variable or for the program to run: it is computed at run time; write NAME=value literally", prog, f.text)
		return false
	case strings.HasPrefix(f.text, "BASH_FUNC_"):
		// bash imports BASH_FUNC_name%%=() {...} as a function that
		// replaces the command name.
		a.unresolved("%s %s exports a function that bash runs in place of a command; define the function in the command line instead", prog, strings.SplitN(f.text, "=", 2)[0])
	}
	return true
}

// anyOpt reports whether a static short-option word among args holds c.
func anyOpt(args []field, c byte) bool {
	for _, f := range args {
		if f.dynamic {
			return true
		}
		if f.text == "--" {
			return false
		}
		if len(f.text) > 1 && f.text[0] == '-' && !strings.HasPrefix(f.text, "--") && strings.IndexByte(f.text[1:], c) >= 0 {
			return true
		}
	}
	return false
}

// env runs its operands after its assignments, and the words of -S.
func (a *analyzer) env(args []field, ctx *callCtx) []field {
	for range maxWrappers {
		opts, rest, err := envSpec.parse("env", args)
		if a.optErr("env", err, ctx) || has(opts, "help", "version", "list-signal-handling") {
			return nil
		}
		if has(opts, "C", "chdir") {
			a.cwdChanged("env -C changes directory")
		}
		for len(rest) > 0 && !rest[0].dynamic && rest[0].text == "-" {
			rest = rest[1:]
		}
		// env takes every operand holding "=" for an assignment.
		for len(rest) > 0 && !rest[0].splits && strings.Contains(rest[0].text, "=") {
			if !a.envOperand("env", rest[0]) {
				return nil
			}
			rest = rest[1:]
		}
		split, ok := value(opts, "S", "split-string")
		if !ok {
			if len(rest) > 0 && rest[0].splits {
				a.unresolved("cannot tell the program env runs: %s is computed at run time", rest[0].text)
				return nil
			}
			if len(rest) == 0 && !ctx.openEnded {
				return nil // env alone prints the environment
			}
			return a.need("env", rest, ctx)
		}
		// env -S splits its argument into words with its own quoting rules;
		// only plain words are taken apart here.
		if strings.ContainsAny(split, "'\"\\$#") {
			a.unresolved("env -S %q uses quoting that helikon does not analyse; pass the words separately", split)
			return nil
		}
		words := strings.Fields(split)
		next := make([]field, 0, len(words)+len(rest))
		for _, w := range words {
			next = append(next, field{text: w})
		}
		args = append(next, rest...)
	}
	a.unresolved("env -S nests too deeply")
	return nil
}

// sudo and doas run their operands, or a shell, as another user.
func (a *analyzer) sudo(prog string, args []field, ctx *callCtx) []field {
	spec := sudoSpec
	if prog == "doas" {
		spec = doasSpec
	}
	opts, rest, err := spec.parse(prog, args)
	if a.optErr(prog, err, ctx) {
		return nil
	}
	if prog == "sudo" {
		// sudo takes an operand that holds "=" and does not start with /
		// for a variable, and goes on reading options after it.
		for len(rest) > 0 && !rest[0].splits && !strings.HasPrefix(rest[0].text, "/") && strings.Contains(rest[0].text, "=") {
			if !a.envOperand(prog, rest[0]) {
				return nil
			}
			more, r, err := spec.parse(prog, rest[1:])
			if a.optErr(prog, err, ctx) {
				return nil
			}
			opts, rest = append(opts, more...), r
		}
		if has(opts, "e", "edit", "l", "list", "v", "validate", "K", "remove-timestamp", "V", "version", "help") {
			return nil
		}
		if v, ok := value(opts, "h"); !ok && has(opts, "h") || ok && v == "" {
			return nil // -h alone is --help
		}
	} else if has(opts, "C", "L") {
		return nil
	} else if has(opts, "s") {
		// doas -s runs the shell, which reads its standard input.
		if len(rest) == 0 && !ctx.openEnded {
			a.shellStdin(prog+" -s", ctx)
			return nil
		}
	}
	if prog == "sudo" && has(opts, "D", "chdir", "i", "login", "R", "chroot") {
		a.cwdChanged("sudo -D, -R or -i changes directory")
	}
	shell := prog == "sudo" && has(opts, "s", "i", "shell", "login")
	if len(rest) == 0 && !ctx.openEnded {
		if shell {
			a.shellStdin(prog+" -s", ctx)
		}
		return nil
	}
	if shell {
		// sudo -s/-i joins the words into a string for $SHELL -c,
		// backslash-quoting every character but letters, digits, _, - and
		// $: a $NAME in a word is expanded by that shell.
		for _, f := range rest {
			if strings.Contains(f.text, "$") {
				a.unresolved("sudo -s runs %s through a shell that expands the $ in it; write the value literally", f.text)
				return nil
			}
		}
	}
	return a.need(prog, rest, ctx)
}

// xargs runs its operands with words of its input appended, or replacing
// its replace string, which leaves ctx open-ended.
func (a *analyzer) xargs(args []field, ctx *callCtx) []field {
	opts, rest, err := xargsSpec.parse("xargs", args)
	if a.optErr("xargs", err, ctx) || has(opts, "help", "version") {
		return nil
	}
	repl, replace := "", false
	for _, o := range opts {
		switch o.name {
		case "I":
			repl, replace = o.val, true
		case "i", "replace":
			repl, replace = "{}", true
			if o.has {
				repl = o.val
			}
		}
	}
	if len(rest) == 0 {
		rest = []field{{text: "echo"}} // xargs runs echo by default
	}
	if replace && repl != "" {
		out := make([]field, len(rest))
		for i, f := range rest {
			out[i] = f
			if strings.Contains(f.text, repl) {
				out[i].dynamic = true // replaced by input lines
			}
		}
		rest = out
	}
	// Without a replace string xargs appends input words to the vector.
	ctx.openEnded = !replace
	ctx.stdin = stdin{} // the command's input is not the line's
	return rest
}

// find analyses the programs of its -exec, -execdir, -ok and -okdir.
func (a *analyzer) find(args []field, ctx *callCtx) {
	if ctx.openEnded {
		a.unresolved("find under xargs takes its expressions from the input and may -exec any program; give find its arguments directly")
		return
	}
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dynamic {
			a.unresolved("cannot tell what find runs: its argument %s is computed at run time and may hold -exec", f.text)
			return
		}
		switch f.text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		var cmd []field
		j := i + 1
		for ; j < len(args); j++ {
			t := args[j]
			if !t.dynamic && (t.text == ";" || t.text == "+" && len(cmd) > 0 && cmd[len(cmd)-1].text == "{}") {
				break
			}
			if strings.Contains(t.text, "{}") {
				t.dynamic = true // replaced by the file name
			}
			cmd = append(cmd, t)
		}
		if f.text == "-execdir" || f.text == "-okdir" {
			a.cwdChanged("find " + f.text + " runs in the directory of each file found")
		}
		sub := &callCtx{depth: ctx.depth, via: "find " + f.text}
		a.argv(cmd, sub)
		i = j
	}
}

// flock runs the operands after the lock file, or -c's string with $SHELL.
func (a *analyzer) flock(args []field, ctx *callCtx) []field {
	opts, rest, err := flockSpec.parse("flock", args)
	if a.optErr("flock", err, ctx) || has(opts, "h", "V", "help", "version") {
		return nil
	}
	if len(rest) == 0 {
		return a.need("flock", rest, ctx)
	}
	if rest[0].splits {
		a.unresolved("cannot tell what flock runs: %s is computed at run time", rest[0].text)
		return nil
	}
	cmd, ok := value(opts, "c", "command")
	rest = rest[1:]
	if !ok && len(rest) >= 2 && !rest[0].dynamic && (rest[0].text == "-c" || rest[0].text == "--command") {
		if rest[1].dynamic {
			a.unresolved("cannot tell what flock -c runs: %s is computed at run time", rest[1].text)
			return nil
		}
		cmd, ok, rest = rest[1].text, true, nil
	}
	if ok {
		a.dashScript(cmd, ctx.depth+1, "the command string of flock -c") // $SHELL, else /bin/sh
		return nil
	}
	if len(rest) == 0 && !ctx.openEnded {
		return nil // flock on a descriptor number
	}
	return a.need("flock", rest, ctx)
}

// watch runs its operands joined by spaces through sh -c, unless -x.
func (a *analyzer) watch(args []field, ctx *callCtx) []field {
	opts, rest, err := watchSpec.parse("watch", args)
	if a.optErr("watch", err, ctx) || has(opts, "h", "v", "help", "version") {
		return nil
	}
	if has(opts, "x", "exec") {
		return a.need("watch", rest, ctx)
	}
	if ctx.openEnded {
		a.unresolved("watch under xargs takes its command from the input; name the program")
		return nil
	}
	words := make([]string, len(rest))
	for i, f := range rest {
		if f.dynamic {
			a.unresolved("cannot tell what watch runs: %s is computed at run time", f.text)
			return nil
		}
		words[i] = f.text
	}
	if len(words) > 0 {
		a.dashScript(strings.Join(words, " "), ctx.depth+1, "the command of watch") // sh -c
	}
	return nil
}

// su and runuser run -c's string, and the operands after the user name,
// with the target user's shell, as in shell -c STRING OPERAND...; their
// options permute (GNU getopt), so an option may follow the user name.
// runuser -u USER runs its operands as a program, without a shell.
func (a *analyzer) su(prog string, args []field, ctx *callCtx) {
	spec := suSpec
	if prog == "runuser" {
		spec = runuserSpec
	}
	opts, operands, err := spec.parse(prog, args)
	if err != nil && !errors.Is(err, errMissing) {
		a.unresolved("%v; write the command without it", err)
		return
	}
	if ctx.openEnded {
		a.unresolved("%s under xargs takes its command from the input; name the program", prog)
		return
	}
	if err != nil || has(opts, "h", "V", "help", "version") {
		return // a usage error, or help
	}
	if has(opts, "u", "user") {
		// runuser -u USER [--] PROGRAM [ARG...]
		a.argv(operands, &callCtx{depth: ctx.depth, stdin: ctx.stdin, via: prog + " -u"})
		return
	}
	lang, shell := syntax.LangBash, prog
	if sh, ok := valueField(opts, "s", "shell"); ok {
		l, bourne := shells[path.Base(sh.text)]
		if sh.dynamic || !bourne {
			a.unresolved("%s -s %s picks the interpreter that runs the command, which helikon cannot analyse; use sh or bash", prog, sh.text)
			return
		}
		lang, shell = l, path.Base(sh.text)
	}
	if len(operands) > 0 && !operands[0].dynamic && operands[0].text == "-" {
		operands = operands[1:] // su - is su -l
		a.cwdChanged(prog + " - changes to the user's home directory")
	}
	if has(opts, "l", "login") {
		a.cwdChanged(prog + " -l changes to the user's home directory")
	}
	if len(operands) > 0 {
		operands = operands[1:] // the user name
	}
	var argv []field
	if cmd, ok := valueField(opts, "c", "command", "session-command"); ok {
		argv = append(argv, field{text: "-c"}, cmd)
	}
	a.shell(shell, lang, append(argv, operands...), ctx)
}

// shell handles sh, bash and the like: -c strings are parsed in turn, and a
// shell reading its commands from standard input is analysed when that input
// is a here-document or here-string.
func (a *analyzer) shell(prog string, lang syntax.LangVariant, args []field, ctx *callCtx) {
	a.shellArgs(prog, lang, args, ctx, lang != syntax.LangZsh)
	if posixShells[prog] && len(args) > 0 && !args[0].dynamic && isBashLong(args[0].text) {
		// sh may be dash, which has no long options: -posix there is
		// -p -o NAME -s -i -x, and the words after it read otherwise.
		outer := a.dedup
		a.dedup = true
		c := *ctx
		a.shellArgs(prog, lang, args, &c, false)
		a.dedup = outer
	}
}

// isBashLong reports whether t is one of bash's long options, with one dash
// or two.
func isBashLong(t string) bool {
	if len(t) < 2 || t[0] != '-' {
		return false
	}
	name := t[1:]
	if strings.HasPrefix(t, "--") && len(t) > 2 {
		name = t[2:]
	}
	_, ok := bashLong[name]
	return ok
}

// shellMode is what a shell's options say about where it reads its
// commands.
type shellMode struct {
	command     bool // -c: from the first operand
	stdin       bool // -s: from the input, the operands are parameters
	interactive bool // -i
}

// shellArgs analyses a shell's arguments; longOpts says whether leading
// long options are read as bash reads them.
func (a *analyzer) shellArgs(prog string, lang syntax.LangVariant, args []field, ctx *callCtx, longOpts bool) {
	i := 0
	if longOpts {
		var ok bool
		if i, ok = a.bashLongOptions(prog, args, ctx); !ok {
			return
		}
	}
	m, i, ok := a.shellOptions(prog, lang, args, i, ctx)
	if !ok {
		return
	}
	var rest []field
	if i < len(args) {
		rest = args[i:]
	}
	a.shellOperands(prog, lang, m, rest, ctx)
}

// bashLongOptions reads the long options bash reads before any other, with
// one dash or two: -rcfile FILE is --rcfile FILE, and -login is not
// -l -o gin. It returns the index of the first word that is not one, and
// false when the shell runs nothing (an invalid option, --help, a missing
// argument) or the line is unresolved.
func (a *analyzer) bashLongOptions(prog string, args []field, ctx *callCtx) (int, bool) {
	i := 0
	for ; i < len(args) && !args[i].dynamic && len(args[i].text) > 1 && args[i].text[0] == '-'; i++ {
		t := args[i].text
		name := t[1:]
		if strings.HasPrefix(t, "--") && len(t) > 2 {
			name = t[2:]
		}
		kind, ok := bashLong[name]
		if !ok {
			if len(t) > 2 && t[1] == '-' {
				return i, false // bash: invalid option, nothing runs
			}
			break // short options
		}
		if name == "help" || name == "version" {
			return i, false
		}
		if kind != argRequired {
			continue
		}
		i++
		if i >= len(args) {
			return i, false // bash: option requires an argument
		}
		if !a.startupFile(prog, "--"+name, args[i], ctx) {
			return i, false
		}
	}
	return i, true
}

// shellOptions reads a shell's options from args[i:]. It returns what they
// say and the index of the first operand, and false when the line is
// unresolved.
func (a *analyzer) shellOptions(prog string, lang syntax.LangVariant, args []field, i int, ctx *callCtx) (shellMode, int, bool) {
	var m shellMode
	for ; i < len(args); i++ {
		f := args[i]
		if f.dynamic {
			if m.command && !f.splits {
				return m, i, true // the command string, reported by shellOperands
			}
			a.unresolved("cannot tell what %s runs: its argument %s is computed at run time", prog, f.text)
			return m, i, false
		}
		t := f.text
		ok := true
		switch {
		case t == "--" || t == "-":
			return m, i + 1, true
		case strings.HasPrefix(t, "--"):
			i, ok = a.shellLongOption(prog, lang, args, i, ctx)
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			i, ok = a.shellCluster(prog, args, i, &m)
		default:
			return m, i, true
		}
		if !ok {
			return m, i, false
		}
	}
	return m, i, true
}

// shellLongOption reads the long option args[i] of a shell past bash's own
// (see bashLongOptions), with its argument. It returns the index of the
// last word it read, and false when the line is unresolved.
func (a *analyzer) shellLongOption(prog string, lang syntax.LangVariant, args []field, i int, ctx *callCtx) (int, bool) {
	t := args[i].text
	name, _, hasVal := strings.Cut(t[2:], "=")
	if lang == syntax.LangZsh && name != "emulate" {
		// zsh takes --NAME for any option (--interactive, --banghist),
		// which is not modelled.
		a.unresolved("%s %s sets an option helikon does not analyse; run the command without it", prog, t)
		return i, false
	}
	if shellLong[name] == argRequired && !hasVal {
		i++
		// --rcfile and --init-file name a file an interactive shell
		// sources: a process substitution there is code.
		if i < len(args) && !a.startupFile(prog, "--"+name, args[i], ctx) {
			return i, false
		}
	}
	return i, true
}

// shellCluster reads the cluster of short options args[i] (-xc, +o NAME)
// into m, refusing options that make the shell run text other than what
// the parser sees. Each -o or -O in the cluster takes the next word as its
// option name and the cluster goes on: bash -oc posix 'cmd' is -o posix
// -c 'cmd' (bash, dash). It returns the index of the last word it read, and
// false when the line is unresolved.
func (a *analyzer) shellCluster(prog string, args []field, i int, m *shellMode) (int, bool) {
	t := args[i].text
	on := t[0] == '-'
	next := i
	for j := 1; j < len(t); j++ {
		switch t[j] {
		case 'c':
			m.command = true
		case 's':
			m.stdin = true
		case 'i':
			m.interactive = m.interactive || on
		case 'o', 'O':
			next++
			if next >= len(args) {
				continue // -o alone lists the options
			}
			if args[next].dynamic {
				a.unresolved("cannot tell what %s runs: its option %s is computed at run time", prog, args[next].text)
				return next, false
			}
			if reason := shellOptionRisk(t[j], on, args[next].text); reason != "" {
				a.unresolved("%s %c%c %s %s; do not set it", prog, t[0], t[j], args[next].text, reason)
				return next, false
			}
		default:
			if reason := shellOptionRisk(t[j], on, ""); reason != "" {
				a.unresolved("%s %c%c %s; do not set it", prog, t[0], t[j], reason)
				return next, false
			}
		}
	}
	return next, true
}

// shellOperands decides what a shell runs from its operands rest and what
// its options said: a -c string, a script file, or its input.
func (a *analyzer) shellOperands(prog string, lang syntax.LangVariant, m shellMode, rest []field, ctx *callCtx) {
	if m.interactive && !m.command && (len(rest) == 0 || m.stdin || isStdinFile(rest[0].text)) {
		// An interactive bash expands history (!!, !$, ^a^b) in every line
		// it reads before parsing it, so the text is not what runs.
		a.unresolved("an interactive %s expands history (!) in the commands it reads, which rewrites them before they run; do not use -i", prog)
		return
	}
	switch {
	case m.command:
		if len(rest) == 0 {
			if ctx.openEnded {
				a.unresolved("%s -c under xargs takes its command string from the input; put the command in the string", prog)
			}
			return
		}
		if rest[0].dynamic {
			a.unresolved("cannot tell what %s -c runs: its command string %s is computed at run time; write the command directly", prog, rest[0].text)
			return
		}
		if posixShells[prog] {
			a.dashScript(rest[0].text, ctx.depth+1, "the command string of "+prog+" -c")
		} else {
			a.script(rest[0].text, lang, ctx.depth+1, "the command string of "+prog+" -c")
		}
	case len(rest) > 0 && !m.stdin && isStdinFile(rest[0].text):
		a.shellStdin(prog, ctx)
	case len(rest) > 0 && !m.stdin:
		// A script file: its contents are not inspected, like any
		// program's (see the package documentation), but it must not be
		// the input or a descriptor under another name.
		if r := a.pathRisk(rest[0].text, "the script of "+prog, true); r != "" {
			a.unresolved("%s; pass the commands with -c", r)
		}
	case ctx.openEnded:
		a.unresolved("%s under xargs takes its arguments, maybe -c and a command, from the input; put the command in a -c string", prog)
	default:
		a.shellStdin(prog, ctx)
	}
}

// bashLong are bash's long options; rcfile and init-file take a file.
var bashLong = map[string]int{
	"debug": argNone, "debugger": argNone, "dump-po-strings": argNone, "dump-strings": argNone,
	"help": argNone, "init-file": argRequired, "login": argNone, "noediting": argNone,
	"noprofile": argNone, "norc": argNone, "posix": argNone, "pretty-print": argNone,
	"protected": argNone, "rcfile": argRequired, "rpm-requires": argNone, "restricted": argNone,
	"verbose": argNone, "version": argNone, "wordexp": argNone,
}

// startupFile checks the file given to a shell's --rcfile or --init-file,
// which an interactive shell sources: a process substitution there is code,
// and /dev/stdin is the input. It returns false when the line is unresolved.
func (a *analyzer) startupFile(prog, opt string, f field, ctx *callCtx) bool {
	switch {
	case f.dynamic:
		a.unresolved("cannot tell what %s runs: the file given to %s, %s, is computed at run time", prog, opt, f.text)
		return false
	case isStdinFile(f.text):
		a.shellStdin(prog+" "+opt, ctx)
	default:
		if r := a.pathRisk(f.text, "the file "+prog+" "+opt+" reads", true); r != "" {
			a.unresolved("%s; pass the commands with -c", r)
			return false
		}
	}
	return true
}

// isStdinFile reports whether name is a file name for the standard input
// spelt without .. (see pathRisk for the other spellings).
func isStdinFile(name string) bool {
	if dotDotAfterName(name) {
		return false
	}
	switch path.Clean(name) {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0":
		return true
	}
	return false
}

// isFDFile reports whether name reaches a file descriptor of some process
// (/dev/fd/N, /proc/PID/fd/N), where a process substitution or a
// redirection puts text the line does not show as a file.
func isFDFile(name string) bool {
	c := path.Clean(name)
	return strings.HasPrefix(c, "/dev/fd/") || strings.HasPrefix(c, "/proc/") && strings.Contains(c, "/fd/")
}

// shellStdin handles a shell that reads commands from standard input.
func (a *analyzer) shellStdin(prog string, ctx *callCtx) {
	switch ctx.stdin.kind {
	case stdinText:
		if posixShells[prog] {
			a.dashScript(ctx.stdin.text, ctx.depth+1, "the input of "+prog)
		} else {
			a.script(ctx.stdin.text, syntax.LangBash, ctx.depth+1, "the input of "+prog)
		}
	case stdinFile:
		// Like a script file, unless it is the input or a descriptor.
		if r := a.pathRisk(ctx.stdin.text, "the input of "+prog, true); r != "" {
			a.unresolved("%s; pass the commands with -c", r)
		}
	default:
		a.unresolved("%s reads commands from its standard input, which cannot be checked before it runs; pass them with -c", prog)
	}
}

// trap's first operand is a command string run when a signal arrives.
func (a *analyzer) trap(args []field, ctx *callCtx) {
	if len(args) > 0 && !args[0].dynamic && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		return // trap, trap -p, trap -l, trap SIG: nothing is installed
	}
	act := args[0]
	if act.dynamic {
		a.unresolved("trap installs the command string %s, computed at run time; write it literally", act.text)
		return
	}
	if act.text == "-" || strings.HasPrefix(act.text, "-") && len(act.text) > 1 || isSignalNumber(act.text) {
		return // reset, an option, or (POSIX) a signal number: no action
	}
	a.script(act.text, syntax.LangBash, ctx.depth+1, "the trap action")
}

// Risks of shell options, for set, shopt and a shell's command line.
const (
	histRisk     = "turns on history expansion, which rewrites each line (!!, !$, ^a^b) before it is parsed"
	keywordRisk  = "puts assignment words anywhere in a command into its environment (BASH_ENV=... as an argument)"
	commentsRisk = "makes # start no comment in an interactive shell, so what follows it runs"
)

// shellOptionRisk returns why setting a shell option (letter, with name for
// -o and -O) makes the shell run text other than what the parser sees, or
// "". on is true for -, false for +.
func shellOptionRisk(letter byte, on bool, name string) string {
	switch {
	case on && letter == 'H':
		return histRisk
	case on && letter == 'k':
		return keywordRisk
	case on && letter == 'o' && (name == "history" || name == "histexpand"):
		return histRisk
	case on && letter == 'o' && name == "keyword":
		return keywordRisk
	case !on && letter == 'O' && name == "interactive_comments":
		return commentsRisk
	}
	return ""
}

// setBuiltin checks the options given to set.
func (a *analyzer) setBuiltin(args []field) {
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dynamic {
			a.unresolved("set %s: an option computed at run time may turn on history expansion or -k; write the options literally, or put -- before the values", f.text)
			return
		}
		t := f.text
		if t == "--" || t == "-" || len(t) < 2 || t[0] != '-' && t[0] != '+' {
			return // the positional parameters follow
		}
		on := t[0] == '-'
		for j := 1; j < len(t); j++ {
			name := ""
			if t[j] == 'o' {
				// -o takes the next word; bash's own reading of a
				// cluster such as -oe is odd, so both that word and
				// the rest of the cluster are checked.
				if i+1 < len(args) {
					if args[i+1].dynamic {
						a.unresolved("set -o %s: the option name is computed at run time; write it literally", args[i+1].text)
						return
					}
					name = args[i+1].text
				}
				if shellOptionRisk('o', on, t[j+1:]) != "" {
					name = t[j+1:]
				}
			}
			if reason := shellOptionRisk(t[j], on, name); reason != "" {
				a.unresolved("set %c%c %s %s; do not set it", t[0], t[j], name, reason)
				return
			}
		}
		if strings.Contains(t[1:], "o") {
			i++
		}
	}
}

// shopt checks shopt -s/-u, and shopt -o for set's options.
func (a *analyzer) shopt(args []field) {
	opts, rest, err := optSpec{short: "opqsu"}.parse("shopt", args)
	if err != nil {
		if !errors.Is(err, errMissing) {
			a.unresolved("%v; write the options literally", err)
		}
		return
	}
	letter := byte('O')
	if has(opts, "o") {
		letter = 'o'
	}
	on := has(opts, "s")
	if !on && !has(opts, "u") {
		return // a query
	}
	for _, f := range rest {
		if f.dynamic {
			a.unresolved("shopt %s: an option name computed at run time may change how the shell reads commands; write it literally", f.text)
			return
		}
		if reason := shellOptionRisk(letter, on, f.text); reason != "" {
			a.unresolved("shopt %s %s; do not set it", f.text, reason)
			return
		}
	}
}

// compWords checks the word list of compgen -W and complete -W, which the
// shell expands (running command substitutions) when the completion runs.
func (a *analyzer) compWords(prog string, args []field) {
	for i, f := range args {
		if f.dynamic || f.text == "--" {
			break // anyOpt has reported a dynamic word, if any
		}
		if !strings.HasPrefix(f.text, "-") {
			continue
		}
		k := strings.IndexByte(f.text, 'W')
		if k < 0 {
			continue
		}
		var w field
		switch {
		case k+1 < len(f.text):
			w = field{text: f.text[k+1:]}
		case i+1 < len(args):
			w = args[i+1]
		default:
			return
		}
		if w.dynamic || strings.ContainsAny(w.text, "$`") {
			a.unresolved("%s -W %s: the word list is expanded when the completion runs, running command substitutions in it; list plain words", prog, w.text)
			return
		}
	}
}

// isSignalNumber reports whether s is a signal number that trap takes for a
// signal rather than an action: bash runs "99" as a command when 99 is not
// a signal.
func isSignalNumber(s string) bool {
	if !isFD(s) || len(s) > 2 {
		return false
	}
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n <= 64
}

// script1 handles script (util-linux), which runs -c's string with $SHELL,
// else /bin/sh, or without -c an interactive shell on its input.
func (a *analyzer) script1(args []field, ctx *callCtx) {
	opts, _, err := scriptSpec.parse("script", args)
	if a.optErr("script", err, ctx) || has(opts, "h", "V", "help", "version") {
		return
	}
	cmd, ok := valueField(opts, "c", "command")
	switch {
	case !ok:
		a.unresolved("script without -c runs an interactive shell on its input, which cannot be checked before it runs; give the command with -c")
	case cmd.dynamic:
		a.unresolved("cannot tell what script -c runs: %s is computed at run time", cmd.text)
	default:
		a.dashScript(cmd.text, ctx.depth+1, "the command of script -c")
	}
}

// sg runs "sg [-] GROUP [-c] COMMAND" as /bin/sh -c COMMAND (one word), and
// without a command, like newgrp, a shell on its input.
func (a *analyzer) sg(prog string, args []field, ctx *callCtx) {
	for _, f := range args {
		if f.dynamic {
			a.unresolved("cannot tell what %s runs: %s is computed at run time", prog, f.text)
			return
		}
	}
	if ctx.openEnded {
		a.unresolved("%s under xargs takes its command from the input; name the program", prog)
		return
	}
	if len(args) > 0 && args[0].text == "-" {
		args = args[1:]
	}
	if len(args) > 0 {
		args = args[1:] // the group
	}
	if prog == "sg" && len(args) > 0 && args[0].text == "-c" {
		args = args[1:]
	}
	if prog == "sg" && len(args) > 0 {
		a.dashScript(args[0].text, ctx.depth+1, "the command of sg")
		return
	}
	a.shellStdin(prog, ctx)
}

// afterOperand returns the program after the first operand (taskset's mask,
// chrt's priority), which must be known to find it.
func (a *analyzer) afterOperand(prog, what string, rest []field, ctx *callCtx) []field {
	if len(rest) == 0 {
		return a.need(prog, rest, ctx)
	}
	if rest[0].splits {
		a.unresolved("cannot tell the program %s runs: its %s %s is computed at run time", prog, what, rest[0].text)
		return nil
	}
	return a.need(prog, rest[1:], ctx)
}

// shellIfNone handles a wrapper whose operands are the program to run and
// that runs $SHELL, reading its input, when there is none (setarch,
// nsenter, unshare). exit names a long option after which it runs nothing.
func (a *analyzer) shellIfNone(prog string, spec optSpec, args []field, ctx *callCtx, exit string) []field {
	opts, rest, err := spec.parse(prog, args)
	if a.optErr(prog, err, ctx) || has(opts, "h", "V", "help", "version", exit) {
		return nil
	}
	if len(rest) == 0 && !ctx.openEnded {
		a.shellStdin(prog, ctx)
		return nil
	}
	return a.need(prog, rest, ctx)
}
