#!/usr/bin/env bash
# Copy the third-party CRDs the tests install out of their Go modules (the
# module proxy serves them; download sites are unreachable) into a cache dir
# keyed by version, and print that dir. It holds:
#   gateway-api/   Gateway API's standard channel: GatewayClass, Gateway,
#                  HTTPRoute, GRPCRoute, ReferenceGrant
#   external-dns/  external-dns's DNSEndpoint
#   prometheus-operator/  ServiceMonitor, PodMonitor, PrometheusRule (the
#                  Helm chart's monitoring objects). The operator's own
#                  module is not served, only its API types module, so the
#                  CRDs are generated from those types with controller-gen,
#                  the way the operator generates them.
# The Go types the provider builds against are gateway-api v1.5.1 (v1.6.x
# needs Kubernetes 0.36); the CRDs tested are v1.6.1's, what our design
# documents name, so the provider is checked against the API servers users
# run today.
set -euo pipefail

GATEWAY_API="${GATEWAY_API_CRDS_VERSION:-v1.6.1}"
EXTERNAL_DNS="${EXTERNAL_DNS_CRDS_VERSION:-v0.20.0}"
PROMETHEUS_OPERATOR="${PROMETHEUS_OPERATOR_CRDS_VERSION:-v0.95.2}"
CACHE_ROOT="${THIRDPARTY_CRDS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-cloudflare-tunnel/crds}"
DEST="$CACHE_ROOT/gateway-api-$GATEWAY_API-external-dns-$EXTERNAL_DNS-prometheus-operator-$PROMETHEUS_OPERATOR"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ -f "$DEST/.complete" ]]; then echo "$DEST"; exit 0; fi
mkdir -p "$CACHE_ROOT"
if command -v flock >/dev/null; then   # test packages run in parallel and may all ask at once
  exec 9>"$CACHE_ROOT/.lock"; flock 9
  if [[ -f "$DEST/.complete" ]]; then echo "$DEST"; exit 0; fi
fi
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

# controller-gen is the project's own (go.mod's tool), run on a scratch
# module that requires only the operator's API types.
gen="$(cd "$ROOT" && GOFLAGS=-modcacherw go tool -n controller-gen)"
mkdir -p "$work/pm" "$out/prometheus-operator"
printf 'module scratch\n\ngo 1.26.0\n' >"$work/pm/go.mod"
printf 'package scratch\n\nimport _ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"\n' >"$work/pm/scratch.go"
(cd "$work/pm" && export GOFLAGS=-modcacherw GOWORK=off &&
  go get "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring@$PROMETHEUS_OPERATOR" 2>/dev/null && go mod tidy >/dev/null 2>&1 &&
  "$gen" crd:crdVersions=v1,maxDescLen=0 paths=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1 output:crd:artifacts:config="$work/pm/crds")
for k in servicemonitors podmonitors prometheusrules; do
  cp "$work/pm/crds/monitoring.coreos.com_$k.yaml" "$out/prometheus-operator/"
done
chmod -R u+w "$out"
touch "$out/.complete"
rm -rf "$DEST"; mv "$out" "$DEST"
echo "$DEST"
