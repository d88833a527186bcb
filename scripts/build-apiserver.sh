#!/usr/bin/env bash
# Builds the real kube-apiserver and etcd that the e2e tests run (test/support/kube-apiserver.ts)
# into test/apiserver/bin/ (ignored by git), from the modules pinned in test/apiserver/go.mod.
# A second run with the same go.mod, go.sum and this script does nothing; a changed pin rebuilds,
# reusing Go's module and build caches. Needs only `go` (see docs/testing.md for the times).
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$script")/../test/apiserver"
command -v go >/dev/null || {
  echo "build-apiserver: go is not on PATH: the e2e tests against a real API server need it (Debian: apt-get install golang-go, or go.dev/dl)" >&2
  exit 1
}

stamp=$(cat go.mod go.sum "$script" | sha256sum | cut -c1-16)
if [ -x bin/kube-apiserver ] && [ -x bin/etcd ] && [ "$(cat bin/stamp 2>/dev/null)" = "$stamp" ]; then
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
echo "build-apiserver: building kube-apiserver $release and etcd with $(go env GOVERSION) (a first build takes minutes)" >&2
rm -rf bin.tmp
start=$SECONDS
CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "$ldflags" -o bin.tmp/ go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver
mv bin.tmp/server bin.tmp/etcd
echo "$stamp" >bin.tmp/stamp
rm -rf bin
mv bin.tmp bin
echo "build-apiserver: built test/apiserver/bin/kube-apiserver and etcd in $((SECONDS - start)) s" >&2
