#!/bin/sh
# Whole-process start-up benchmarks of the helikon CLI against a Go hello
# world and bubblewrap, as root and as an unprivileged user, in one run so
# that load hits all alike (BENCHMARKS.md, "Start-up"). Run by hand, from
# the repository root, as root (runuser switches to the unprivileged user):
#
#	apt-get install -y hyperfine bubblewrap
#	sh cmd/helikon/testdata/startup-bench.sh [USER] [RUNS] [OLD]
#
# USER defaults to nobody; the binaries are built into a directory under
# /tmp that USER can read. OLD is a git revision whose helikon binary runs in
# the same hyperfine invocations for comparison (e72bca1, the last single
# binary, unless given; "none" for none), built as its README said (go build,
# with cgo unless it said CGO_ENABLED=0). The helikon binary is built as the README's
# CGO_ENABLED=0 go build -o bin/ ./cmd/... does, without helikon-agent,
# which none of the commands timed here runs.
# The builds run at normal priority, hyperfine with $PRIO (default chrt -f 50,
# real-time priority, which keeps wall times close to a quiet machine's on a
# loaded one; PRIO= for none).
set -eu
prio=${PRIO-chrt -f 50}
user=${1:-nobody}
runs=${2:-100}
old=${3:-e72bca1}
dir=$(mktemp -d /tmp/helikon-startup-XXXXXX)
chmod 755 "$dir"
CGO_ENABLED=0 go build -o "$dir/helikon" ./cmd/helikon
mkdir "$dir/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello world") }\n' >"$dir/hello/main.go"
printf 'module hello\n\ngo 1.26\n' >"$dir/hello/go.mod"
(cd "$dir/hello" && go build -o "$dir/hello-go" .)
oldhelp="" oldexec="" oldpar=""
if [ "$old" != none ]; then
	mkdir "$dir/src"
	git archive "$old" | tar -x -C "$dir/src"
	# As that revision's README built it: static where it said so.
	cgo=1
	grep -q 'CGO_ENABLED=0 go build' "$dir/src/README.md" && cgo=0
	(cd "$dir/src" && CGO_ENABLED=$cgo go build -o "$dir/old/helikon" ./cmd/helikon)
	oldhelp="$dir/old/helikon --help"
	oldexec="$dir/old/helikon exec -- /bin/true"
	oldpar="sh -c 'seq 200 | xargs -P 8 -I{} $dir/old/helikon exec -- /bin/true'"
fi
mkdir "$dir/proj" "$dir/out"
chown "$user" "$dir/proj" "$dir/out"
for f in "$dir/helikon" "$dir/old/helikon"; do
	[ -f "$f" ] && ls -l "$f" | awk -v f="${f#$dir/}" '{printf "%s: %.1f MB\n", f, $5 / 1e6}'
done
bwrap="bwrap --ro-bind / / --unshare-all --dev /dev --proc /proc /bin/true"
cd "$dir/proj"
for who in root "$user"; do
	run=""
	[ "$who" = root ] || run="runuser -u $user --"
	echo "== $who"
	# shellcheck disable=SC2086 # $prio and $run are words; the old binary's commands are absent with OLD=none
	$prio $run hyperfine -N --warmup 10 --runs "$runs" --export-markdown "$dir/out/$who.md" \
		/bin/true "$dir/hello-go" "$bwrap" "$dir/helikon --help" ${oldhelp:+"$oldhelp"} \
		"$dir/helikon exec --backend host -- /bin/true" "$dir/helikon exec -- /bin/true" ${oldexec:+"$oldexec"}
	cat "$dir/out/$who.md"
	echo "== $who, eight in parallel: 200 commands through xargs -P 8"
	$prio $run hyperfine -N --warmup 2 --runs 10 --export-markdown "$dir/out/$who-parallel.md" \
		"sh -c 'seq 200 | xargs -P 8 -I{} /bin/true'" \
		"sh -c 'seq 200 | xargs -P 8 -I{} $dir/hello-go'" \
		"sh -c 'seq 200 | xargs -P 8 -I{} $bwrap'" \
		"sh -c 'seq 200 | xargs -P 8 -I{} $dir/helikon exec -- /bin/true'" ${oldpar:+"$oldpar"}
	cat "$dir/out/$who-parallel.md"
done
