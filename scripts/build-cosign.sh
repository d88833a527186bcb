#!/usr/bin/env bash
# Builds cosign (the release's image signer, and the image tests' against a registry on loopback) into
# tools/cosign/bin/ (ignored by git), from the module pinned in tools/cosign/go.mod. A second run with the
# same go.mod, go.sum and this script does nothing; a changed pin rebuilds, reusing Go's module and build
# caches. Needs only `go` (docs/releasing.md gives the times).
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$script")/../tools/cosign"
command -v go >/dev/null || {
  echo "build-cosign: go is not on PATH: signing the images needs it (Debian: apt-get install golang-go, or go.dev/dl)" >&2
  exit 1
}

stamp=$(cat go.mod go.sum "$script" | sha256sum | cut -c1-16)
if [ -x bin/cosign ] && [ "$(cat bin/stamp 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi

# Static, no debug information, no paths of this machine. -mod=readonly: go.sum must already hold every
# module (nothing is resolved anew in CI). cosign's version comes from the module's own build information.
version=$(sed -n 's/^\tgithub.com\/sigstore\/cosign\/v3 \(v[0-9.]*\).*/\1/p' go.mod)
echo "build-cosign: building cosign $version with $(go env GOVERSION) (a first build takes minutes)" >&2
rm -rf bin.tmp
start=$SECONDS
CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "-s -w" -o bin.tmp/cosign github.com/sigstore/cosign/v3/cmd/cosign
echo "$stamp" >bin.tmp/stamp
rm -rf bin
mv bin.tmp bin
echo "build-cosign: built tools/cosign/bin/cosign in $((SECONDS - start)) s" >&2
