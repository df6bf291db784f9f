#!/usr/bin/env bash
# Copy the third-party CRDs the tests install out of their Go modules (the
# module proxy serves them; download sites are unreachable) into a cache dir
# keyed by version, and print that dir. It holds:
#   gateway-api/   Gateway API's standard channel: GatewayClass, Gateway,
#                  HTTPRoute, GRPCRoute, ReferenceGrant
#   external-dns/  external-dns's DNSEndpoint
# The Go types the provider builds against are gateway-api v1.5.1 (v1.6.x
# needs Kubernetes 0.36); the CRDs tested are v1.6.1's, what our design
# documents name, so the provider is checked against the API servers users
# run today.
set -euo pipefail

GATEWAY_API="${GATEWAY_API_CRDS_VERSION:-v1.6.1}"
EXTERNAL_DNS="${EXTERNAL_DNS_CRDS_VERSION:-v0.20.0}"
CACHE_ROOT="${THIRDPARTY_CRDS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-cloudflare-tunnel/crds}"
DEST="$CACHE_ROOT/gateway-api-$GATEWAY_API-external-dns-$EXTERNAL_DNS"

if [[ -f "$DEST/.complete" ]]; then echo "$DEST"; exit 0; fi
mkdir -p "$CACHE_ROOT"
work="$(mktemp -d)"; out="$DEST.tmp.$$"; trap 'rm -rf "$work" "$out"' EXIT
cd "$work"   # outside any module: nothing is added to the project's go.sum
moddir() { GOFLAGS=-modcacherw GOWORK=off go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

gw="$(moddir sigs.k8s.io/gateway-api "$GATEWAY_API")"
xd="$(moddir sigs.k8s.io/external-dns "$EXTERNAL_DNS")"
mkdir -p "$out/gateway-api" "$out/external-dns"
for k in gatewayclasses gateways httproutes grpcroutes referencegrants; do
  cp "$gw/config/crd/standard/gateway.networking.k8s.io_$k.yaml" "$out/gateway-api/"
done
cp "$xd/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml" "$out/external-dns/"
chmod -R u+w "$out"
touch "$out/.complete"
rm -rf "$DEST"; mv "$out" "$DEST"
echo "$DEST"
