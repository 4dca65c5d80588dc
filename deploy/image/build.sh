#!/bin/sh
# Builds the helikon-k8s container image from scratch, with no base image and
# no registry: the static binary, a passwd/group entry for the unprivileged
# user 65532 it runs as, an empty /tmp, and the build machine's CA bundle
# (WebFetch and WebSearch verify TLS against it). `docker import` writes the
# image; the same tar is what `ctr images import` takes for a cluster's
# containerd (save it with `docker save TAG`).
#
#   sh deploy/image/build.sh BINARY [TAG]
#
# BINARY is a linux helikon-k8s built with CGO_ENABLED=0 (the release
# archive's, or `cd workspace/agentsandbox && CGO_ENABLED=0 go build
# -trimpath -o helikon-k8s ./cmd/helikon-k8s`). TAG defaults to
# helikon-k8s:snapshot. DOCKER may name podman.
set -eu
bin=$1
tag=${2:-helikon-k8s:snapshot}
docker=${DOCKER:-docker}
if [ ! -f "$bin" ]; then
	echo "build.sh: no binary at $bin" >&2
	exit 1
fi
if ! file "$bin" 2>/dev/null | grep -q 'statically linked' && ! file "$bin" 2>/dev/null | grep -q 'static-pie'; then
	if command -v file >/dev/null; then
		echo "build.sh: $bin is not a statically linked binary (build it with CGO_ENABLED=0)" >&2
		exit 1
	fi
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$dir/rootfs
mkdir -p "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
install -m 0755 "$bin" "$root/helikon-k8s"
echo 'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' >"$root/etc/passwd"
echo 'nonroot:x:65532:' >"$root/etc/group"
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
	if [ -f "$ca" ]; then
		install -m 0644 "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
		break
	fi
done
tar -C "$root" --numeric-owner --owner=0 --group=0 --sort=name -cf "$dir/rootfs.tar" .
"$docker" import \
	--change 'USER 65532:65532' \
	--change 'ENV HOME=/tmp' \
	--change 'WORKDIR /tmp' \
	--change 'EXPOSE 8080' \
	--change 'ENTRYPOINT ["/helikon-k8s"]' \
	--change 'CMD ["mcp", "--backend=k8s", "--http=0.0.0.0:8080"]' \
	"$dir/rootfs.tar" "$tag" >/dev/null
echo "$tag"
