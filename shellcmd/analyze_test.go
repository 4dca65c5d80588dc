package shellcmd

import (
	"slices"
	"strings"
	"testing"
)

// unres marks a case whose analysis must be unresolved; the string is a
// fragment the reason must contain.
type analyzeCase struct {
	cmd   string
	progs string // space-separated program names, in order; "" for none
	unres string // when not "", the analysis is unresolved with this fragment
}

var analyzeCases = []analyzeCase{
	// Plain commands and lists.
	{cmd: "", progs: ""},
	{cmd: "   \n\t# only a comment", progs: ""},
	{cmd: "ls -la", progs: "ls"},
	{cmd: "git status && git diff", progs: "git git"},
	{cmd: "make || echo failed; date & wait", progs: "make echo date wait"},
	{cmd: "cat f | grep x | sort -u | head", progs: "cat grep sort head"},
	{cmd: "cmd1 |& cmd2", progs: "cmd1 cmd2"},
	{cmd: "! false", progs: "false"},
	{cmd: "(cd sub && rm x)", progs: "cd rm"},
	{cmd: "{ rm a; ls; }", progs: "rm ls"},
	{cmd: "echo $(rm x)", progs: "echo rm"},
	{cmd: "echo `rm x`", progs: "echo rm"},
	{cmd: "echo \"$(rm x)\"", progs: "echo rm"},
	{cmd: "diff <(ls a) >(tee b)", progs: "diff ls tee"},
	{cmd: "if test -f x; then rm x; elif true; then :; else echo no; fi", progs: "test rm true : echo"},
	{cmd: "for f in *.txt; do wc -l \"$f\"; done", progs: "wc"},
	{cmd: "while read -r line; do echo \"$line\"; done < f", progs: "read echo"},
	{cmd: "until false; do sleep 1; done", progs: "false sleep"},
	{cmd: "case $x in a) rm a;; *) ls;; esac", progs: "rm ls"},
	{cmd: "f() { rm -rf /; }; f", progs: "rm f"},
	{cmd: "function ls { rm x; }; ls", progs: "rm ls"},
	{cmd: "rm() { echo safe; }; rm x", progs: "echo rm"},
	{cmd: "coproc cat", progs: "cat"},
	{cmd: "time -p rm x", progs: "rm"},
	{cmd: "coproc rm x", progs: "rm"},
	{cmd: "sh -c '((rm))'", progs: "sh rm", unres: "arithmetic reads rm"},
	{cmd: "((1)); ls", progs: "1 ls"}, // dash runs ( (1) ): a subshell running 1
	{cmd: "x=1 y=2", progs: ""},
	{cmd: "x=$(rm a)", progs: "rm"},
	{cmd: "FOO=bar rm x", progs: "rm"},
	{cmd: "export PATH=\"$PATH:/opt/bin\"; ls", progs: "export ls"},
	{cmd: "local x=1", progs: "local"},
	{cmd: "[[ -f x ]] && rm x", progs: "rm"},
	{cmd: "echo hi > out.txt 2>&1", progs: "echo"},
	{cmd: "cat <<EOF\nhello $(whoami)\nEOF", progs: "cat whoami"},
	{cmd: "cat <<'EOF'\n$(rm -rf /)\nEOF", progs: "cat"},
	{cmd: "echo {a,b}", progs: "echo echo"},
	{cmd: "echo {1..1000000000}{1..1000000000}", progs: "echo echo"},
	{cmd: "{1..100000}x", progs: "{1..100000}x", unres: "computed at run time"},

	// Quoting and paths resolve to the program.
	{cmd: `r\m -rf /`, progs: "rm"},
	{cmd: `"r""m" x`, progs: "rm"},
	{cmd: `r''m x`, progs: "rm"},
	{cmd: `\rm x`, progs: "rm"},
	{cmd: `"rm" x`, progs: "rm"},
	{cmd: `'rm' x`, progs: "rm"},
	{cmd: `$'\x72m' x`, progs: "rm"},
	{cmd: `$'r\155' x`, progs: "rm"},
	{cmd: "/bin/rm x", progs: "rm"},
	{cmd: "./rm x", progs: "rm"},
	{cmd: "../../usr/bin/rm x", progs: "rm", unres: "goes up from the directory"},
	{cmd: "r\\\nm x", progs: "rm"},
	{cmd: "{rm,-rf,/}", progs: "rm }"}, // bash: rm -rf /; sh: a path ending in }

	// Wrappers: both the wrapper and the program are listed.
	{cmd: "env -i rm x", progs: "env rm"},
	{cmd: "env FOO=1 BAR=2 rm x", progs: "env rm"},
	{cmd: "env -u HOME -C /tmp -- rm x", progs: "env rm"},
	{cmd: "env --chdir=/tmp --unset=X rm", progs: "env rm"},
	{cmd: "env - rm", progs: "env rm"},
	{cmd: "env -S 'rm -rf' /", progs: "env rm"},
	{cmd: "env", progs: "env"},
	{cmd: "/usr/bin/env bash -c 'rm x'", progs: "env bash rm"},
	{cmd: "command -p rm x", progs: "command rm"},
	{cmd: "command -v rm", progs: "command"},
	{cmd: "builtin cd /", progs: "builtin cd"},
	{cmd: "exec rm x", progs: "exec rm"},
	{cmd: "exec -a foo -c rm x", progs: "exec rm"},
	{cmd: "exec >log 2>&1", progs: "exec"},
	{cmd: "nice -n 5 nohup rm x", progs: "nice nohup rm"},
	{cmd: "nice -10 rm", progs: "nice rm"},
	{cmd: "nice --adjustment=3 rm", progs: "nice rm"},
	{cmd: "timeout -s KILL 5s rm x", progs: "timeout rm"},
	{cmd: "timeout --kill-after=1 --preserve-status 0.5m rm", progs: "timeout rm"},
	{cmd: "timeout 5 sudo -u bob -- rm x", progs: "timeout sudo rm"},
	{cmd: "stdbuf -o0 -eL rm x", progs: "stdbuf rm"},
	{cmd: "stdbuf --output=0 rm", progs: "stdbuf rm"},
	{cmd: "/usr/bin/time -v -o t.txt rm", progs: "time rm"},
	{cmd: "command time -p rm", progs: "command time rm"},
	{cmd: "sudo -u x rm", progs: "sudo rm"},
	{cmd: "sudo -nu root -E rm", progs: "sudo rm"},
	{cmd: "sudo --user=root HOME=/x rm", progs: "sudo rm"},
	{cmd: "sudo -l", progs: "sudo"},
	{cmd: "doas -u root rm x", progs: "doas rm"},
	{cmd: "pkexec --user root rm", progs: "pkexec rm"},
	{cmd: "setsid -f rm", progs: "setsid rm"},
	{cmd: "ionice -c 3 rm", progs: "ionice rm"},
	{cmd: "chroot /srv rm", progs: "chroot rm"},
	{cmd: "flock /tmp/l rm x", progs: "flock rm"},
	{cmd: "flock -w 5 /tmp/l -c 'rm x'", progs: "flock rm"},
	{cmd: "watch -n 1 rm x", progs: "watch rm"},
	{cmd: "watch -x rm x", progs: "watch rm"},
	{cmd: "busybox rm x", progs: "busybox rm"},
	{cmd: "unbuffer rm", progs: "unbuffer rm"},
	{cmd: "xargs -0 rm", progs: "xargs rm"},
	{cmd: "find . -name '*.o' | xargs -n 1 -P 4 rm -f", progs: "find xargs rm"},
	{cmd: "xargs", progs: "xargs echo"},
	{cmd: "xargs -I{} mv {} {}.bak", progs: "xargs mv"},
	{cmd: "xargs sh -c 'rm \"$@\"' _", progs: "xargs sh rm"},
	{cmd: `find . -exec rm {} \;`, progs: "find rm"},
	{cmd: `find . -name x -execdir rm -f {} + -o -ok mv {} y ';'`, progs: "find rm mv"},
	{cmd: "find . -okdir rm {} \\;", progs: "find rm"},
	{cmd: "find . -name '*.go' -print", progs: "find"},
	{cmd: "su -c 'rm x' bob", progs: "su rm"},
	{cmd: "runuser -u bob -- rm x", progs: "runuser rm"},
	{cmd: "runuser bob", progs: "runuser", unres: "standard input"},

	// Shell command strings, recursively.
	{cmd: "sh -c 'rm x'", progs: "sh rm"},
	{cmd: "bash -c 'sh -c \"rm x\"'", progs: "bash sh rm"},
	{cmd: "bash -lc 'rm x'", progs: "bash rm"},
	{cmd: "bash -e -o pipefail -c 'rm x'", progs: "bash rm"},
	{cmd: "bash --norc --rcfile x -c 'rm x'", progs: "bash rm"},
	{cmd: "dash -c 'rm x'", progs: "dash rm"},
	{cmd: "zsh -c 'rm x'", progs: "zsh rm"},
	{cmd: "zsh --interactive <<< 'rm x'", progs: "zsh", unres: "--interactive"},
	{cmd: "zsh -i <<< 'rm x'", progs: "zsh", unres: "interactive"},
	{cmd: "zsh -c \"ls *(e:'rm x':)\"", progs: "zsh", unres: "glob qualifier"},
	{cmd: "/bin/sh -c 'ls | rm x'", progs: "sh ls rm"},
	{cmd: "sh -c 'rm \"$1\"' _ x", progs: "sh rm"},
	{cmd: "bash script.sh arg", progs: "bash"},
	{cmd: "bash <<'EOF'\nrm -rf /\nEOF", progs: "bash rm"},
	{cmd: "bash <<< 'rm x'", progs: "bash rm"},
	{cmd: "bash <<'EOF'\necho \\\\$(rm x)\nEOF", progs: "bash echo rm"},       // quoted: bash reads \\$(rm x)
	{cmd: "bash <<EOF\necho \\$(rm x)\nEOF", progs: "bash echo rm"},           // unquoted: \$ is $ for the inner bash
	{cmd: "bash <<-EOF\n\tcat <<X\n\tX\n\trm x\n\tEOF", progs: "bash cat rm"}, // <<- strips the tabs before X
	{cmd: "sh < script.sh", progs: "sh"},
	{cmd: "trap 'rm -f /tmp/x' EXIT; ls", progs: "trap rm ls"},
	{cmd: "trap - EXIT", progs: "trap"},
	{cmd: "sudo -s <<'EOF'\nrm x\nEOF", progs: "sudo rm"},

	// Arithmetic on numbers the line sets itself is resolved.
	{cmd: "i=0; i=$((i+1)); echo $i", progs: "echo"},
	{cmd: "for ((i=0; i<3; i++)); do echo $i; done", progs: "echo"},
	{cmd: "for i in 1 2 3; do echo $((i*2)); done", progs: "echo"},
	{cmd: "for i in {1..5}; do echo $((i*2)); done", progs: "echo"},
	{cmd: "echo $((60*60)) ${#x} $((RANDOM % 3))", progs: "echo"},
	{cmd: "read -r a b; echo \"$a\"", progs: "read echo"},

	// Bypass attempts that must be unresolved.
	{cmd: "$(printf rm) -rf /", progs: "printf", unres: "computed at run time"},
	{cmd: "`echo rm` x", progs: "echo", unres: "computed at run time"},
	{cmd: "\"$(echo rm)\" x", progs: "echo", unres: "computed at run time"},
	{cmd: "a=rm; $a -rf /", unres: "$a is computed"},
	{cmd: "${CMD} x", unres: "computed at run time"},
	{cmd: "r$()m x", unres: "computed at run time"},
	{cmd: "/bin/r? x", unres: "computed at run time"},
	{cmd: "/bin/r[m] x", unres: "computed at run time"},
	{cmd: "~ x", unres: "computed at run time"},
	{cmd: "$\"rm\" x", unres: "computed at run time"},
	{cmd: "echo $\"hello\"", progs: "echo", unres: "message catalog"},
	{cmd: "eval rm x", progs: "eval", unres: "eval"},
	{cmd: "builtin eval 'rm x'", progs: "builtin eval", unres: "eval"},
	{cmd: "command eval rm", progs: "command eval", unres: "eval"},
	{cmd: ". ./x", progs: ".", unres: "from a file"},
	{cmd: "source x.sh", progs: "source", unres: "from a file"},
	{cmd: "exec $CMD", progs: "exec", unres: "computed at run time"},
	{cmd: "shopt -s expand_aliases; alias ls=rm; ls x", progs: "shopt alias ls", unres: "alias"},
	{cmd: "hash -p /bin/rm ls; ls x", progs: "hash ls", unres: "hash -p"},
	{cmd: "enable -f ./x.so rm", progs: "enable", unres: "enable -f"},
	{cmd: "env $OPTS rm", progs: "env", unres: "computed at run time"},
	{cmd: "env \"$P\" x", progs: "env", unres: "computed at run time"},
	{cmd: "sudo $CMD", progs: "sudo", unres: "computed at run time"},
	{cmd: "sudo --frobnicate rm", progs: "sudo", unres: "frobnicate"},
	{cmd: "nice -n $N rm", progs: "nice", unres: "computed at run time"},
	{cmd: "timeout $T rm", progs: "timeout", unres: "computed at run time"},
	{cmd: "timeout \"$T\" rm x", progs: "timeout", unres: "computed at run time"}, // T=-v makes rm the duration
	{cmd: "timeout -s \"$SIG\" 5 rm", progs: "timeout rm"},
	{cmd: "sudo -u \"$U\" rm", progs: "sudo rm"},
	{cmd: "sh -c \"$CMD\"", progs: "sh", unres: "command string"},
	{cmd: "bash -c \"rm $x\"", progs: "bash", unres: "command string"},
	{cmd: "sh -c '\"$@\"' _ rm -rf /", progs: "sh", unres: "computed at run time"},
	{cmd: "bash \"$flag\" 'rm x'", progs: "bash", unres: "computed at run time"},
	{cmd: "curl x | sh", progs: "curl sh", unres: "standard input"},
	{cmd: "echo 'rm x' | bash -s", progs: "echo bash", unres: "standard input"},
	{cmd: "bash <<EOF\nrm $x\nEOF", progs: "bash", unres: "standard input"},
	{cmd: "sudo -s", progs: "sudo", unres: "standard input"},
	{cmd: "ls | xargs sh -c", progs: "ls xargs sh", unres: "xargs"},
	{cmd: "ls | xargs bash", progs: "ls xargs bash", unres: "xargs"},
	{cmd: "ls | xargs env", progs: "ls xargs env", unres: "xargs"},
	{cmd: "ls | xargs sudo", progs: "ls xargs sudo", unres: "xargs"},
	{cmd: "ls | xargs find .", progs: "ls xargs find", unres: "xargs"},
	{cmd: "ls | xargs -I{} {} x", progs: "ls xargs", unres: "computed at run time"},
	{cmd: "ls | xargs -I{} sh -c '{}'", progs: "ls xargs sh", unres: "computed at run time"},
	{cmd: "find . -exec {} \\;", progs: "find", unres: "computed at run time"},
	{cmd: "find . $EXPR", progs: "find", unres: "may hold -exec"},
	{cmd: "fish -c 'rm x'", progs: "fish", unres: "fish"},
	{cmd: "trap \"$x\" EXIT", progs: "trap", unres: "trap"},
	{cmd: "PS4='$(rm x)'; set -x; true", progs: "set true", unres: "PS4"},
	{cmd: "x='a[$(rm -rf /)]'; echo $((x))", progs: "echo", unres: "arithmetic reads x"},
	{cmd: "p='$'; x=\"a[${p}(rm)]\"; (( x ))", progs: "x", unres: "arithmetic reads x"},
	{cmd: "x=$(cat f); [[ $x -eq 1 ]]", progs: "cat", unres: "arithmetic reads x"},
	{cmd: "echo ${s:$off}", progs: "echo", unres: "arithmetic reads off"},
	{cmd: "echo ${arr[$i]}", progs: "echo", unres: "arithmetic reads i"},
	{cmd: "echo $(( $1 + 1 ))", progs: "echo", unres: "arithmetic reads 1"},
	{cmd: "for i in $(seq 3); do echo $((i)); done", progs: "seq echo", unres: "arithmetic reads i"},
	{cmd: "read 'a[$(rm x)]'", progs: "read", unres: "subscript"},
	{cmd: "printf -v \"$n\" x", progs: "printf", unres: "computed at run time"},
	{cmd: "declare -i n; n=$1", progs: "declare", unres: "integer"},
	{cmd: "declare -n r=x", progs: "declare", unres: "nameref"},
	{cmd: "mapfile -C 'rm x' -c 1 a < f", progs: "mapfile", unres: "mapfile -C"},
	{cmd: "let x=y", progs: "", unres: "arithmetic reads y"},
	{cmd: "let i++", progs: "", unres: "arithmetic reads i"},
	{cmd: "((n+=1)); echo $n", progs: "n+=1 echo", unres: "arithmetic reads n"},
	{cmd: "n=1; n+=$x; echo $((n))", progs: "echo", unres: "arithmetic reads n"},
	{cmd: "trap 2 INT", progs: "trap"},
	{cmd: "echo ${x@P}", progs: "echo", unres: "@P"},
	{cmd: "echo ${!x}", progs: "echo", unres: "arithmetic reads x"},
	{cmd: "[[ -v $n ]]", progs: "", unres: "-v"},
	// Shell start-up files and exported functions run code the line does not
	// show: bash -c expands BASH_ENV (command substitution included) and
	// sources the file it names, an interactive sh does the same with ENV,
	// --rcfile/--init-file name a file an interactive bash sources, and bash
	// imports BASH_FUNC_name%% variables as functions that replace commands.
	{cmd: "BASH_ENV='$(rm -rf x)' bash -c :", progs: "bash :", unres: "BASH_ENV"},
	{cmd: "BASH_ENV=<(echo rm x) bash -c :", progs: "bash : echo", unres: "BASH_ENV"},
	{cmd: "export BASH_ENV='`rm x`'; bash -c :", progs: "export bash :", unres: "BASH_ENV"},
	{cmd: "read -r BASH_ENV; bash -c :", progs: "read bash :", unres: "BASH_ENV"},
	{cmd: "env 'BASH_ENV=$(rm x)' bash -c :", progs: "env bash :", unres: "BASH_ENV"},
	{cmd: "ENV='$(rm x)' sh -i <<< ''", progs: "sh", unres: "ENV"},
	{cmd: "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls", progs: "env bash ls", unres: "BASH_FUNC_"},
	{cmd: "env A=1 \"${x:=rm}\" -rf x", progs: "env", unres: "computed at run time"},
	{cmd: "bash --rcfile <(echo rm x) -i <<< ''", progs: "bash echo", unres: "rcfile"},
	{cmd: "bash --init-file <(echo rm x) -i <<< ''", progs: "bash echo", unres: "init-file"},
	{cmd: "sudo A=1 -u root rm x", progs: "sudo rm"}, // sudo reads variables between options
	{cmd: "sudo ./a=b rm x", progs: "sudo rm"},       // a variable for sudo: no leading /
	{cmd: "sudo 'BASH_FUNC_ls%%=() { rm; }' bash -c ls", progs: "sudo bash ls", unres: "BASH_FUNC_"},
	// bash's command hash table and alias table are arrays: an entry makes a
	// name run another program, as hash -p and alias do.
	{cmd: "BASH_CMDS['ls']=/bin/rm; ls x", progs: "ls", unres: "single quotes"},
	{cmd: "BASH_CMDS[ls]=/bin/rm; ls x", progs: "ls", unres: "BASH_CMDS"},
	{cmd: "declare -A BASH_CMDS=(['ls']=/bin/rm); ls x", progs: "declare ls", unres: "BASH_CMDS"},
	{cmd: "shopt -s expand_aliases; BASH_ALIASES['ls']=rm\nls x", progs: "shopt ls", unres: "single quotes"},
	{cmd: "shopt -s expand_aliases; BASH_ALIASES[ls]=rm\nls x", progs: "shopt ls", unres: "BASH_ALIASES"},
	// A named descriptor {var}> assigns var, evaluating a subscript in it.
	{cmd: "x='a[$(rm x)]'; echo {a[x]}>/dev/null", progs: "echo", unres: "descriptor variable a[x]"},
	{cmd: "exec {fd}>log; echo hi >&$fd", progs: "exec echo"},
	{cmd: "sudo CMD=rm -s '$CMD' -rf x", progs: "sudo", unres: "sudo -s"}, // sudo leaves $ unquoted for the shell
	{cmd: "sudo -i ls '$HOME'", progs: "sudo", unres: "sudo -s"},
	{cmd: "sudo -s ls -la", progs: "sudo ls"},
	// A shell reading commands from a process substitution or a computed
	// file runs code the line does not show.
	{cmd: "bash < <(echo rm x)", progs: "bash echo", unres: "standard input"},
	{cmd: "sh 0< <(echo rm x)", progs: "sh echo", unres: "standard input"},
	{cmd: "bash -s <> <(echo rm x)", progs: "bash echo", unres: "standard input"},
	{cmd: "bash < \"$f\"", progs: "bash", unres: "standard input"},
	{cmd: "bash /dev/stdin <<< 'rm x'", progs: "bash rm"},
	{cmd: "echo 'rm x' | bash /dev/stdin", progs: "echo bash", unres: "standard input"},
	{cmd: "bash /dev/fd/3 3< <(echo rm x)", progs: "bash echo", unres: "descriptor"},
	{cmd: "sh /proc/self/fd/0 < <(echo rm x)", progs: "sh echo", unres: "standard input"},
	// ... while plain values stay usable: a file name is like a script.
	{cmd: "ENV=production ./deploy.sh", progs: "deploy.sh"},
	{cmd: "BASH_ENV=./env.sh bash -c make", progs: "bash make"},
	{cmd: "env ENV=prod make", progs: "env make"},
	// Second review: option grammars, extended globs, history expansion,
	// bash's integer variables, builtins that run or expand commands.
	{cmd: "bash -oc posix 'rm x'", progs: "bash rm"},
	{cmd: "bash -Oc extglob 'rm x'", progs: "bash rm"},
	{cmd: "sh -eoc nounset 'rm x'", progs: "sh rm"},
	{cmd: "bash -o pipefail -eo nounset -c 'rm x'", progs: "bash rm"},
	{cmd: "bash -o \"$o\" -c 'rm x'", progs: "bash", unres: "computed at run time"},
	{cmd: "[[ x == @($(rm x)) ]]", progs: "", unres: "extended glob"},
	{cmd: "[[ x == @(<(rm x)) ]]", progs: "", unres: "extended glob"},
	{cmd: "shopt -s extglob\necho !(`rm x`)", progs: "shopt echo", unres: "extended glob"},
	{cmd: "shopt -s extglob\nls !(*.go)", progs: "shopt ls"},
	{cmd: "set -o history -H\n: rm x\n!!:1-$", progs: "set : !!:1-$", unres: "history"},
	{cmd: "shopt -so histexpand", progs: "shopt", unres: "history"},
	{cmd: "set -eo history", progs: "set", unres: "history"},
	{cmd: "set -euo pipefail; set -x; set +H; set -- -H", progs: "set set set set"},
	{cmd: "set $opts", progs: "set", unres: "computed at run time"},
	{cmd: "bash -i <<< '!!'", progs: "bash", unres: "interactive"},
	{cmd: "bash -H <<< ':'", progs: "bash", unres: "history"},
	{cmd: "bash -ic 'rm x'", progs: "bash rm"},
	{cmd: "env SHELLOPTS=history:histexpand bash <<< :", progs: "env bash :", unres: "SHELLOPTS"},
	{cmd: "set -k; ls", progs: "set ls", unres: "assignment words"},
	{cmd: "shopt -u interactive_comments", progs: "shopt", unres: "comment"},
	{cmd: "OPTIND='a[$(rm x)]'", progs: "", unres: "OPTIND"},
	{cmd: "read RANDOM", progs: "read", unres: "RANDOM"},
	{cmd: "OPTIND=1; local OPTIND; RANDOM=$$", progs: "local"},
	{cmd: "jobs -x rm x", progs: "jobs rm"},
	{cmd: "jobs -x %1 x", progs: "jobs", unres: "computed at run time"},
	{cmd: "jobs -l", progs: "jobs"},
	{cmd: "compgen -W '$(rm x)' x", progs: "compgen", unres: "word list"},
	{cmd: "compgen -W 'start stop' s", progs: "compgen"},
	{cmd: "su -lc 'rm x' bob", progs: "su rm"},
	{cmd: "su --comm 'rm x' bob", progs: "su rm"},
	{cmd: "su bob -c 'rm x'", progs: "su rm"},
	{cmd: "su bob -- -c 'rm x'", progs: "su rm"},
	{cmd: "su -s /bin/bash bob -c 'rm x'", progs: "su rm"},
	{cmd: `su -s /bin/sh bob -c "echo \$'\\'; rm x; #'"`, progs: "su echo echo rm"},
	{cmd: "su --sh=/usr/bin/perl bob -c x", progs: "su", unres: "interpreter"},
	{cmd: "su -c \"ls $x\" bob", progs: "su", unres: "command string"},
	{cmd: "runuser -u bob -m rm x", progs: "runuser rm"},
	{cmd: "SHELL=/usr/bin/python3 flock l -c x", progs: "flock x", unres: "SHELL"},
	{cmd: "SHELL=/bin/bash flock l -c 'rm x'", progs: "flock rm"},
	{cmd: "time -p -- rm x", progs: "-- rm"}, // bash skips the --
	{cmd: "trap 99 EXIT", progs: "trap 99"},  // not a signal: bash runs 99
	{cmd: "pkexec <<< 'rm x'", progs: "pkexec rm"},
	{cmd: "pkexec", progs: "pkexec", unres: "standard input"},
	{cmd: "doas -s <<< 'rm x'", progs: "doas rm"},
	{cmd: "doas -s", progs: "doas", unres: "standard input"},
	{cmd: `$'rm\c@x' y`, progs: "rm"},
	{cmd: `$'\x{72}m' y`, progs: "rm"},
	{cmd: `echo "${x:-'$(rm x)'}"`, progs: "echo", unres: "single quotes do not quote"},
	{cmd: "cat <<EOF\n${x:+$'`rm x`'}\nEOF", progs: "cat", unres: "single quotes do not quote"},
	{cmd: `echo "${x:-'a b'}" "${x/a/'$(rm x)'}" ${x:-'$(rm x)'}`, progs: "echo"},
	{cmd: "echo $(( '$(rm x)' ))", progs: "echo", unres: "single quotes"},
	{cmd: "echo $(( '1' + 2 ))", progs: "echo"},
	{cmd: "echo \"$\\\n(rm x)\"", progs: "echo rm"},
	{cmd: "cat <<EOF\nEO\\\nF\nrm x\nEOF", progs: "cat rm EOF"},
	{cmd: "docker run \\\n  -v a:b \\\n  img", progs: "docker"},
	{cmd: "# note \\\nrm x", progs: "rm"}, // a comment does not continue
	{cmd: "bash -login -c 'rm x'", progs: "bash rm"},
	{cmd: "bash -norc --noprofile -c 'rm x'", progs: "bash rm"},
	{cmd: "bash --frobnicate -c 'rm x'", progs: "bash"}, // bash refuses to start
	{cmd: "bash -rcfile /dev/stdin -ic : <<< 'rm x'", progs: "bash rm :"},
	{cmd: "sh -posix errexit -c 'rm x'", progs: "sh rm"}, // dash: -p -o errexit -s -i -x -c
	{cmd: "BASH_ENV=/dev/stdin bash -c : <<< 'rm x'", progs: "bash :", unres: "BASH_ENV"},
	{cmd: "script -qc 'rm x' /dev/null", progs: "script rm"},
	{cmd: "script /dev/null -q --command 'rm x'", progs: "script rm"},
	{cmd: "script -q /dev/null <<< 'rm x'", progs: "script", unres: "interactive shell"},
	{cmd: "sg root -c 'rm x'", progs: "sg rm"},
	{cmd: "sg - root 'rm x'", progs: "sg rm"},
	{cmd: "newgrp root <<< 'rm x'", progs: "newgrp rm"},
	{cmd: "newgrp", progs: "newgrp", unres: "standard input"},
	{cmd: "declare -a 'a=($(rm x))'", progs: "declare", unres: "list of words"},
	{cmd: "x='($(rm x))'; declare -a a=$x", progs: "declare", unres: "array"},
	{cmd: "a=(); declare a=$1", progs: "declare", unres: "array"},
	{cmd: "declare a=$1; local b=\"$2\"; declare -a c=(1 2) d='(x y)'", progs: "declare local declare"},
	{cmd: "taskset -c 0 rm x", progs: "taskset rm"},
	{cmd: "taskset -p 1 42", progs: "taskset"},
	{cmd: "taskset -- $m rm x", progs: "taskset", unres: "mask"},
	{cmd: "chrt -o 0 rm x", progs: "chrt rm"},
	{cmd: "chrt --sched-runtime 5 -d 0 rm x", progs: "chrt rm"},
	{cmd: "chrt -T 5 -d 0 rm x", progs: "chrt rm"},
	{cmd: "unshare -mR / rm x", progs: "unshare rm"},
	{cmd: "nsenter -t 1 -m/proc/1/ns/mnt rm x", progs: "nsenter rm"},
	{cmd: "setarch x86_64 -R rm x", progs: "setarch rm"},
	{cmd: "linux64 rm x", progs: "linux64 rm"},
	{cmd: "setarch x86_64 <<< 'rm x'", progs: "setarch rm"},
	{cmd: "nsenter -t 1 -m -u rm x", progs: "nsenter rm"},
	{cmd: "nsenter --mount=/proc/1/ns/mnt rm x", progs: "nsenter rm"},
	{cmd: "unshare -r --fork rm x", progs: "unshare rm"},
	{cmd: "unshare", progs: "unshare", unres: "standard input"},
	{cmd: "unshare --frob rm", progs: "unshare", unres: "frob"},
	// sh is dash: $'...' is a $ and a quoted string, &> is & and >.
	{cmd: `sh -c "echo \$'a\\'; rm x; #'"`, progs: "sh echo echo rm"},
	{cmd: `sh -c "echo \$'a\\'; x=(1); #'"`, progs: "sh echo", unres: "POSIX sh"},
	{cmd: `bash -c "echo \$'a\\'; rm x; #'"`, progs: "bash echo"},
	{cmd: `watch "echo \$'a\\'; rm x; #'"`, progs: "watch echo echo rm"},
	{cmd: `sh -c "echo \$\"a\" \$'\\n'"`, progs: "sh echo", unres: "message catalog"},
	{cmd: "sh -c '[[ a || rm ]]'", progs: "sh [[ rm"},
	{cmd: "bash -c '[[ a || rm ]]'", progs: "bash"},
	{cmd: "echo &>/dev/null rm x", progs: "echo rm"},
	{cmd: "echo &>>log A=1 rm x", progs: "echo rm"},
	{cmd: "ls &>/dev/null", progs: "ls"},
	{cmd: "rm 'x", unres: "cannot parse"},
	{cmd: "ls\x00; rm x", unres: "NUL"},
	{cmd: "if true; then", unres: "cannot parse"},
	{cmd: "sh -c 'rm \"x'", progs: "sh", unres: "cannot parse"},
	{cmd: "sh -c \"sh -c 'sh -c \\\"sh -c \\\\\\\"sh -c rm\\\\\\\"\\\"'\"", progs: "sh sh sh sh sh", unres: "deep"},
}

