package shellcmd

import (
	"path"
	"regexp"
	"strings"
)

// Option grammars of programs that start another program, from their
// manuals and --help (util-linux 2.38, fakeroot 1.31, glibc 2.36 and musl
// ld.so, e2fsprogs logsave, libcap 2.66 capsh, OpenSSH 9 ssh-agent, strace
// 6.1, dbus 1.14 dbus-run-session).
var (
	setprivSpec = optSpec{short: "dhV", long: longs(
		"dump no-new-privs nnp ambient-caps: inh-caps: bounding-set: ruid: euid: rgid: egid: reuid: regid: " +
			"clear-groups keep-groups init-groups groups: securebits: pdeathsig: selinux-label: apparmor-profile: " +
			"landlock-access: landlock-rule: seccomp-filter: ptracer: reset-env help version")}
	// prlimit's resource options take an optional limit (-n1024,
	// --nofile=1024); -p works on a running process.
	prlimitSpec = optSpec{short: "c::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:hV", long: longs(
		"core:: data:: nice:: fsize:: sigpending:: memlock:: rss:: nofile:: msgqueue:: rtprio:: stack:: cpu:: " +
			"nproc:: as:: locks:: rttime:: pid: output: noheadings raw verbose help version")}
	fakerootSpec = optSpec{short: "l:f:i:s:ub:hv", long: longs("lib: faked: unknown-is-real fd-base: help version")}
	ldsoSpec     = optSpec{long: longs(
		"list verify inhibit-cache library-path: glibc-hwcaps-prepend: glibc-hwcaps-mask: inhibit-rpath: " +
			"audit: preload: argv0: list-tunables list-diagnostics help version")}
	logsaveSpec  = optSpec{short: "asv"}
	sshAgentSpec = optSpec{short: "cDdksxE:a:O:P:t:"}
	straceSpec   = optSpec{short: "a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ", long: longs(
		"abbrev: absolute-timestamps:: attach: columns: const-print-style: daemonize:: debug decode-fds:: " +
			"decode-pids: detach-on: env: failed-only fault: follow-forks help inject: instruction-pointer " +
			"interruptible: kvm: no-abbrev output-append-mode output-separately output: quiet:: raw: read: " +
			"relative-timestamps:: seccomp-bpf signal: stack-traces status: string-limit: strings-in-hex:: " +
			"successful-only summary summary-columns: summary-only summary-sort-by: summary-syscall-overhead: " +
			"summary-wall-clock syscall-number syscall-times:: tips:: timestamps:: trace-path: trace: user: verbose: " +
			"version write:")}
	dbusRunSessionSpec = optSpec{long: longs("config-file: dbus-daemon: help version")}
)

// ldso matches the names of the dynamic loader, which runs the program
// file given to it: ld.so, ld-linux-x86-64.so.2, ld64.so.2,
// ld-musl-x86_64.so.1, ld-2.31.so.
var ldso = regexp.MustCompile(`^ld(64)?([-.][A-Za-z0-9_.-]*)?\.so(\.[0-9]+)*$`)

