#!/bin/bash
# pki.sh DIR: a certificate authority, the certificates and the kubeconfigs of a loopback-only test cluster, in DIR
# (valid 30 days; up.sh makes them once per state directory). The node is named localhost: the kubelet refuses a
# loopback node IP, so the API server reaches it by host name (--kubelet-preferred-address-types=Hostname).
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
umask 077
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj "/CN=helikon-test-ca" 2>/dev/null
# cert NAME SUBJECT [SANS]: a key and a certificate signed by the CA; with SANS a server and client one.
cert() {
	local n=$1 subj=$2 san=${3:-}
	openssl req -newkey rsa:2048 -nodes -keyout "$n.key" -out "$n.csr" -subj "$subj" 2>/dev/null
	if [ -n "$san" ]; then
		printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "$n.ext"
	else
		printf 'extendedKeyUsage=clientAuth\n' > "$n.ext"
	fi
	openssl x509 -req -in "$n.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$n.crt" -days 30 -extfile "$n.ext" 2>/dev/null
	rm -f "$n.csr" "$n.ext"
}
cert apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
cert admin "/O=system:masters/CN=helikon-test-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert kubelet "/O=system:nodes/CN=system:node:localhost" "IP:127.0.0.1,DNS:localhost"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
for u in admin controller-manager scheduler kubelet; do
	cat > "$u.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: helikon-test
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$d/ca.crt"}
users:
- name: $u
  user: {client-certificate: "$d/$u.crt", client-key: "$d/$u.key"}
contexts:
- name: helikon-test
  context: {cluster: helikon-test, user: $u, namespace: default}
current-context: helikon-test
KC
done
