#!/usr/bin/env bash
# Build the mkimage helper (tools/crossplane-cli/mkimage) and print its path.
# mkimage turns the static provider binary into a runtime image tarball without
# docker; see its package comment.
#
# No version-keyed cache dir like hack/crossplane-cli.sh: mkimage is source in
# this repo, so `go build` decides staleness itself. With the CLI's
# dependencies (go-containerregistry) already in the module and build caches,
# a rebuild takes ~2 s and an up-to-date one well under a second.
# Usage: "$(hack/mkimage.sh)" -binary ... -o ...
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_MOD="$ROOT/tools/crossplane-cli"
OUT_DIR="${TOOLS_BIN_DIR:-$ROOT/_output/tools}"
BIN="$OUT_DIR/mkimage"

mkdir -p "$OUT_DIR"
# The tools module is its own module: no go.work, and never the target
# GOOS/GOARCH a caller may have exported for the provider build.
(cd "$TOOLS_MOD" && GOWORK=off GOFLAGS=-modcacherw CGO_ENABLED=0 GOOS= GOARCH= \
  go build -trimpath -o "$BIN" ./mkimage) >&2
echo "$BIN"
