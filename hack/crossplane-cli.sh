#!/usr/bin/env bash
# Build the crossplane CLI from the Go module proxy into a cache dir keyed by
# version; print the binary's path. The version and every dependency are pinned
# by the tools module in tools/crossplane-cli (go.mod + go.sum), kept apart so
# its dependency tree stays out of the provider's go.mod.
# Usage: "$(hack/crossplane-cli.sh)" resource validate ...
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_MOD="$ROOT/tools/crossplane-cli"
MODULE=github.com/crossplane/cli/v2
VERSION="$(awk -v m="$MODULE" '$1==m{print $2; exit} $1=="require" && $2==m{print $3; exit}' "$TOOLS_MOD/go.mod")"
[[ -n "$VERSION" ]] || { echo "crossplane-cli: $MODULE not required in $TOOLS_MOD/go.mod" >&2; exit 1; }
CACHE_ROOT="${CROSSPLANE_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-cloudflare-tunnel/crossplane-cli}"
DEST="$CACHE_ROOT/$VERSION-$(go env GOOS)-$(go env GOARCH)"
BIN="$DEST/crossplane"

if [[ -x "$BIN" ]]; then echo "$BIN"; exit 0; fi
mkdir -p "$CACHE_ROOT"
if command -v flock >/dev/null; then   # serialize concurrent callers (make -j, parallel CI steps)
  exec 9>"$CACHE_ROOT/.lock"; flock 9
  if [[ -x "$BIN" ]]; then echo "$BIN"; exit 0; fi
fi

export GOWORK=off GOFLAGS=-modcacherw CGO_ENABLED=0
log() { echo "crossplane-cli: $*" >&2; }
out="$DEST.tmp.$$"; trap 'rm -rf "$out"' EXIT
mkdir -p "$out"

log "building crossplane CLI $VERSION (cold: ~4 min on 2 cores)"
(cd "$TOOLS_MOD" && go build -trimpath \
  -ldflags "-s -w -X=github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$VERSION" -o "$out/crossplane" "$MODULE/cmd/crossplane")

rm -rf "$DEST" && mv "$out" "$DEST"
log "done: $BIN"; echo "$BIN"
