#!/bin/bash
# mkimg.sh ROOTFS NAME OUT.tar CMD-JSON: writes an OCI image archive with ROOTFS as its one (uncompressed) layer,
# named NAME for `ctr images import` (the io.containerd.image.name annotation). Written here rather than taken from
# a tool because no image tool is packaged for Debian 12 that works without a registry or a daemon; the layout is the
# OCI image spec's, and the archive is reproducible (sorted, owner 0, mtime 0).
set -euo pipefail
root=$1 name=$2 out=$3 cmd=$4
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/blobs/sha256"
# blob FILE: moves FILE into blobs/ under its digest; prints "digest size".
blob() { local d s; d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1"); mv "$1" "$w/blobs/sha256/$d"; echo "$d $s"; }
tar -C "$root" --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name -cf "$w/layer" .
read -r L LS < <(blob "$w/layer")
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin:/usr/bin"],"Cmd":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$cmd" "$L" > "$w/config"
read -r C CS < <(blob "$w/config")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$C" "$CS" "$L" "$LS" > "$w/manifest"
read -r M MS < <(blob "$w/manifest")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' "$M" "$MS" "$name" "${name##*:}" > "$w/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$w/oci-layout"
tar -C "$w" -cf "$out" oci-layout index.json blobs