func TestAnalyzeTable(t *testing.T) {
	if len(analyzeCases) < 80 {
		t.Fatalf("only %d cases", len(analyzeCases))
	}
	for _, c := range analyzeCases {
		checkCase(t, Options{}, c)
	}
}

// checkCase checks one analyzeCase under o.
func checkCase(t *testing.T, o Options, c analyzeCase) {
	t.Helper()
	a := o.Analyze(c.cmd)
	if got := strings.Join(a.Programs(), " "); got != c.progs {
		t.Errorf("Analyze(%q) programs = %q, want %q (unresolved: %s)", c.cmd, got, c.progs, a.Unresolved)
	}
	switch {
	case c.unres == "" && a.Unresolved != "":
		t.Errorf("Analyze(%q) unresolved: %s", c.cmd, a.Unresolved)
	case c.unres != "" && !strings.Contains(a.Unresolved, c.unres):
		t.Errorf("Analyze(%q) unresolved = %q, want it to contain %q", c.cmd, a.Unresolved, c.unres)
	}
}

func TestAnalyzeArgs(t *testing.T) {
	tests := []struct {
		cmd  string
		want [][]string
	}{
		{`"r""m" -rf '/tmp/a b'`, [][]string{{"rm", "-rf", "/tmp/a b"}}},
		{`rm "$HOME/x" $y`, [][]string{{"rm", "$HOME/x", "$y"}}},
		{`sudo -u x rm -f a`, [][]string{{"sudo", "-u", "x", "rm", "-f", "a"}, {"rm", "-f", "a"}}},
		{`echo "a\"b\$c" 'd\e'`, [][]string{{"echo", `a"b$c`, `d\e`}}},
		{"git commit -m 'fix `foo`'", [][]string{{"git", "commit", "-m", "fix `foo`"}}},
		{`export A=1 B`, [][]string{{"export", "A=1", "B"}}},
	}
	for _, tt := range tests {
		a := Analyze(tt.cmd)
		var got [][]string
		for _, c := range a.Commands {
			got = append(got, c.Args)
		}
		if !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("Analyze(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestAnalyzeWrites(t *testing.T) {
	tests := []struct {
		cmd    string
		writes []string
		unres  bool
	}{
		{"echo x > a >> b 2> c &> d &>> e >| f 3<> g", []string{"a", "b", "c", "d", "e", "f", "g"}, false},
		{"ls 2>&1 >&2 <in 3>&-", nil, false},
		{"ls >& out", []string{"out"}, false},
		{`echo > "my file"`, []string{"my file"}, false},
		{`echo > "$f"`, []string{"$f"}, true},
		{"echo $(echo x > inner)", []string{"inner"}, false},
		{"sh -c 'echo > nested'", []string{"nested"}, false},
	}
	for _, tt := range tests {
		a := Analyze(tt.cmd)
		if !slices.Equal(a.Writes, tt.writes) {
			t.Errorf("Analyze(%q).Writes = %q, want %q", tt.cmd, a.Writes, tt.writes)
		}
		if (a.WriteUnresolved != "") != tt.unres {
			t.Errorf("Analyze(%q).WriteUnresolved = %q", tt.cmd, a.WriteUnresolved)
		}
	}
}

// TestAnalyzeBoundsBraceExpansion: many brace words, each under the
// per-word bound, must not expand without limit in one analysis.
func TestAnalyzeBoundsBraceExpansion(t *testing.T) {
	cmd := "echo" + strings.Repeat(" {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}", 100) + "; rm x"
	a := Analyze(cmd)
	total := 0
	for _, c := range a.Commands {
		total += len(c.Args)
	}
	if limit := maxBraceTotal + 2*100 + 10; total > limit {
		t.Errorf("%d arguments listed, want at most %d", total, limit)
	}
	if got := a.Programs(); !slices.Contains(got, "rm") {
		t.Errorf("programs %v lack rm", got)
	}
}

// TestAnalyzeRefusesDeepNesting: nested substitutions cost quadratic work;
// past a depth the line is refused instead of analysed.
func TestAnalyzeRefusesDeepNesting(t *testing.T) {
	for _, cmd := range []string{
		strings.Repeat("$(", 3000) + "rm" + strings.Repeat(")", 3000),
		strings.Repeat("echo `", 1) + strings.Repeat("$(", 3000) + "rm" + strings.Repeat(")", 3000) + "`",
	} {
		if a := Analyze(cmd); !strings.Contains(a.Unresolved, "syntax levels deep") {
			t.Errorf("Analyze(%.20q...) unresolved %q, want it refused for its depth", cmd, a.Unresolved)
		}
	}
	// Deep enough to overflow the parser's stack, which is fatal (the test
	// binary crashes without the guards); within the size limit it must
	// be refused for its depth, beyond it for its size.
	for _, n := range []int{60 << 10, 300 << 10} {
		cmd := strings.Repeat("$(", n) + "rm" + strings.Repeat(")", n)
		if a := Analyze(cmd); a.Unresolved == "" || slices.Contains(a.Programs(), "rm") {
			t.Errorf("%d nested substitutions: unresolved %q, programs %d", n, a.Unresolved, len(a.Commands))
		}
	}
	if a := Analyze("cat > f <<'EOF'\n" + strings.Repeat("x", maxScriptBytes) + "\nEOF"); !strings.Contains(a.Unresolved, "bytes long") {
		t.Errorf("a command over the size limit: unresolved %q", a.Unresolved)
	}
	ok := strings.Repeat("$(", 50) + "echo x" + strings.Repeat(")", 50)
	if a := Analyze("echo " + ok); strings.Contains(a.Unresolved, "deep") {
		t.Errorf("50 nested substitutions refused: %s", a.Unresolved)
	}
}

func TestAnalyzeMaxDepth(t *testing.T) {
	cmd := "sh -c 'sh -c \"rm x\"'"
	if a := (Options{MaxDepth: 1}).Analyze(cmd); !strings.Contains(a.Unresolved, "deep") {
		t.Errorf("MaxDepth 1: unresolved = %q", a.Unresolved)
	}
	if a := (Options{MaxDepth: 2}).Analyze(cmd); a.Unresolved != "" {
		t.Errorf("MaxDepth 2: unresolved = %q", a.Unresolved)
	}
}

// TestDirUnknown: a cd the line cannot follow, or a wrapper that changes
// directory, is reported (the policy-file guard fails closed on it); a
// literal cd is not.
func TestDirUnknown(t *testing.T) {
	for _, tt := range []struct {
		line    string
		unknown bool
	}{
		{"cp a b", false},
		{"cd prep && cp ../a ../.claude/settings.json", false},
		{"cd /srv/x; sed -i s/a/b/ settings.json", false},
		{`cd "$d" && sed -i x settings.json`, true},
		{"cd - && cp a b", true},
		{"cd ~/.config && cp a helikon/settings.json", true},
		{"env -C sub cp a b", true},
		{"sudo -D /x cp a b", true},
		{"find . -execdir cp a b ';'", true},
		{"bash -c 'cd $(pwd)/x && cp a b'", true},
	} {
		a := Options{Dir: "/w/root"}.Analyze(tt.line)
		if (a.DirUnknown != "") != tt.unknown {
			t.Errorf("%s: DirUnknown %q, want unknown=%v", tt.line, a.DirUnknown, tt.unknown)
		}
	}
}
