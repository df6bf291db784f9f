#!/usr/bin/env bash
# Build helm from the Go module proxy into a cache dir keyed by version; print
# the binary's path. The version and every dependency are pinned by the tools
# module in tools/helm (go.mod + go.sum), kept apart so helm's dependency tree
# stays out of the provider's go.mod.
# Usage: "$(hack/helm.sh)" template cluster/charts/provider-cloudflare-tunnel
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_MOD="$ROOT/tools/helm"
MODULE=helm.sh/helm/v4
VERSION="$(awk -v m="$MODULE" '$1==m{print $2; exit} $1=="require" && $2==m{print $3; exit}' "$TOOLS_MOD/go.mod")"
[[ -n "$VERSION" ]] || { echo "helm: $MODULE not required in $TOOLS_MOD/go.mod" >&2; exit 1; }
CACHE_ROOT="${HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-cloudflare-tunnel/helm}"
DEST="$CACHE_ROOT/$VERSION-$(go env GOOS)-$(go env GOARCH)"
BIN="$DEST/helm"

if [[ -x "$BIN" ]]; then echo "$BIN"; exit 0; fi
mkdir -p "$CACHE_ROOT"
if command -v flock >/dev/null; then   # serialize concurrent callers (make -j, parallel CI steps)
  exec 9>"$CACHE_ROOT/.lock"; flock 9
  if [[ -x "$BIN" ]]; then echo "$BIN"; exit 0; fi
fi

export GOWORK=off GOFLAGS=-modcacherw CGO_ENABLED=0
log() { echo "helm: $*" >&2; }
out="$DEST.tmp.$$"; trap 'rm -rf "$out"' EXIT
mkdir -p "$out"

log "building helm $VERSION (cold: ~3 min on 2 cores)"
(cd "$TOOLS_MOD" && go build -trimpath \
  -ldflags "-s -w -X=helm.sh/helm/v4/internal/version.version=$VERSION" -o "$out/helm" "$MODULE/cmd/helm")

rm -rf "$DEST" && mv "$out" "$DEST"
log "done: $BIN"; echo "$BIN"
