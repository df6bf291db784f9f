#!/usr/bin/env bash
# Build Crossplane core (the `crossplane` binary that runs `core init`,
# `core start` and `rbac start`) from the Go module proxy into a cache dir
# keyed by version; print the folder holding the binary and core's CRDs
# (<folder>/crossplane, <folder>/crds). The version and every dependency are
# pinned by the tools module tools/crossplane-core, kept apart from the CLI's:
# sharing one module would change core's dependency versions.
# One file is added to a copy of core's main package at build time
# (tools/crossplane-core/metrics_bind_address.go.overlay): the environment
# variable CROSSPLANE_METRICS_BIND_ADDRESS sets the metrics address of
# `rbac start`, which has no flag for it ("0": off).
# Usage: dir="$(hack/crossplane-core.sh)"; "$dir/crossplane" core start ...
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_MOD="$ROOT/tools/crossplane-core"
MODULE=github.com/crossplane/crossplane/v2
VERSION="$(awk -v m="$MODULE" '$1==m{print $2; exit} $1=="require" && $2==m{print $3; exit}' "$TOOLS_MOD/go.mod")"
[[ -n "$VERSION" ]] || { echo "crossplane-core: $MODULE not required in $TOOLS_MOD/go.mod" >&2; exit 1; }
CACHE_ROOT="${CROSSPLANE_CORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-cloudflare-tunnel/crossplane-core}"
OVERLAY="$TOOLS_MOD/metrics_bind_address.go.overlay"
# The overlay's content is part of the key: a change rebuilds.
DEST="$CACHE_ROOT/$VERSION-$(go env GOOS)-$(go env GOARCH)-$(sha256sum "$OVERLAY" | cut -c1-8)"

if [[ -x "$DEST/crossplane" && -d "$DEST/crds" ]]; then echo "$DEST"; exit 0; fi
mkdir -p "$CACHE_ROOT"
if command -v flock >/dev/null; then   # serialize concurrent callers
  exec 9>"$CACHE_ROOT/.lock"; flock 9
  if [[ -x "$DEST/crossplane" && -d "$DEST/crds" ]]; then echo "$DEST"; exit 0; fi
fi

export GOWORK=off GOFLAGS=-modcacherw CGO_ENABLED=0
log() { echo "crossplane-core: $*" >&2; }
out="$DEST.tmp.$$"; trap 'rm -rf "$out"' EXIT
mkdir -p "$out"

src="$(cd "$TOOLS_MOD" && go mod download -json "$MODULE@$VERSION" | awk -F'"' '$2=="Dir"{print $4}')"
[[ -d "$src/cmd/crossplane" ]] || { log "no cmd/crossplane in $src"; exit 1; }
# Go refuses overlays of files in the module cache: build core's main
# package (its own files import no internal package) from a folder of the
# tools module, with the file added; every other package comes from the
# module as pinned.
main_dir="$TOOLS_MOD/.build-$$"; trap 'rm -rf "$out" "$main_dir"' EXIT
mkdir -p "$main_dir" && cp "$src"/cmd/crossplane/*.go "$main_dir/" && chmod u+w "$main_dir"/*.go
cp "$OVERLAY" "$main_dir/zz_metrics_bind_address.go"
log "building Crossplane core $VERSION (cold: ~3-4 min on 2 cores)"
(cd "$TOOLS_MOD" && go build -trimpath \
  -ldflags "-s -w -X=github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$VERSION" -o "$out/crossplane" "./$(basename "$main_dir")")
# Core's own CRDs ship in its module (cluster/crds), at the same version.
[[ -d "$src/cluster/crds" ]] || { log "no cluster/crds in $src"; exit 1; }
cp -r "$src/cluster/crds" "$out/crds"
chmod -R u+w "$out/crds"

rm -rf "$DEST" && mv "$out" "$DEST"
log "done: $DEST"; echo "$DEST"
