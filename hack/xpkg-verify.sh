#!/usr/bin/env bash
# Verify a built provider package against its sources: Provider metadata and
# every CRD of package/crds in the package layer, every examples/ file in the
# examples layer, and a runtime image whose /usr/local/bin/provider runs
# (`provider --help` exits 0 and documents --poll) next to a parsable CA bundle.
# The checks live in tools/crossplane-cli/xpkgverify (go-containerregistry from
# the crossplane CLI's tools module); this script builds and runs it.
#
# Usage: hack/xpkg-verify.sh [path.xpkg]
#   default: $XPKG, else _output/provider-cloudflare-tunnel-latest.xpkg (the
#   last `make xpkg`). Exits non-zero on any failed check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

XPKG="${1:-${XPKG:-_output/provider-cloudflare-tunnel-latest.xpkg}}"
[[ -f "$XPKG" ]] || { echo "xpkg-verify: no package at $XPKG; run 'make xpkg' first" >&2; exit 1; }

OUT_DIR="${TOOLS_BIN_DIR:-$ROOT/_output/tools}"
mkdir -p "$OUT_DIR"
# go build decides staleness itself (see hack/mkimage.sh); never with a
# caller's target GOOS/GOARCH, since the verifier runs here.
(cd tools/crossplane-cli && GOWORK=off GOFLAGS=-modcacherw CGO_ENABLED=0 GOOS= GOARCH= \
  go build -trimpath -o "$OUT_DIR/xpkgverify" ./xpkgverify) >&2

echo "xpkg-verify: checking $XPKG -> $(readlink -f "$XPKG")" >&2
"$OUT_DIR/xpkgverify" -xpkg "$XPKG" -meta package/crossplane.yaml -crds package/crds -webhooks package/webhookconfiguration.yaml -examples examples -help-contains=--poll