// launcher handles the programs above; ok is false when prog is not one.
func (a *analyzer) launcher(prog string, args []field, ctx *callCtx) (next []field, ok bool) {
	switch {
	case prog == "setpriv":
		opts, rest, err := setprivSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) || has(opts, "d", "dump", "h", "V", "help", "version") {
			return nil, true
		}
		return a.need(prog, rest, ctx), true
	case prog == "prlimit":
		opts, rest, err := prlimitSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) || has(opts, "h", "V", "help", "version") {
			return nil, true
		}
		if len(rest) == 0 && !ctx.openEnded {
			return nil, true // prlimit alone or -p PID: shows or sets limits
		}
		return a.need(prog, rest, ctx), true
	case prog == "fakeroot":
		opts, rest, err := fakerootSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) || has(opts, "h", "v", "help", "version") {
			return nil, true
		}
		if lib, ok := valueField(opts, "l", "lib", "f", "faked"); ok {
			a.unresolved("fakeroot %s loads or runs code given as a file, which cannot be checked; run fakeroot without it", lib.text)
			return nil, true
		}
		if len(rest) == 0 && !ctx.openEnded {
			a.shellStdin(prog, ctx) // fakeroot alone runs $SHELL on the input
			return nil, true
		}
		return a.need(prog, rest, ctx), true
	case ldso.MatchString(prog):
		opts, rest, err := ldsoSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) || has(opts, "list", "verify", "list-tunables", "list-diagnostics", "help", "version") {
			return nil, true
		}
		if lib, ok := valueField(opts, "audit", "preload"); ok {
			a.unresolved("%s --audit and --preload load code from %s, which cannot be checked; run the program directly", prog, lib.text)
			return nil, true
		}
		return a.need(prog, rest, ctx), true
	case prog == "logsave":
		// logsave [-asv] LOGFILE PROGRAM...; a PROGRAM of - copies the input.
		_, rest, err := logsaveSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) {
			return nil, true
		}
		next := a.afterOperand(prog, "log file", rest, ctx)
		if len(next) > 0 && !next[0].dynamic && next[0].text == "-" {
			return nil, true
		}
		return next, true
	case prog == "ssh-agent":
		opts, rest, err := sshAgentSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) || has(opts, "k") {
			return nil, true
		}
		if len(rest) == 0 && !ctx.openEnded {
			return nil, true // starts the agent and prints its variables
		}
		return a.need(prog, rest, ctx), true
	case prog == "strace":
		return a.strace(args, ctx), true
	case prog == "dbus-run-session":
		opts, rest, err := dbusRunSessionSpec.parse(prog, args)
		if a.optErr(prog, err, ctx) || has(opts, "help", "version") {
			return nil, true
		}
		if d, ok := valueField(opts, "dbus-daemon"); ok {
			// The bus daemon is a program it runs too.
			a.argv([]field{d}, &callCtx{depth: ctx.depth, via: "dbus-run-session --dbus-daemon"})
		}
		return a.need(prog, rest, ctx), true
	case prog == "capsh":
		a.capsh(args, ctx)
		return nil, true
	}
	return nil, false
}

// strace runs its operands as a program, and pipes its output to a shell
// command when -o names "|cmd" or "!cmd".
func (a *analyzer) strace(args []field, ctx *callCtx) []field {
	opts, rest, err := straceSpec.parse("strace", args)
	if a.optErr("strace", err, ctx) || has(opts, "h", "V", "help", "version") {
		return nil
	}
	for _, o := range opts {
		switch o.name {
		case "o", "output":
			switch {
			case o.dynamic:
				a.unresolved("cannot tell what strace -o %s does: a value starting with | or ! is a command it runs; write it literally", o.val)
				return nil
			case strings.HasPrefix(o.val, "|") || strings.HasPrefix(o.val, "!"):
				a.dashScript(o.val[1:], ctx.depth+1, "the output command of strace -o")
			}
		case "E", "env":
			if strings.Contains(o.val, "=") || o.dynamic {
				f := field{text: o.val, dynamic: o.dynamic}
				if !envName.MatchString(f.text) {
					f.dynamic = true // the name is not a plain one
				}
				if !a.envOperand("strace -E", f) {
					return nil
				}
			}
		}
	}
	if len(rest) == 0 && (has(opts, "p", "attach") || !ctx.openEnded) {
		return nil // strace -p PID traces a running process
	}
	return a.need("strace", rest, ctx)
}

// capsh reads its options in order, each --NAME or --NAME=VALUE; -- and -+
// run the shell (/bin/bash, or --shell's) with the words after them as its
// arguments, == and =+ run capsh itself again on them.
func (a *analyzer) capsh(args []field, ctx *callCtx) {
	shell := field{text: "/bin/bash"}
	for i, f := range args {
		if f.dynamic {
			a.unresolved("cannot tell what capsh runs: its argument %s is computed at run time", f.text)
			return
		}
		switch t := f.text; {
		case t == "--" || t == "-+":
			a.addCommand([]field{shell})
			name := path.Base(shell.text)
			lang, bourne := shells[name]
			if !bourne || strings.ContainsAny(shell.text, "$`") {
				a.unresolved("capsh --shell=%s picks an interpreter helikon cannot analyse; use sh or bash", shell.text)
				return
			}
			a.checkProgramPath(shell.text)
			a.shell(name, lang, args[i+1:], ctx)
			return
		case t == "==" || t == "=+":
			a.addCommand([]field{{text: "capsh"}})
			a.capsh(args[i+1:], ctx)
			return
		case strings.HasPrefix(t, "--shell="):
			shell = field{text: strings.TrimPrefix(t, "--shell=")}
		case strings.HasPrefix(t, "--chroot="):
			a.cwdChanged("capsh --chroot") // capsh changes into the new root
		case t == "--help" || t == "-h" || t == "--license":
			return
		case !strings.HasPrefix(t, "--"):
			return // capsh exits on an argument it does not know
		}
	}
}
