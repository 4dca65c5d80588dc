#!/bin/sh
# Whole-process start-up benchmarks of the helikon CLI against a Go hello
# world and bubblewrap, as root and as an unprivileged user, in one run so
# that load hits all alike (BENCHMARKS.md, "Start-up"). Run by hand, from
# the repository root, as root (runuser switches to the unprivileged user):
#
#	apt-get install -y hyperfine bubblewrap
#	sh cmd/helikon/testdata/startup-bench.sh [USER] [RUNS]
#
# USER defaults to nobody; the binaries are built into a directory under
# /tmp that USER can read.
set -eu
user=${1:-nobody}
runs=${2:-100}
dir=$(mktemp -d /tmp/helikon-startup-XXXXXX)
chmod 755 "$dir"
go build -o "$dir/helikon" ./cmd/helikon
mkdir "$dir/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello world") }\n' >"$dir/hello/main.go"
printf 'module hello\n\ngo 1.26\n' >"$dir/hello/go.mod"
(cd "$dir/hello" && go build -o "$dir/hello-go" .)
mkdir "$dir/proj"
chown "$user" "$dir/proj"
ls -l "$dir/helikon" | awk '{printf "binary: %.1f MB\n", $5 / 1e6}'
bwrap="bwrap --ro-bind / / --unshare-all --dev /dev --proc /proc /bin/true"
cd "$dir/proj"
for who in root "$user"; do
	run=""
	[ "$who" = root ] || run="runuser -u $user --"
	echo "== $who"
	$run hyperfine -N --warmup 10 --runs "$runs" --export-markdown "$dir/$who.md" \
		/bin/true "$dir/hello-go" "$dir/helikon --help" "$bwrap" \
		"$dir/helikon exec --backend host -- /bin/true" "$dir/helikon exec -- /bin/true"
	cat "$dir/$who.md"
	echo "== $who, eight in parallel: 200 commands through xargs -P 8"
	$run hyperfine -N --warmup 2 --runs 10 \
		"sh -c 'seq 200 | xargs -P 8 -I{} /bin/true'" \
		"sh -c 'seq 200 | xargs -P 8 -I{} $dir/helikon exec -- /bin/true'"
done
