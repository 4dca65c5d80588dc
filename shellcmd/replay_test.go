package shellcmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// replayAttacks are lines on which the real bash runs touch although the
// line does not show it as a program: parser and option-grammar divergences
// (shell option clusters, su's option grammar, extended glob patterns),
// history expansion, set -k, interactive comments, bash's integer
// variables, and builtins that run or expand commands (jobs -x, compgen -W).
var replayAttacks = []string{
	// bash and dash take -o's and -O's argument from the next word and go on
	// reading the cluster: -oc is -o (next word) and -c.
	"bash -oc posix 'touch pwned'",
	"bash -Oc extglob 'touch pwned'",
	"sh -eoc nounset 'touch pwned'",
	// A substitution inside an extended glob pattern runs: in [[ ]] always,
	// elsewhere once extglob is on.
	"[[ x == @($(touch pwned)) ]]",
	"[[ x == @(`touch pwned`) ]]",
	"shopt -s extglob\necho !(`touch pwned`)",
	"shopt -s extglob\ncase x in @($(touch pwned))) ;; esac",
	// History expansion rewrites a line before it is parsed.
	"set -o history -H\n: touch pwned\n!!:1-$",
	"bash -c $'set -H; shopt -so history\\n: touch pwned\\n!!:1-$'",
	"bash -ic $'set -o history\\n: touch pwned\\n!!:1-$'",
	"bash -i <<'EOF'\n: touch pwned\n!!:1-$\nEOF",
	"bash -o history -H <<'EOF'\n: touch pwned\n!!:1-$\nEOF",
	"env SHELLOPTS=history:histexpand bash <<'EOF'\n: touch pwned\n!!:1-$\nEOF",
	// set -k puts every assignment word in the environment.
	"set -k; bash -c : BASH_ENV='$(touch pwned)'",
	// An interactive shell with interactive_comments off runs what follows #.
	"bash -ic $'shopt -u interactive_comments\\n# ; touch pwned'",
	// bash's own integer variables evaluate what is assigned to them.
	"OPTIND='a[$(touch pwned)]'",
	"x='a[$(touch pwned)]'; RANDOM=$x",
	"read SRANDOM <<< 'a[$(touch pwned)]'",
	"HISTCMD='a[$(touch pwned)]'",
	"for OPTIND in 'a[$(touch pwned)]'; do :; done",
	"declare OPTIND='a[$(touch pwned)]'",
	"mapfile RANDOM <<< 'a[$(touch pwned)]'",
	"x='a[$(touch pwned)]'; RANDOM+=$x",
	"x='a[$(touch pwned)]'; OPTIND=(\"$x\")",
	// declare reads a value (...) for an array as a compound assignment
	// and expands it.
	"declare -a 'a=($(touch pwned))'",
	"f() { local -a 'a=($(touch pwned))'; }; f",
	"declare -A 'm=([$(touch pwned)]=1)'",
	"x='($(touch pwned))'; declare -a a=$x",
	"a=(); x='($(touch pwned))'; declare a=$x",
	"read -a a <<< x; x='($(touch pwned))'; declare a=$x",
	"declare -a a; declare a='($(touch pwned))'",
	"declare -a a+='($(touch pwned))'",
	"typeset -a 'a=([0]=`touch pwned`)'",
	"readonly -a 'a=($(touch pwned))'",
	"declare -a a='(x)' b='($(touch pwned))'",
	"'declare' -a 'a=($(touch pwned))'",
	// Builtins that run a command or expand a word list.
	"jobs -x touch pwned",
	"compgen -W '$(touch pwned)' x",
	// $'...' decoded as bash does: \c@ is NUL, which ends the string, and
	// \x takes any number of digits in braces.
	"$'touch\\c@xyz' pwned",
	"$'\\x{74}ouch' pwned",
	// Single quotes that do not quote: in ${x:-word} within double quotes
	// or a here-document, and in arithmetic.
	`echo "${x:-'$(touch pwned)'}"`,
	`echo "${x:=$'$(touch pwned)'}"`,
	`x=a; echo "${x:+'$(touch pwned)'}"`,
	`echo "${x:-${y:-'$(touch pwned)'}}"`,
	"cat <<EOF\n${x:-'$(touch pwned)'}\nEOF",
	"echo $(( '$(touch pwned)' ))",
	"a=(); a['$(touch pwned)']=1",
	"a=(); echo ${a[$'$(touch pwned)']}",
	"[[ 'a[$(touch pwned)]' -eq 1 ]]",
	`x=1; echo "${x:0:'a[$(touch pwned)]'}"`,
	"for (( i='a[$(touch pwned)]'; 0; )); do :; done",
	// bash removes backslash-newline before it tokenizes, where the parser
	// does not: after a $, and in the lines of a here-document.
	"$\\\n'\\x74ouch' pwned",
	"echo \"$\\\n(touch pwned)\"",
	"cat <<EOF\nx\nEO\\\nF\ntouch pwned\nEOF",
	// bash reads long options with one dash too, and sources an rcfile or
	// BASH_ENV of /dev/stdin from the input; dash reads -posix as -p -o.
	"bash -rcfile /dev/stdin -i <<< 'touch pwned'",
	"bash -rcfile /dev/stdin -ic true <<< 'touch pwned'",
	"bash --rcfile /dev/stdin -ic true <<< 'touch pwned'",
	"bash -login -c 'touch pwned'",
	"sh -posix errexit -c 'touch pwned'",
	"BASH_ENV=/dev/stdin bash -c : <<< 'touch pwned'",
	"env BASH_ENV=/dev/fd/0 bash -c : <<< 'touch pwned'",
	"ENV=/dev/stdin sh -ic true <<< 'touch pwned'",
	// sh is dash on Debian: $'...' is a $ and a quoted string there, and
	// &> is & and >, so words after the redirection run as a command.
	"sh -c \"echo \\$'a\\\\'; touch pwned; #'\"",
	"sh -c 'echo &>/dev/null touch pwned'",
	// dash runs [[ as a command: here touch ]] creates pwned through ]].
	"ln -s pwned ']]' && sh -c '[[ a || touch ]]'",
	// Wrappers from util-linux: a program, or $SHELL on the input.
	"taskset -c 0 touch pwned",
	"chrt -o 0 touch pwned",
	"setarch x86_64 -R touch pwned",
	"setarch -R touch pwned",
	"linux64 touch pwned",
	"setarch x86_64 <<< 'touch pwned'",
	"unshare -f touch pwned",
	"unshare <<< 'touch pwned'",
	"nsenter -F touch pwned",
	"nsenter <<< 'touch pwned'",
	// script runs its -c string with a shell.
	"script -qc 'touch pwned' /dev/null",
	// bash's time keyword skips a -- after it.
	"time -- touch pwned",
	"time -p -- touch pwned",
}

