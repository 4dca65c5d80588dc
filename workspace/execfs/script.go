package execfs

// The scripts every operation runs, one exec each. They are constants: a
// path, a name or data reaches them only as a positional argument ("$3"),
// never as part of their text, so no file name can be code. Each starts
// with prelude; $1 is the root's physical path and $2 the call's nonce, or
// "-" when the nonce is the first line of standard input (every runner but
// one with Options.NoStdin): read there, it is in no argument vector or
// environment that /proc shows another process of the workspace.
//
// The reply protocol: a script writes its payload to standard output and
// ends with a trailer line "\n<nonce> ok\n" or "\n<nonce> E <code>\n"
// (codes in codeErr; for "elsewhere" the payload is the resolved path).
// The nonce is fresh random hex per call, so nothing a file or its name
// contains can forge a trailer, and a reply cut short (an output cap, a
// killed shell) has none and is an error, never a short success. Standard error carries the tools' own messages, which the Go
// side quotes for the "io" code.

// prelude defines walk, which resolves a path inside the root as package
// sandbox does with os.Root (see walker there: the same steps, link and
// restart budgets, and the same answers for "..", missing components and
// components after a file), and enter, which makes a resolved directory
// the working directory and checks with the kernel's getcwd that it is
// that directory inside the root.
//
// expected, after a walk, refuses the call (code elsewhere, the resolved
// path as payload) unless its argument is "any" or "=" and the expected
// paths joined with "//": a clean relative path has no empty component,
// so "//" cannot occur inside one, and "//PATH//" is found in
// "//LIST//" only as a whole element.
//
// walk leaves: d, the resolved path relative to the root without links
// ("" for the root); n, its number of components; ex=1 when every
// component exists; nd=1 when the last exists and is not a directory.
// It walks from directory to directory with cd -P, looking at each
// component relative to the one before (test -L, readlink), so the work is
// linear in the path's length.
const prelude = `set -f
unset CDPATH
LC_ALL=C
export LC_ALL
R=${1%/}
N=$2
if [ "$N" = - ]; then IFS= read -r N || exit 0; fi
SF='%f %a %s %i %d %u %g %h %Y %y'
fail() { printf '\n%s E %s\n' "$N" "$1"; exit 0; }
reply() { printf '\n%s ok\n' "$N"; exit 0; }
push() {
	if [ "$n" = 0 ]; then d=$c; else d=$d/$c; fi
	n=$((n + 1))
}
budget() {
	if [ "$steps" -gt 255 ] && [ "$restarts" -gt 8 ]; then fail toolong; fi
}
here() {
	if [ "$depth" = "$n" ]; then return 0; fi
	if [ "$depth" = $((n - 1)) ]; then
		cd -P -- "./${d##*/}" 2>/dev/null || return 1
	else
		restarts=$((restarts + 1)) steps=$((steps + n))
		budget
		cd -P -- "$R/$d" 2>/dev/null || return 1
	fi
	depth=$n
}
walk() {
	todo=$1 more=1 d= n=0 depth=0 ex=1 nd=0 links=0 steps=0 restarts=0
	cd -P -- "$R/" 2>/dev/null || fail gone
	while [ "$more" = 1 ]; do
		case $todo in
		*/*) c=${todo%%/*} todo=${todo#*/} ;;
		*) c=$todo more=0 ;;
		esac
		steps=$((steps + 1))
		budget
		if [ "$nd" = 1 ]; then fail notdir; fi
		case $c in
		'' | .) continue ;;
		..)
			if [ "$n" = 0 ]; then fail outside; fi
			case $d in */*) d=${d%/*} ;; *) d= ;; esac
			n=$((n - 1)) ex=1
			continue
			;;
		esac
		if [ "$ex" = 0 ] || ! here; then
			ex=0
			push
			continue
		fi
		if [ -L "./$c" ]; then
			links=$((links + 1))
			if [ "$links" -gt 8 ]; then fail loop; fi
			t=$(readlink -- "./$c" && echo .) || fail race
			t=${t%?}
			t=${t%?}
			case $t in '' | /*) fail abslink ;; esac
			if [ "$more" = 1 ]; then todo=$t/$todo; else todo=$t more=1; fi
		elif [ -d "./$c" ]; then
			push
		elif [ -e "./$c" ]; then
			push
			nd=1
		else
			push
			ex=0
		fi
	done
}
enter() {
	cd -P -- "$R/$1" 2>/dev/null || fail race
	w=$R/$1
	w=${w%/}
	if [ -z "$w" ]; then w=/; fi
	if [ "$(exec pwd -P)" != "$w" ]; then fail race; fi
}
split() {
	case $d in */*) p=${d%/*} b=${d##*/} ;; *) p= b=$d ;; esac
}
existing() {
	walk "$1"
	if [ "$ex" = 0 ]; then fail noent; fi
}
slashed() {
	case $1 in */) walk "$1" ;; esac
}
expected() {
	case $1 in
	=*)
		case //${1#=}// in
		*"//${d:-.}//"*) ;;
		*)
			printf %s "$d"
			fail elsewhere
			;;
		esac
		;;
	esac
}
dirslash() {
	case $1 in
	*/) if [ -L "./$2" ] || { [ -e "./$2" ] && ! [ -d "./$2" ]; }; then fail notdir; fi ;;
	esac
}
`

