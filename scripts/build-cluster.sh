#!/usr/bin/env bash
# Builds the real Kubernetes programs the e2e tests run into test/apiserver/bin/ (ignored by git):
# kube-apiserver and etcd (test/support/kube-apiserver.ts), and the single node of
# test/support/node-cluster.ts: kubelet, kube-controller-manager, kube-scheduler, kube-proxy,
# containerd with its runc shim and ctr, and the CNI plugins. Kubernetes comes from the modules
# pinned in test/apiserver/go.mod (one `go build`: the programs share most packages, which compile
# once); containerd and the CNI plugins from the versions pinned below, each with its own go.sum.
# A second run with the same pins and this script does nothing; a changed pin rebuilds, reusing
# Go's module and build caches. Needs only `go` (runc is Debian's; see docs/testing.md for the times).
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$script")/../test/apiserver"
command -v go >/dev/null || {
  echo "build-cluster: go is not on PATH: the e2e tests against a real API server and node need it (Debian: apt-get install golang-go, or go.dev/dl)" >&2
  exit 1
}

containerd=github.com/containerd/containerd/v2@v2.4.2
cni_plugins=github.com/containernetworking/plugins@v1.10.0

stamp=$(cat go.mod go.sum "$script" | sha256sum | cut -c1-16)
if [ "$(cat bin/stamp 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi

# The release goes into /version (kubectl and kpt read it) as Kubernetes' own build stamps it.
release=$(sed -n 's/^\tk8s.io\/kubernetes \(v[0-9.]*\).*/\1/p' go.mod)
IFS=. read -r major minor _ <<<"${release#v}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$release -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

# Static, no debug information, no paths of this machine: the smallest and quickest build.
# -mod=readonly: go.sum must already hold every module (nothing is resolved anew in CI).
echo "build-cluster: building Kubernetes $release, etcd, containerd and CNI plugins with $(go env GOVERSION) (a first build takes minutes)" >&2
rm -rf bin.tmp
start=$SECONDS
programs=()
for cmd in kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy; do
  programs+=("k8s.io/kubernetes/cmd/$cmd")
done
CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "$ldflags" -o bin.tmp/ go.etcd.io/etcd/server/v3 "${programs[@]}"
mv bin.tmp/server bin.tmp/etcd
# `go install module/pkg@version` builds with that module's own go.mod and go.sum: pinned, and checked
# against the checksum database like any download. Tags leave out the snapshotters this node does not use.
GOBIN="$PWD/bin.tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" -tags "no_btrfs no_devmapper no_zfs" \
  "${containerd%@*}/cmd/containerd@${containerd#*@}" \
  "${containerd%@*}/cmd/containerd-shim-runc-v2@${containerd#*@}" \
  "${containerd%@*}/cmd/ctr@${containerd#*@}"
mkdir -p bin.tmp/cni
GOBIN="$PWD/bin.tmp/cni" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
  "${cni_plugins%@*}/plugins/main/bridge@${cni_plugins#*@}" \
  "${cni_plugins%@*}/plugins/main/loopback@${cni_plugins#*@}" \
  "${cni_plugins%@*}/plugins/ipam/host-local@${cni_plugins#*@}" \
  "${cni_plugins%@*}/plugins/meta/portmap@${cni_plugins#*@}"
echo "$stamp" >bin.tmp/stamp
rm -rf bin
mv bin.tmp bin
echo "build-cluster: built test/apiserver/bin/ in $((SECONDS - start)) s" >&2
