#!/usr/bin/env bash
# make demo: the whole product on this machine, no cluster and no Cloudflare
# account needed. Builds what it needs (cached), starts a local Kubernetes
# control plane (kube-apiserver, etcd, controller-manager, scheduler, KWOK fake
# nodes), the Cloudflare API simulator and the provider; applies a
# ClusterProviderConfig, a CloudflareTunnel and the design's Ingresses; waits
# until everything is Ready; prints a summary; keeps running until Ctrl-C,
# then stops everything it started.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$root/_output/demo"
mkdir -p "$out" "$root/_output/bin"
step() { printf '\n\033[1m==> %s\033[0m\n' "$*" >&2; }
info() { printf '    %s\n' "$*" >&2; }
die() { printf '\033[31mdemo: %s\033[0m\n' "$*" >&2; exit 1; }
for tool in go openssl curl awk; do command -v "$tool" >/dev/null || die "$tool is required (apt-get install $tool)"; done

pids=()
cleanup() {
  trap - EXIT INT TERM
  # Stop first, talk after: with output piped (make demo | tee), Ctrl-C
  # also ends the reader, and a write must not cut the cleanup short.
  trap '' PIPE
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "$out/env" "$out/sim-auth-header"
  if [[ -f "$out/cluster/pids" ]]; then CLUSTER_DIR="$out/cluster" FAST=1 bash hack/local-cluster-down.sh >/dev/null 2>&1 || true; fi
  { step "Stopped the provider, the simulator and the cluster"; } 2>/dev/null || true
}
trap cleanup EXIT INT TERM

step "Building the local cluster (kube-apiserver, etcd, controller-manager, scheduler, kubectl, KWOK), the provider and the Cloudflare simulator — the first run takes about 11 minutes on 2 cores, later runs seconds"
# The provider builds beside the cluster's binaries: on a cold machine one's
# module downloads overlap the other's compile.
go build -o _output/bin/ ./cmd/provider ./cmd/cloudflare-sim 2>"$out/build.log" &
build=$!
bins="$(bash hack/local-cluster-bins.sh)"
kubectl="$bins/kubectl"
wait "$build" || { cat "$out/build.log" >&2; die "the provider did not build"; }

step "Starting the local cluster"
kubeconfig="$(CLUSTER_DIR="$out/cluster" KWOK_NODES=2 BIN_DIR="$bins" bash hack/local-cluster-up.sh 2>"$out/cluster-up.log")" || { cat "$out/cluster-up.log" >&2; die "the cluster did not start"; }
export KUBECONFIG="$kubeconfig"
kc() { "$kubectl" --cache-dir "$out/kubectl-cache" "$@"; }
info "kubeconfig: $kubeconfig"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 10000)); }
step "Starting the Cloudflare API simulator"
token="demo-$(openssl rand -hex 16)"
account="$(openssl rand -hex 16)"
sim_port="$(free_port)"
CLOUDFLARE_SIM_TOKEN="$token" _output/bin/cloudflare-sim --listen "127.0.0.1:$sim_port" --account-id "$account" \
  --zone example.com >"$out/sim.url" 2>"$out/sim.log" &
pids+=($!)
for _ in $(seq 50); do [[ -s "$out/sim.url" ]] && break; sleep 0.1; done
sim_url="$(cat "$out/sim.url")"; sim_base="${sim_url%/client/v4/}"
info "simulator: $sim_url (account $account, zone example.com)"

step "Installing CRDs and the cloudflare IngressClass"
kc apply --server-side -f package/crds >/dev/null
kc apply -f examples/ingress/ingressclass.yaml >/dev/null
kc wait --for=condition=Established crd --all --timeout=60s >/dev/null

step "Starting the provider (logs: $out/provider.log)"
_output/bin/provider --poll 10s --metrics-bind-address "127.0.0.1:$(free_port)" --health-probe-bind-address "127.0.0.1:$(free_port)" \
  >"$out/provider.log" 2>&1 &
pids+=($!)

step "Configuring credentials: a token Secret and the default ClusterProviderConfig (endpoint: the simulator)"
kc create namespace crossplane-system --dry-run=client -o yaml | kc apply -f - >/dev/null
kc -n crossplane-system create secret generic cloudflare-credentials \
  --from-literal=CLOUDFLARE_API_TOKEN="$token" --from-literal=CLOUDFLARE_ACCOUNT_ID="$account" \
  --dry-run=client -o yaml | kc apply -f - >/dev/null