// scriptStat: $3 path. Payload: the stat line (statFormat) of the file,
// links followed.
const scriptStat = `existing "$3"
if [ "$n" = 0 ]; then
	enter ""
	b=.
else
	split
	enter "$p"
fi
stat -c "$SF" -- "./$b" || fail race
reply
`

// scriptRead: $3 path, $4 and $5 the dd skip and count in blocks of
// readBlock bytes, $6 the largest size to read (-1: any), $7 the paths
// expected (see expected), checked before anything is read. Payload: the
// stat line, "\n", the resolved path, NUL, then the content of blocks
// $4..$4+$5 unless the file is larger than $6. A FIFO, device, socket or
// directory is never opened: its type is checked first.
const scriptRead = `existing "$3"
expected "$7"
if [ "$n" = 0 ]; then fail notreg; fi
split
enter "$p"
if [ -L "./$b" ]; then fail race; fi
if ! [ -f "./$b" ]; then fail notreg; fi
s=$(stat -c "$SF" -- "./$b") || fail race
printf '%s\n%s\0' "$s" "$d"
z=${s#* * }
z=${z%% *}
if [ "$6" -ge 0 ] && [ "$z" -gt "$6" ]; then reply; fi
dd if="./$b" bs=65536 skip="$4" count="$5" iflag=fullblock 2>/dev/null || fail io
if [ -L "./$b" ]; then fail race; fi
reply
`

// scriptReadDir: $3 path, $4 the record separator. Payload: one record per
// entry, "<separator> <stat line> ./<name>\n", entries not followed (a link
// is listed as a link). The separator is random, as the nonce, but not the
// nonce: stat prints it, so it is in stat's arguments, and all a process of
// the workspace that reads it there can forge is an entry of a directory it
// could write to anyway.
// stat runs on batches of 256 names to stay far below ARG_MAX.
const scriptReadDir = `S=$4
existing "$3"
if [ "$nd" = 1 ]; then fail notdir; fi
enter "$d"
set +f
k=0
set --
for f in * .[!.]* ..?*; do
	if [ -e "./$f" ] || [ -L "./$f" ]; then
		set -- "$@" "./$f"
		k=$((k + 1))
	fi
	if [ "$k" -ge 256 ]; then
		stat -c "$S $SF %n" -- "$@"
		set --
		k=0
	fi
done
if [ "$k" -gt 0 ]; then stat -c "$S $SF %n" -- "$@"; fi
reply
`

