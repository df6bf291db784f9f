#!/usr/bin/env bash
# make conformance: Gateway API's official conformance suite (the version in
# test/conformance/go.mod) against the provider's `cloudflare` GatewayClass.
#
#  1. builds (each cached): the local cluster's binaries, the provider and the
#     simulator, the suite's echo server and the suite itself
#  2. starts the local cluster (KWOK), the simulator with its edge (an account
#     holding the zones the suite's hostnames are in) and the provider
#  3. installs the CRDs (the provider's; Gateway API's standard channel at the
#     suite's version), the credentials, the GatewayClass and its parameters
#  4. runs the suite (test/conformance): its requests go to the simulator's
#     edge; its echo backends run as local processes, one per running pod
#  5. writes the suite's report to _output/conformance/report.yaml
# Fails when any test the suite runs fails. Prints each phase's time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$root/_output/conformance"
rm -rf "$out"; mkdir -p "$out/work" "$root/_output/bin"
suite_version="$(awk '$1=="sigs.k8s.io/gateway-api/conformance"{print $2; exit}' test/conformance/go.mod)"
[[ -n "$suite_version" ]] || { echo "conformance: no suite version in test/conformance/go.mod" >&2; exit 1; }

t_phase=$SECONDS; phase_name=""; timings=()
phase() {
  if [[ -n "$phase_name" ]]; then timings+=("$(printf '%-52s %4ds' "$phase_name" $((SECONDS - t_phase)))"); fi
  phase_name="$1"; t_phase=$SECONDS
  printf '\n\033[1m==> %s\033[0m\n' "$1" >&2
}
pids=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [[ -f "$out/cluster/pids" ]]; then CLUSTER_DIR="$out/cluster" FAST=1 bash hack/local-cluster-down.sh >/dev/null 2>&1 || true; fi
  phase "done"
  printf '%s\n' "${timings[@]}" >&2
  exit "$rc"
}
trap cleanup EXIT INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

phase "build: cluster binaries, provider, simulator, echo server, suite ($suite_version)"
go build -o _output/bin/ ./cmd/provider ./cmd/cloudflare-sim 2>"$out/build.log" &
build=$!
(cd test/conformance && go build -o "$root/_output/bin/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic &&
  go test -c -o "$root/_output/bin/conformance.test" .) 2>"$out/build-suite.log" &
build_suite=$!
bins="$(bash hack/local-cluster-bins.sh)"
crds="$(GATEWAY_API_CRDS_VERSION="$suite_version" bash hack/thirdparty-crds.sh)"
wait "$build" || { cat "$out/build.log" >&2; exit 1; }
wait "$build_suite" || { cat "$out/build-suite.log" >&2; exit 1; }
kubectl="$bins/kubectl"

phase "start: local cluster, simulator and its edge, provider"
kubeconfig="$(CLUSTER_DIR="$out/cluster" KWOK_NODES=2 BIN_DIR="$bins" bash hack/local-cluster-up.sh 2>"$out/cluster-up.log")" ||
  { cat "$out/cluster-up.log" >&2; exit 1; }
export KUBECONFIG="$kubeconfig"
kc() { "$kubectl" --cache-dir "$out/kubectl-cache" "$@"; }
token="conformance-$(openssl rand -hex 16)"
account="$(openssl rand -hex 16)"
sim_port="$(free_port)"; edge_port="$(free_port)"
# The zones of the hostnames the suite's routes and requests name: an
# account holding them, as a real account run against the suite would.
zones=(example.com example.org example.net second-example.org foo.com bar.com foobar.com specific.com
  wildcard.io anotherwildcard.io wildcard.org matching.com first.com second.com test.com)
zone_flags=(); for z in "${zones[@]}"; do zone_flags+=(--zone "$z"); done
CLOUDFLARE_SIM_TOKEN="$token" _output/bin/cloudflare-sim --listen "127.0.0.1:$sim_port" --edge-addr "127.0.0.1:$edge_port" \
  --account-id "$account" "${zone_flags[@]}" >"$out/sim.url" 2>"$out/sim.log" &
pids+=($!)
for _ in $(seq 100); do [[ -s "$out/sim.url" ]] && break; sleep 0.1; done
sim_url="$(cat "$out/sim.url")"; sim_base="${sim_url%/client/v4/}"

kc apply --server-side -f package/crds >/dev/null
kc apply --server-side -f "$crds/gateway-api" >/dev/null
kc wait --for=condition=Established crd --all --timeout=60s >/dev/null
_output/bin/provider --poll 10s --metrics-bind-address "127.0.0.1:$(free_port)" --health-probe-bind-address "127.0.0.1:$(free_port)" \
  >"$out/provider.log" 2>&1 &
pids+=($!)
kc create namespace crossplane-system >/dev/null
kc -n crossplane-system create secret generic cloudflare-credentials \
  --from-literal=CLOUDFLARE_API_TOKEN="$token" --from-literal=CLOUDFLARE_ACCOUNT_ID="$account" >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: ClusterProviderConfig
metadata: {name: default}
spec:
  credentials:
    source: Secret
    secretRef: {namespace: crossplane-system, name: cloudflare-credentials}
  endpoint: $sim_url
---
apiVersion: v1
kind: Namespace
metadata: {name: cloudflare-conformance}
---
# Each Gateway gets a hostname of its own, <name>.<namespace>.example.com,
# as its address: the suite's routes that name no hostname are published on
# it, and its requests without a Host of their own go to it.
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: GatewayParameters
metadata: {name: conformance, namespace: cloudflare-conformance}
spec:
  addressDomain: example.com
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: cloudflare}
spec:
  controllerName: tunnels.cloudflare.com/gateway-controller
  parametersRef: {group: tunnels.cloudflare.com, kind: GatewayParameters, name: conformance, namespace: cloudflare-conformance}
YAML

phase "suite"
set +e
(cd "$root/test/conformance" && CONFORMANCE_EDGE_ADDR="127.0.0.1:$edge_port" CONFORMANCE_SIM_BASE="$sim_base" \
  CONFORMANCE_ECHO_BASIC="$root/_output/bin/echo-basic" CONFORMANCE_REPORT="$out/report.yaml" \
  CONFORMANCE_WORK_DIR="$out/work" CONFORMANCE_VERSION="$(git -C "$root" describe --always --dirty 2>/dev/null || echo dev)" \
  "$root/_output/bin/conformance.test" -test.v -test.timeout 40m ${CONFORMANCE_ARGS:-} 2>&1 | tee "$out/suite.log")
rc=${PIPESTATUS[0]}
set -e
if [[ -f "$out/report.yaml" ]]; then echo "conformance: report in $out/report.yaml" >&2; fi
exit "$rc"