cat <<YAML | kc apply -f - >/dev/null
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: ClusterProviderConfig
metadata: {name: default}
spec:
  credentials:
    source: Secret
    secretRef: {namespace: crossplane-system, name: cloudflare-credentials}
  endpoint: $sim_url
YAML

# What make tour needs to play against this demo; the token stays in a
# file of the user's own (curl -H @file), never on a command line.
(umask 077
 printf 'Authorization: Bearer %s\n' "$token" >"$out/sim-auth-header"
 printf 'KUBECONFIG=%s\nKUBECTL=%s\nSIM_BASE=%s\nSIM_URL=%s\n' "$kubeconfig" "$kubectl" "$sim_base" "$sim_url" >"$out/env")

step "Applying a CloudflareTunnel, Services and the design's Ingresses (hack/demo/manifests.yaml)"
kc apply -f hack/demo/manifests.yaml >/dev/null
ns=redis-cf-tunnel; cft=redis-cache-azure-development

waitfor() { # DESCRIPTION TIMEOUT COMMAND...
  local what=$1 t=$2; shift 2
  local deadline=$(( $(date +%s) + t ))
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s) < deadline )) || { tail -20 "$out/provider.log" >&2; die "timed out waiting for $what"; }
    sleep 1
  done
  info "$what"
}
waitfor "the tunnel exists in Cloudflare and its token is stored" 120 kc -n $ns wait --for=condition=TokenStored cloudflaretunnel/$cft --timeout=2s
waitfor "cloudflared pods are running on the fake nodes" 120 kc -n $ns wait --for=condition=DeploymentReady cloudflaretunnel/$cft --timeout=2s
tunnel_id="$(kc -n $ns get cloudflaretunnel $cft -o jsonpath='{.status.tunnelID}')"
# No container runs under KWOK: play cloudflared connecting to Cloudflare's edge.
curl -sf -X POST "$sim_base/__sim/tunnels/$tunnel_id/connectors" -d '{"count": 2}' >/dev/null
info "two cloudflared connectors marked connected in the simulator (KWOK runs no containers)"
waitfor "the CloudflareTunnel is Ready" 120 kc -n $ns wait --for=condition=Ready cloudflaretunnel/$cft --timeout=2s
waitfor "every managed resource is Ready" 180 kc -n $ns wait --for=condition=Ready tunnels,hostnameroutes,networkroutes,vpcservices,dnsrecords,publichostnames --all --timeout=2s
waitfor "the public Ingress has its address" 60 sh -c "[ -n \"\$('$kubectl' --cache-dir '$out/kubectl-cache' -n $ns get ingress web -o jsonpath='{.status.loadBalancer.ingress[0].hostname}')\" ]"

step "Kubernetes"
kc -n $ns get cloudflaretunnels,publichostnames,tunnels,hostnameroutes,networkroutes,vpcservices,dnsrecords,ingresses,services,deployments,pods,poddisruptionbudgets
step "Cloudflare (the simulator's account)"
curl -sf "$sim_base/__sim/state" | python3 hack/demo/summary.py 2>/dev/null || curl -sf "$sim_base/__sim/state"
echo
info "Cloudflare API calls so far: $(curl -sf "$sim_base/__sim/stats" | sed -n 's/.*"total_requests":\([0-9]*\).*/\1/p')  ($sim_base/__sim/stats)"

step "The demo keeps running. Try:"
info "export KUBECONFIG=$kubeconfig"
info "$kubectl -n $ns get cloudflaretunnels,publichostnames,tunnels,hostnameroutes,networkroutes,vpcservices,dnsrecords,ingress"
info "$kubectl -n $ns delete ingress web      # the CNAME and tunnel rules go away in the simulator"
info "curl -s $sim_base/__sim/state            # what the simulated Cloudflare account holds"
info "make tour                              # in another terminal: the product, scene by scene"
info "Ctrl-C stops the provider, the simulator and the cluster."
if [[ "${DEMO_EXIT:-0}" == 1 ]]; then exit 0; fi
while :; do sleep 3600 & wait $! ; done