// scriptWrite: $3 path (refused after the walk, so that a path outside is
// refused as outside first, when it names a directory: the root, a
// trailing slash, a last component "." or ".."), $4 phase (all: the whole write; begin, append,
// commit: a write in several execs), $5 "w" or "u" (an update: $6 is the
// stat line the content was read from), $7 the temporary file's nonce,
// $8 how the data comes: "stdin", or in the arguments after $9, "b64"
// (base64, decoded by base64 -d) or "esc" (printf %b escapes), $9 the
// paths expected (see expected), checked in every phase right after the
// walk: before a parent is made or anything is written. Payload
// (all, commit): "1" when the file was created, "0" when replaced, "\n", the resolved path; (begin, append): the temporary file's
// name, NUL, the resolved parent directory.
//
// The data goes to ".<name>.helikon-<nonce>.tmp" next to the target,
// created exclusively (set -C) 0600 when it replaces a file; commit gives
// it the old file's owner (when allowed) and permission and sticky bits,
// checks for an update that the file is still the one read (same stat
// line), and renames it over the target (mv -T: never into a directory).
const scriptWrite = `walk "$3"
expected "$9"
case $3 in */ | . | */. | .. | */..) fail notreg ;; esac
if [ "$ex" = 1 ] && [ "$nd" = 0 ]; then fail notreg; fi
split
tb=$b
if [ "${#b}" -gt 200 ]; then tb=$(printf '%.200s' "$b"); fi
t=.$tb.helikon-$7.tmp
bail() { rm -f -- "./$t"; fail "$1"; }
put() {
	case $8 in
	stdin) cat ;;
	b64)
		shift 9
		printf %s "$@" | base64 -d
		;;
	*)
		shift 9
		printf %b "$@"
		;;
	esac
}
case $4 in
all | begin)
	if [ "$ex" = 0 ] && [ -n "$p" ]; then
		(cd -P -- "$R/" && mkdir -p -- "./$p") || fail io
	fi
	enter "$p"
	if [ -L "./$b" ]; then fail race; fi
	if [ -e "./$b" ]; then
		if ! [ -f "./$b" ]; then fail notreg; fi
		umask 077
	elif [ "$5" = u ]; then
		fail changed
	fi
	set -C
	put "$@" >"./$t" || bail io
	set +C
	;;
*)
	enter "$p"
	if ! [ -f "./$t" ] || [ -L "./$t" ]; then fail race; fi
	put "$@" >>"./$t" || bail io
	;;
esac
case $4 in begin | append)
	printf '%s\0%s' "$t" "$p"
	reply
	;;
esac
if [ -L "./$b" ]; then bail race; fi
old=
if [ -e "./$b" ]; then
	if ! [ -f "./$b" ]; then bail notreg; fi
	old=$(stat -c "$SF" -- "./$b") || bail race
fi
if [ "$5" = u ] && [ "$old" != "$6" ]; then bail changed; fi
if [ -n "$old" ]; then
	set -- $old
	chown -- "$6:$7" "./$t" 2>/dev/null
	m=$2
	case $m in ????) s=${m%???} m=${m#?} ;; *) s=0 ;; esac
	case $s in 1 | 3 | 5 | 7) m=1$m ;; esac
	chmod "$m" "./$t" || bail io
fi
mv -f -T -- "./$t" "./$b" || bail io
if [ -n "$old" ]; then printf '0\n%s' "$d"; else printf '1\n%s' "$d"; fi
reply
`

// scriptAbort: $3 the resolved parent directory, $4 the temporary file's
// name. Removes what an unfinished write in several execs left.
const scriptAbort = `enter "$3"
if [ -f "./$4" ] && ! [ -L "./$4" ]; then rm -f -- "./$4"; fi
reply
`

// scriptRemove: $3 the parent (as given), $4 the last component, which is
// not followed: a link is removed, not its target; $5 the whole path. A
// path ending in a slash names a directory: it is resolved whole first (a
// link there that leads out is refused as outside), and a link or a file
// at its end is not a directory, as the kernel has it.
const scriptRemove = `slashed "$5"
existing "$3"
if [ "$nd" = 1 ]; then fail notdir; fi
enter "$d"
dirslash "$5" "$4"
if [ -d "./$4" ] && ! [ -L "./$4" ]; then
	rmdir -- "./$4" 2>/dev/null && reply
	if [ -n "$(ls -A -- "./$4")" ]; then fail notempty; fi
	fail io
elif [ -e "./$4" ] || [ -L "./$4" ]; then
	rm -f -- "./$4" || fail io
else
	fail noent
fi
reply
`

// scriptRename: $3 and $4 the old parent and last component, $5 and $6
// the new ones, $7 and $8 the whole old and new paths. The last
// components are not followed; a trailing slash is as for scriptRemove.
const scriptRename = `slashed "$7"
slashed "$8"
existing "$5"
if [ "$nd" = 1 ]; then fail notdir; fi
np=$d
enter "$np"
dirslash "$8" "$6"
existing "$3"
if [ "$nd" = 1 ]; then fail notdir; fi
enter "$d"
if ! [ -e "./$4" ] && ! [ -L "./$4" ]; then fail noent; fi
dirslash "$7" "$4"
mv -f -T -- "./$4" "$R/$np/$6" || fail io
reply
`

// scriptRoot: $1 the root as the engine names it. Payload: its physical
// path, for New, "\n", and "b64" when the workspace has base64.
const scriptRoot = `cd -P -- "$R/" 2>/dev/null || fail gone
printf '%s\n' "$(exec pwd -P)"
if command -v base64 >/dev/null 2>&1; then printf b64; fi
reply
`