// replayRootAttacks need su, sg and newgrp, which run without a password
// for root.
var replayRootAttacks = []string{
	"su -mc 'touch pwned' root <<< ''",
	"su -fc 'touch pwned' root <<< ''",
	"su --comm 'touch pwned' root <<< ''",
	"su --comm='touch pwned' root <<< ''",
	"su root -- -c 'touch pwned' <<< ''",
	"su root -s/usr/bin/perl -c pwned.pl <<< ''",
	"su root --sh=/usr/bin/perl -c pwned.pl <<< ''",
	"runuser -u root -m touch pwned",
	"sg root -c 'touch pwned'",
	"sg root 'touch pwned'",
	"newgrp root <<< 'touch pwned'",
	"unshare -mS 0 touch pwned", // -m takes no value: -S takes 0
}

// TestReplayAttacksAgainstBash runs each attack with the real bash, checks
// that it does run touch, and that Analyze lists touch or reports the line
// unresolved: a deny list of touch would otherwise pass the line.
func TestReplayAttacksAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the attacks cannot be replayed")
	}
	attacks := slices.Clone(replayAttacks)
	if _, err := exec.LookPath("msgfmt"); err == nil {
		// $"..." is translated through a catalog the line writes, and
		// the translation is expanded.
		attacks = append(attacks, `printf 'msgid "hello"\nmsgstr "$(touch pwned)"\n' > x.po && `+
			`mkdir -p C.UTF-8/LC_MESSAGES && msgfmt -o C.UTF-8/LC_MESSAGES/x.mo x.po && `+
			`LC_ALL=C.UTF-8 TEXTDOMAINDIR=. TEXTDOMAIN=x bash -c 'echo $"hello"'`)
	} else {
		t.Log("no msgfmt: the $\"...\" translation attack is not replayed")
	}
	haveAll := os.Geteuid() == 0
	for _, p := range []string{"su", "runuser", "sg", "newgrp", "perl", "unshare"} {
		if _, err := exec.LookPath(p); err != nil {
			haveAll = false
		}
	}
	if haveAll {
		attacks = append(attacks, replayRootAttacks...)
	} else {
		t.Log("not root, or su, runuser, sg, newgrp or perl missing: those attacks are only analysed")
	}
	for _, cmd := range attacks {
		dir := t.TempDir()
		// pwned.pl creates pwned when perl compiles it (perl -c runs BEGIN).
		if err := os.WriteFile(filepath.Join(dir, "pwned.pl"), []byte("BEGIN { open my $f, '>', 'pwned' }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(bash, "-c", cmd)
		c.Dir = dir
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		c.Run() // the exit status does not matter, the file does
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err != nil {
			t.Errorf("%q did not run touch under this bash, so the case tests nothing: %v", cmd, err)
			continue
		}
		if a := Analyze(cmd); a.Unresolved == "" && !slices.Contains(a.Programs(), "touch") {
			t.Errorf("Analyze(%q) = %q, resolved, but bash ran touch", cmd, a.Programs())
		}
	}
	for _, cmd := range replayRootAttacks {
		if a := Analyze(cmd); a.Unresolved == "" && !slices.Contains(a.Programs(), "touch") && !slices.Contains(a.Programs(), "perl") {
			t.Errorf("Analyze(%q) = %q, resolved, but the line runs touch or perl", cmd, a.Programs())
		}
	}
}

// TestANSICAgainstBash compares the decoding of $'...' with what bash
// makes of it: a program name must be decoded exactly as bash does, or a
// deny list misses it.
func TestANSICAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	for _, lit := range []string{
		`$'rm'`, `$'\x72m'`, `$'r\155'`, `$'\u0072m'`, `$'\U00000072m'`, `$'rm\c@x'`, `$'rm\x00x'`,
		`$'\x{72}m'`, `$'\x{0072}m'`, `$'\x{}rm'`, `$'\x7'`, `$'\x'`, `$'\xg'`, `$'\0162m'`, `$'\1621'`,
		`$'\777'`, `$'\700'`, `$'\cA\c?\ca\c['`, `$'\c\\x'`, `$'x\c'`, `$'\q\'\"\?\\'`, `$'\a\b\e\E\f\n\r\t\v'`,
		`$'\u'`, `$'\u7'`, `$'\U0000007'`, `$'\8\9'`, `$'\c'`, `$'\x{7'`, `$'\x{fff72}m'`,
	} {
		c := exec.Command(bash, "-c", "printf '%s' "+lit)
		c.Env = []string{"LC_ALL=C"}
		want, err := c.Output()
		if err != nil {
			t.Errorf("bash on %s: %v", lit, err)
			continue
		}
		f, err := syntax.NewParser().Parse(strings.NewReader("echo "+lit), "")
		if err != nil {
			t.Fatalf("parse %s: %v", lit, err)
		}
		w := f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
		got := wordField(w)
		if got.dynamic || !bytes.Equal([]byte(got.text), want) {
			t.Errorf("%s decodes to %q (dynamic %v), bash makes %q", lit, got.text, got.dynamic, want)
		}
	}
}
