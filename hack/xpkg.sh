#!/usr/bin/env bash
# Build the provider's Crossplane package (.xpkg) without docker:
#   1. static provider binary   -> _output/bin/linux_<arch>/provider
#   2. runtime image (mkimage)  -> _output/runtime.tar   (binary + CA bundle, user 65532)
#   3. crossplane xpkg build    -> _output/provider-cloudflare-tunnel-<version>.xpkg
#      (package/crossplane.yaml + package/crds, examples/, runtime image embedded)
# Prints the package path on stdout; progress and the size go to stderr.
# _output/provider-cloudflare-tunnel-latest.xpkg links to the last package
# built, which is what `make xpkg-verify` checks by default.
#
# Env (the Makefile passes its own so `make build` and this build agree):
#   VERSION        package/binary version   [git describe --tags --always --dirty]
#   LDFLAGS        go -ldflags              [-s -w -X .../internal/version.Version=$VERSION]
#   GOFLAGS_BUILD  extra go build flags     [-trimpath]
#   ARCH           target GOARCH            [amd64]
#   CA_BUNDLE      PEM roots for the image  [/etc/ssl/certs/ca-certificates.crt]
#   SOURCE_DATE_EPOCH  image Created time   [0: digests stay reproducible]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

NAME=provider-cloudflare-tunnel
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)}"
LDFLAGS="${LDFLAGS:--s -w -X github.com/context-labs/provider-cloudflare-tunnel/internal/version.Version=$VERSION}"
GOFLAGS_BUILD="${GOFLAGS_BUILD:--trimpath}"
ARCH="${ARCH:-amd64}"
CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
export GOFLAGS="${GOFLAGS:--modcacherw}"

OUT=_output
BIN="$OUT/bin/linux_$ARCH/provider"
RUNTIME="$OUT/runtime.tar"
suffix=""; [[ "$ARCH" == amd64 ]] || suffix="-$ARCH"
XPKG="$OUT/$NAME-$VERSION$suffix.xpkg"
LATEST="$OUT/$NAME-latest.xpkg"

log() { echo "xpkg: $*" >&2; }
t0=$SECONDS
step() { log "$1 ($((SECONDS - t0))s)"; }

[[ -f "$CA_BUNDLE" ]] || { log "error: CA bundle $CA_BUNDLE not found; install it with 'apt-get install ca-certificates' or set CA_BUNDLE"; exit 1; }

# 1. Same flags as `make build` (CGO_ENABLED=0, -trimpath, $LDFLAGS): on a
#    linux/amd64 host both share the build cache, so one warms the other.
step "building provider $VERSION for linux/$ARCH (cold: several minutes; warm: seconds)"
mkdir -p "$(dirname "$BIN")"
# shellcheck disable=SC2086 # GOFLAGS_BUILD is a list of flags
CGO_ENABLED=0 GOOS=linux GOARCH="$ARCH" go build $GOFLAGS_BUILD -ldflags "$LDFLAGS" -o "$BIN" ./cmd/provider

# 2. Runtime image. mkimage writes atomically and reproducibly.
step "building mkimage"
mkimage="$(bash hack/mkimage.sh)"
step "building runtime image"
"$mkimage" -binary "$BIN" -ca "$CA_BUNDLE" -arch "$ARCH" -tag "$NAME:runtime-$ARCH" -o "$RUNTIME"

# 3. Package. Written to a unique temp name first, so neither a failed build
#    nor a concurrent one leaves a half-written .xpkg under the final name.
step "building crossplane CLI (cached by version)"
crossplane="$(bash hack/crossplane-cli.sh)"
step "building package"
tmp="$(mktemp "$OUT/.xpkg.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
"$crossplane" xpkg build -f package --examples-root=examples --embed-runtime-image-tarball="$RUNTIME" -o "$tmp" >&2
chmod 0644 "$tmp"   # mktemp creates it 0600
mv -f "$tmp" "$XPKG"
ln -sfn "$(basename "$XPKG")" "$LATEST"

size=$(stat -c %s "$XPKG")
log "done in $((SECONDS - t0))s: $XPKG ($(awk -v b="$size" 'BEGIN{printf "%.1f MiB", b/1048576}'), $size bytes)"
echo "$XPKG"
