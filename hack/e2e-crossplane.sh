#!/usr/bin/env bash
# make e2e-crossplane: install the provider's package into real Crossplane core
# on the local cluster, exactly as cluster/crossplane/README.md tells a user to,
# and prove the installed provider works with the permissions it is granted.
#
#  1. builds (each cached by version): the local cluster, Crossplane core
#     v2.3.4, the crossplane CLI, the loopback OCI registry, two package
#     versions (v0.0.1: the last release, hack/upgrade-from, from this
#     repository's history; v0.0.2: this tree)
#  2. starts the local cluster (KWOK), the Cloudflare simulator and the registry;
#     pushes v0.0.1
#  3. starts Crossplane core out of cluster (core init + core start, webhooks
#     off) and its RBAC manager
#  4. runs every `kubectl apply -f` of the README's install guide (the Provider
#     pointed at the pushed package), then the token Secret and the
#     ClusterProviderConfig (endpoint: the simulator)
#  5. waits for the Provider to be Installed and Healthy and the five
#     ManagedResourceDefinitions to be Active (the activation policy is the
#     README's but for one kind, AccessServiceToken, activated in step 8)
#  6. runs the package's provider binary on the host with a kubeconfig holding
#     only the provider ServiceAccount's token (its RBAC is exactly what
#     Crossplane and cluster/crossplane/rbac.yaml grant), applies the design's
#     CloudflareTunnel and Ingresses plus direct managed resources, and waits
#     for everything to be Ready and the simulator to hold what it should
#  7. upgrades to v0.0.2: the new revision takes over, the objects stay intact
#     (same IDs), the public Ingress's DNS record moves to its new
#     PublicHostname without being recreated
#     v0.0.2 runs with --enable-changelogs, its change logs received on a Unix
#     socket by test/changelogs-receiver (standing in for Crossplane's
#     changelogs sidecar, which needs a pod)
#  8. safe-start: the kind left out of the activation policy is not served
#     and its controller not started; the README's policy activates it, its
#     controller starts, and an AccessServiceToken is created, updated and
#     deleted: each change is in the change log, and no secret is
#  9. crossplane resource trace shows the CloudflareTunnel's tree (Tunnel,
#     its token Secret, the cloudflared Deployment and PodDisruptionBudget)
#     and a PublicHostname's (its DNS record), Ready where they should be
# 10. uninstalls: deletes the objects (nothing left in the simulator), then the
#     Provider
# Any "forbidden" in the provider's log fails the run. Prints each phase's time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$root/_output/e2e-crossplane"
rm -rf "$out"; mkdir -p "$out"

t_start=$SECONDS; t_phase=$SECONDS; phase_name=""; timings=()
phase() {
  if [[ -n "$phase_name" ]]; then timings+=("$(printf '%-58s %4ds' "$phase_name" $((SECONDS - t_phase)))"); fi
  phase_name="$1"; t_phase=$SECONDS
  printf '\n\033[1m==> %s\033[0m\n' "$1" >&2
}
info() { printf '    %s\n' "$*" >&2; }
fail() {
  printf '\033[31me2e-crossplane: FAILED: %s\033[0m\n' "$*" >&2
  for f in provider-v0.0.1.log provider-v0.0.2.log core.log rbac.log; do
    [[ -f "$out/$f" ]] && { echo "--- last lines of $out/$f" >&2; tail -25 "$out/$f" >&2; }
  done
  exit 1
}
for tool in go openssl curl awk python3; do command -v "$tool" >/dev/null || fail "$tool is required"; done

pids=()
provider_pid=""
cleanup() {
  trap - EXIT INT TERM
  [[ -n "$provider_pid" ]] && kill "$provider_pid" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}" $provider_pid; do wait "$p" 2>/dev/null || true; done
  if [[ -f "$out/cluster/pids" ]]; then CLUSTER_DIR="$out/cluster" FAST=1 bash hack/local-cluster-down.sh >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitfor() { # DESCRIPTION TIMEOUT COMMAND...
  local what=$1 t=$2; shift 2
  local deadline=$(( SECONDS + t ))
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || fail "timed out after ${t}s waiting for: $what"
    sleep 1
  done
  info "$what ($((SECONDS - t_phase))s into the phase)"
}

# ----------------------------------------------------------------- 1. builds
phase "build: cluster, Crossplane core, CLI, registry, packages (cached)"
bins="$(bash hack/local-cluster-bins.sh)"
kubectl="$bins/kubectl"
core_dir="$(bash hack/crossplane-core.sh)"
crossplane_core="$core_dir/crossplane"
crossplane_cli="$(bash hack/crossplane-cli.sh)"
(cd tools/crossplane-cli && GOWORK=off GOFLAGS=-modcacherw CGO_ENABLED=0 GOOS= GOARCH= go build -trimpath -o "$out/registry" ./registry)
go build -o "$out/cloudflare-sim" ./cmd/cloudflare-sim
go build -o "$out/changelogs-receiver" ./test/changelogs-receiver
declare -A xpkg=() runtime_bin=()
# v0.0.1 is the provider as it was last released (hack/upgrade-from), built
# from this repository's own history, so the upgrade below is a real change
# of version; v0.0.2 is this tree. The previous package is cached by commit.
prev_rev="$(grep -v '^#' hack/upgrade-from | tr -d '[:space:]')"
git cat-file -e "$prev_rev^{commit}" 2>/dev/null || fail "hack/upgrade-from names commit $prev_rev, which this clone does not have (a shallow clone?)"
prev_dir="${XDG_CACHE_HOME:-$HOME/.cache}/provider-cloudflare-tunnel/previous/$prev_rev"
if [[ ! -f "$prev_dir/xpkg-v0.0.1/provider.xpkg" ]]; then
  rm -rf "$prev_dir/xpkg-src" "$prev_dir/xpkg-v0.0.1"; mkdir -p "$prev_dir/xpkg-src" "$prev_dir/xpkg-v0.0.1"
  git archive "$prev_rev" | tar -x -C "$prev_dir/xpkg-src"
  (cd "$prev_dir/xpkg-src" && VERSION=v0.0.1 bash hack/xpkg.sh >"$out/xpkg-v0.0.1.path" 2>"$out/xpkg-v0.0.1.log") || { cat "$out/xpkg-v0.0.1.log" >&2; fail "make xpkg of $prev_rev"; }
  cp "$prev_dir/xpkg-src/$(cat "$out/xpkg-v0.0.1.path")" "$prev_dir/xpkg-v0.0.1/provider.xpkg"
  cp "$prev_dir/xpkg-src/_output/bin/linux_amd64/provider" "$prev_dir/xpkg-v0.0.1/provider"
  cp "$prev_dir/xpkg-src/hack/demo/manifests.yaml" "$prev_dir/xpkg-v0.0.1/demo-manifests.yaml"
  rm -rf "$prev_dir/xpkg-src"
fi
xpkg[v0.0.1]="$prev_dir/xpkg-v0.0.1/provider.xpkg"
runtime_bin[v0.0.1]="$prev_dir/xpkg-v0.0.1/provider"
info "v0.0.1: ${xpkg[v0.0.1]} (commit ${prev_rev:0:12})"
xpkg[v0.0.2]="$(VERSION=v0.0.2 bash hack/xpkg.sh 2>"$out/xpkg-v0.0.2.log")" || { cat "$out/xpkg-v0.0.2.log" >&2; fail "make xpkg v0.0.2"; }
# The binary the package's runtime image carries.
cp _output/bin/linux_amd64/provider "$out/provider-v0.0.2"
runtime_bin[v0.0.2]="$out/provider-v0.0.2"
info "v0.0.2: ${xpkg[v0.0.2]} (this tree)"

# ------------------------------------------------------- 2. cluster, sim, registry
phase "start: local cluster, Cloudflare simulator, OCI registry"
kubeconfig="$(CLUSTER_DIR="$out/cluster" KWOK_NODES=1 BIN_DIR="$bins" bash hack/local-cluster-up.sh 2>"$out/cluster-up.log")" || { cat "$out/cluster-up.log" >&2; fail "the cluster did not start"; }
export KUBECONFIG="$kubeconfig"
kc() { "$kubectl" --cache-dir "$out/kubectl-cache" "$@"; }

token="e2e-$(openssl rand -hex 16)"
account="$(openssl rand -hex 16)"
CLOUDFLARE_SIM_TOKEN="$token" "$out/cloudflare-sim" --listen "127.0.0.1:$(free_port)" --account-id "$account" \
  --zone example.com >"$out/sim.url" 2>"$out/sim.log" &
pids+=($!)
"$out/registry" --listen 127.0.0.1:0 >"$out/registry.addr" 2>"$out/registry.log" &
pids+=($!)
for _ in $(seq 100); do [[ -s "$out/sim.url" && -s "$out/registry.addr" ]] && break; sleep 0.1; done
sim_url="$(cat "$out/sim.url")"; sim_base="${sim_url%/client/v4/}"
registry="$(cat "$out/registry.addr")"
[[ -n "$sim_url" && -n "$registry" ]] || fail "the simulator or the registry did not start"
pkg_ref() { echo "$registry/context-labs/provider-cloudflare-tunnel:$1"; }
"$crossplane_cli" xpkg push -f "${xpkg[v0.0.1]}" "$(pkg_ref v0.0.1)" >"$out/push-v0.0.1.log" 2>&1 || { cat "$out/push-v0.0.1.log" >&2; fail "push v0.0.1"; }
info "simulator $sim_url; pushed $(pkg_ref v0.0.1)"

# ------------------------------------------------------------ 3. Crossplane core
phase "start: Crossplane core v2.3.4 and its RBAC manager (out of cluster)"
kc create namespace crossplane-system >/dev/null
kc -n crossplane-system create serviceaccount crossplane >/dev/null
kc apply --server-side -f "$core_dir/crds" >/dev/null
waitfor "core's CRDs Established" 60 kc wait --for=condition=Established crd --all --timeout=20s
core_env=(POD_NAMESPACE=crossplane-system POD_SERVICE_ACCOUNT=crossplane ENABLE_WEBHOOKS=false CRDS_PATH="$core_dir/crds"
  TLS_CA_SECRET_NAME=crossplane-root-ca TLS_SERVER_SECRET_NAME=crossplane-tls-server TLS_CLIENT_SECRET_NAME=crossplane-tls-client)
# No --activation: the README's activation policy must be what activates our
# managed resources (an init with '*' would hide a broken policy).
env "${core_env[@]}" "$crossplane_core" core init >"$out/core-init.log" 2>&1 || { cat "$out/core-init.log" >&2; fail "crossplane core init"; }
mkdir -p "$out/tls-client" "$out/xpkg-cache" "$out/xfn-cache"
for k in ca.crt tls.crt tls.key; do
  kc -n crossplane-system get secret crossplane-tls-client -o "go-template={{index .data \"$k\" | base64decode}}" >"$out/tls-client/$k"
done
core_probe="$(free_port)"
env "${core_env[@]}" "$crossplane_core" core start --namespace=crossplane-system --service-account=crossplane --enable-webhooks=false \
  --xpkg-cache-dir="$out/xpkg-cache" --xfn-cache-dir="$out/xfn-cache" --tls-client-certs-dir="$out/tls-client" \
  --metrics-port="$(free_port)" --health-probe-port="$core_probe" >"$out/core.log" 2>&1 &
pids+=($!)
# The RBAC manager grants each provider revision its own APIs (ClusterRoles
# bound to the revision's ServiceAccount), as in a Helm install.
# Its metrics endpoint is off: by default it takes :8080, which anything else
# on the machine may hold.
CROSSPLANE_METRICS_BIND_ADDRESS=0 "$crossplane_core" rbac start >"$out/rbac.log" 2>&1 &
pids+=($!)
waitfor "core is ready" 60 curl -sf "http://127.0.0.1:$core_probe/readyz"

# ------------------------------------------------------------- 4. the README
phase "install: every kubectl apply of cluster/crossplane/README.md, then credentials"
guide=cluster/crossplane/README.md
policy=cluster/crossplane/activationpolicy.yaml
held_back=accessservicetokens.zerotrust.tunnels.cloudflare.com
mapfile -t files < <(awk '/^## 1\. Apply/{on=1; next} /^## /{on=0} on && /^kubectl apply -f /{print $4}' "$guide")
(( ${#files[@]} >= 4 )) || fail "found ${#files[@]} kubectl apply lines in $guide, expected the install steps"
for f in "${files[@]}"; do
  [[ -f "$f" ]] || fail "$guide applies $f, which does not exist"
  if [[ "$f" == cluster/crossplane/provider.yaml ]]; then
    # The one edit the guide asks for: spec.package is the pushed reference.
    sed "s#^\(  package: \).*#\1$(pkg_ref v0.0.1)#" "$f" | kc apply -f - >/dev/null
  elif [[ "$f" == "$policy" ]]; then
    # All but one kind: installed inactive, activated in step 8.
    [[ "$(grep -c "^    - $held_back\$" "$f")" == 1 ]] || fail "$f does not activate $held_back exactly once"
    grep -v "^    - $held_back\$" "$f" | kc apply -f - >/dev/null
  else
    kc apply -f "$f" >/dev/null
  fi
  info "applied $f"
done
# Credentials, as examples/provider/config.yaml shows them (token and account
# from the simulator, the endpoint pointed at it).
kc -n crossplane-system create secret generic cloudflare-credentials \
  --from-literal=CLOUDFLARE_API_TOKEN="$token" --from-literal=CLOUDFLARE_ACCOUNT_ID="$account" >/dev/null

# ------------------------------------------------- 5. Installed, Healthy, Active
phase "wait: Provider Installed and Healthy, managed resources Active"
waitfor "Provider Installed" 180 kc wait provider.pkg.crossplane.io/provider-cloudflare-tunnel --for condition=Installed --timeout=2s
waitfor "Provider Healthy" 180 kc wait provider.pkg.crossplane.io/provider-cloudflare-tunnel --for condition=Healthy --timeout=2s
mrds_active() {
  local n
  n="$(kc get managedresourcedefinitions -o jsonpath='{range .items[*]}{.metadata.name} {.spec.state}{"\n"}{end}' | grep -c 'tunnels\.cloudflare\.com Active$' || true)"
  [[ "$n" == "$1" ]]
}
# v0.0.1 has five; v0.0.2 adds PublicHostname, NetworkRoute and VirtualNetwork.
waitfor "5 ManagedResourceDefinitions Active (v0.0.1's 4 managed resources + CloudflareTunnel, by the README's activation policy)" 60 mrds_active 5
waitfor "every CRD Established" 60 kc wait --for=condition=Established crd --all --timeout=20s
cat <<YAML | kc apply -f - >/dev/null
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: ClusterProviderConfig
metadata: {name: default}
spec:
  credentials:
    source: Secret
    secretRef: {namespace: crossplane-system, name: cloudflare-credentials, key: CLOUDFLARE_API_TOKEN}
  endpoint: $sim_url
YAML
rev1="$(kc get provider.pkg.crossplane.io provider-cloudflare-tunnel -o jsonpath='{.status.currentRevision}')"
info "revision $rev1"

# --------------------------------------------------- 6. the provider, as installed
# The kubeconfig holds only the ServiceAccount's token: the provider can do
# exactly what Crossplane's RBAC manager and rbac.yaml grant it.
sa_kubeconfig() { # FILE
  local server ca tok
  server="$(kc config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')"
  ca="$(kc config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
  if [[ -z "$ca" ]]; then
    ca="$(base64 -w0 <"$(kc config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')")"
  fi
  tok="$(kc -n crossplane-system create token provider-cloudflare-tunnel --duration=2h)"
  umask 077
  cat >"$1" <<KCFG
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: provider, user: {token: "$tok"}}]
contexts: [{name: provider, context: {cluster: local, user: provider}}]
current-context: provider
KCFG
}
start_provider() { # VERSION [ARG...]
  local v=$1; shift
  sa_kubeconfig "$out/provider-$v.kubeconfig"
  # The runtime config's args (--leader-election) plus a short poll for the test.
  KUBECONFIG="$out/provider-$v.kubeconfig" POD_NAMESPACE=crossplane-system "${runtime_bin[$v]}" --leader-election --debug --poll 10s \
    --metrics-bind-address "127.0.0.1:$(free_port)" --health-probe-bind-address "127.0.0.1:$(free_port)" "$@" >"$out/provider-$v.log" 2>&1 &
  provider_pid=$!
}
phase "run: the package's provider binary (v0.0.1) as its ServiceAccount; the design's examples"
waitfor "ServiceAccount crossplane-system/provider-cloudflare-tunnel exists" 60 kc -n crossplane-system get serviceaccount provider-cloudflare-tunnel
start_provider v0.0.1
# v0.0.1's own demo (the current one has kinds v0.0.1 does not know).
kc apply -f "$prev_dir/xpkg-v0.0.1/demo-manifests.yaml" -f hack/e2e-crossplane/direct.yaml >/dev/null
ns=redis-cf-tunnel; cft=redis-cache-azure-development
waitfor "CloudflareTunnel token stored and cloudflared running" 180 kc -n $ns wait --for=condition=DeploymentReady cloudflaretunnel/$cft --timeout=2s
tunnel_id="$(kc -n $ns get cloudflaretunnel $cft -o jsonpath='{.status.tunnelID}')"
curl -sf -X POST "$sim_base/__sim/tunnels/$tunnel_id/connectors" -d '{"count": 2}' >/dev/null
waitfor "CloudflareTunnel Ready" 120 kc -n $ns wait --for=condition=Ready cloudflaretunnel/$cft --timeout=2s
waitfor "every managed resource Ready (Ingress-made and direct)" 180 kc wait --for=condition=Ready tunnels,hostnameroutes,vpcservices,dnsrecords --all -A --timeout=2s
expect_state() { # TUNNELS ROUTES SERVICES RECORDS [NETWORK_ROUTES, default 0]
  curl -sf "$sim_base/__sim/state" >"$out/state.json" || return 1
  python3 - "$out/state.json" "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
want = [int(x) for x in sys.argv[2:6]] + [int(sys.argv[6]) if len(sys.argv) > 6 else 0]
live = lambda xs: [x for x in (xs or []) if not x.get("deleted_at")]
got = [len(live(s.get("tunnels"))), len(live(s.get("hostname_routes"))), len(s.get("services") or []), len(s.get("dns_records") or []), len(live(s.get("cidr_routes")))]
print("simulator: tunnels %d, hostname routes %d, VPC services %d, DNS records %d, network routes %d" % tuple(got), file=sys.stderr)
sys.exit(0 if got == want else 1)
PY
}
# 2 tunnels (CloudflareTunnel, direct); routes: redis, web (app.example.com) and direct; services:
# redis + direct; records: web's CNAME + docs.
waitfor "the simulator holds 2 tunnels, 3 hostname routes, 2 VPC services, 2 DNS records" 60 expect_state 2 3 2 2
n_ready="$(kc get tunnels,hostnameroutes,vpcservices,dnsrecords -A --no-headers | wc -l)"
info "$n_ready managed resources Ready"
grep -qi forbidden "$out/provider-v0.0.1.log" && fail "the provider was refused something (forbidden in its log)"
info "no 'forbidden' in the provider's log"

# --------------------------------------------------------------- 7. upgrade
phase "upgrade: v0.0.2 takes over, objects intact"
"$crossplane_cli" xpkg push -f "${xpkg[v0.0.2]}" "$(pkg_ref v0.0.2)" >"$out/push-v0.0.2.log" 2>&1 || { cat "$out/push-v0.0.2.log" >&2; fail "push v0.0.2"; }
before="$(curl -sf "$sim_base/__sim/state" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(sorted(x["id"] + " config v" + str(x.get("config_version")) for x in s["tunnels"]), sorted(x["id"] for x in s["hostname_routes"]), sorted(x["service_id"] for x in s["services"]), sorted(x["id"] for x in s["dns_records"]))')"
# From here the old revision is on its way out: Crossplane's RBAC manager
# moves the ServiceAccount's permissions to the new revision, so the old
# process may be refused things until it is stopped. Only what it logged
# while it was the current revision is checked.
v1_lines="$(wc -l <"$out/provider-v0.0.1.log")"
kc patch provider.pkg.crossplane.io provider-cloudflare-tunnel --type merge -p "{\"spec\":{\"package\":\"$(pkg_ref v0.0.2)\"}}" >/dev/null
new_revision() {
  local cur
  cur="$(kc get provider.pkg.crossplane.io provider-cloudflare-tunnel -o jsonpath='{.status.currentRevision}')"
  [[ -n "$cur" && "$cur" != "$rev1" ]] || return 1
  kc wait provider.pkg.crossplane.io/provider-cloudflare-tunnel --for condition=Healthy --timeout=2s
}
waitfor "a new revision is current and Healthy" 180 new_revision
rev2="$(kc get provider.pkg.crossplane.io provider-cloudflare-tunnel -o jsonpath='{.status.currentRevision}')"
rev1_state="$(kc get providerrevision "$rev1" -o jsonpath='{.spec.desiredState}')"
[[ "$rev1_state" == Inactive ]] || fail "old revision $rev1 is $rev1_state, want Inactive"
info "revision $rev2 Active; $rev1 Inactive"
# The new revision's pod starts once Crossplane has created it; its
# permissions come from the RBAC manager, which may lag the revision.
can_list_as_provider() {
  kc auth can-i list tunnels.zerotrust.tunnels.cloudflare.com -A --as=system:serviceaccount:crossplane-system:provider-cloudflare-tunnel | grep -qx yes
}
waitfor "the RBAC manager has granted the new revision its APIs" 60 can_list_as_provider
# The old revision's pod goes away and the new one's starts: stop v0.0.1, run v0.0.2.
kill "$provider_pid"; wait "$provider_pid" 2>/dev/null || true
head -n "$v1_lines" "$out/provider-v0.0.1.log" | grep -qi forbidden && fail "v0.0.1 was refused something while current (forbidden in its log)"
# The change log receiver, where the sidecar's socket would be.
changelogs_socket="$out/changelogs.sock"
"$out/changelogs-receiver" --socket-path "$changelogs_socket" >"$out/changelogs.jsonl" 2>"$out/changelogs-receiver.log" &
pids+=($!)
start_provider v0.0.2 --enable-changelogs --changelogs-socket-path "$changelogs_socket"
waitfor "v0.0.2 running and leading (the old process gave its lease back)" 30 grep -q 'Successfully acquired lease' "$out/provider-v0.0.2.log"
sleep 12 # more than a poll: v0.0.2 observes everything
waitfor "every managed resource still Ready" 60 kc wait --for=condition=Ready tunnels,hostnameroutes,vpcservices,dnsrecords --all -A --timeout=2s
after="$(curl -sf "$sim_base/__sim/state" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(sorted(x["id"] + " config v" + str(x.get("config_version")) for x in s["tunnels"]), sorted(x["id"] for x in s["hostname_routes"]), sorted(x["service_id"] for x in s["services"]), sorted(x["id"] for x in s["dns_records"]))')"
[[ "$before" == "$after" ]] || fail "Cloudflare objects changed across the upgrade: before $before, after $after"
info "the same Cloudflare objects (same IDs) and tunnel configurations (same versions: never rewritten) before and after"
waitfor "14 ManagedResourceDefinitions Active (PublicHostname, NetworkRoute, VirtualNetwork, AccessPolicy, AccessApplication, AccessGroup, LoadBalancerMonitor, LoadBalancerPool and LoadBalancer added; AccessServiceToken held back)" 60 mrds_active 14
waitfor "the public Ingress's PublicHostname Ready, its DNS record taken over" 90 kc -n $ns wait --for=condition=Ready publichostnames --all --timeout=2s
owner="$(kc -n $ns get dnsrecords -l tunnels.cloudflare.com/ingress=web -o jsonpath='{.items[0].metadata.ownerReferences[0].kind}')"
[[ "$owner" == PublicHostname ]] || fail "the web Ingress's DNSRecord is controlled by '$owner', want its PublicHostname"
after_takeover="$(curl -sf "$sim_base/__sim/state" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(sorted(x["id"] + " config v" + str(x.get("config_version")) for x in s["tunnels"]), sorted(x["id"] for x in s["hostname_routes"]), sorted(x["service_id"] for x in s["services"]), sorted(x["id"] for x in s["dns_records"]))')"
[[ "$before" == "$after_takeover" ]] || fail "Cloudflare objects changed when the DNS record moved to its PublicHostname: before $before, after $after_takeover"
info "the DNS record moved to its PublicHostname without being recreated"
# What v0.0.2 adds on purpose: the current demo's hand-made PublicHostname
# and the redis Service's cluster IP routed privately.
kc apply -f hack/demo/manifests.yaml >/dev/null
waitfor "the demo's hand-made PublicHostname Ready" 90 kc -n $ns wait --for=condition=Ready publichostname/status --timeout=2s
waitfor "the redis Service's NetworkRoute Ready" 90 kc -n $ns wait --for=condition=Ready networkroutes -l tunnels.cloudflare.com/service=redis-cache-azure-dev --timeout=2s
waitfor "the simulator holds 2 tunnels, 3 hostname routes, 2 VPC services, 3 DNS records, 1 network route" 60 expect_state 2 3 2 3 1
grep -qi forbidden "$out/provider-v0.0.2.log" && fail "v0.0.2 was refused something (forbidden in its log)"

# ------------------------------------------- 8. safe-start and change logs
phase "activate: a kind inactive since install starts; its changes in the change log"
mrd_state() { kc get managedresourcedefinition "$held_back" -o jsonpath='{.spec.state}'; }
[[ "$(mrd_state)" == Inactive ]] || fail "$held_back is '$(mrd_state)', want Inactive (the policy applied at install leaves it out)"
kc get crd "$held_back" >/dev/null 2>&1 && fail "the CRD $held_back exists while its ManagedResourceDefinition is inactive"
kc get accessservicetokens -A >/dev/null 2>&1 && fail "accessservicetokens are served while inactive"
started() { grep -i 'starting controller' "$out/provider-v0.0.2.log" | grep -qi "managed/$1"; }
started tunnel.zerotrust || fail "the Tunnel controller never said it started (the check below would prove nothing)"
started accessservicetoken.zerotrust && fail "the AccessServiceToken controller started while its kind is inactive"
info "$held_back Inactive: no CRD, not served, its controller not started"
kc apply -f "$policy" >/dev/null
waitfor "$held_back Active (the README's policy)" 60 sh -c "[ \"\$('$kubectl' --cache-dir '$out/kubectl-cache' get managedresourcedefinition $held_back -o jsonpath='{.spec.state}')\" = Active ]"
waitfor "its CRD Established" 60 kc wait --for=condition=Established crd/$held_back --timeout=2s
waitfor "its controller started in the running provider" 60 started accessservicetoken.zerotrust
kc apply -f hack/e2e-crossplane/servicetoken.yaml >/dev/null
waitfor "an AccessServiceToken Ready" 60 kc -n $ns wait --for=condition=Ready accessservicetoken/e2e-changelog --timeout=2s
changelog_has() { # KIND NAME OPERATION: a successful entry
  python3 - "$out/changelogs.jsonl" "$@" <<'PY'
import json, sys
path, kind, name, op = sys.argv[1:5]
for line in open(path):
    e = json.loads(line)
    if (e.get("kind"), e.get("name"), e.get("operation")) == (kind, name, op) and not e.get("errorMessage"):
        sys.exit(0)
sys.exit(1)
PY
}
waitfor "its create in the change log" 30 changelog_has AccessServiceToken e2e-changelog OPERATION_TYPE_CREATE
kc -n $ns patch accessservicetoken e2e-changelog --type merge -p '{"spec":{"forProvider":{"name":"e2e-changelog-renamed"}}}' >/dev/null
waitfor "its update (a rename) in the change log" 60 changelog_has AccessServiceToken e2e-changelog OPERATION_TYPE_UPDATE
secret_of() { kc -n $ns get secret "$1" -o "go-template={{index .data \"$2\" | base64decode}}"; }
client_secret="$(secret_of e2e-changelog-credentials CF-Access-Client-Secret)"
run_token="$(secret_of $cft-token token)"
[[ -n "$client_secret" && -n "$run_token" ]] || fail "the service token's client secret or the tunnel's run token is missing"
kc -n $ns delete accessservicetoken e2e-changelog --wait=false >/dev/null
waitfor "its delete in the change log" 60 changelog_has AccessServiceToken e2e-changelog OPERATION_TYPE_DELETE
waitfor "the AccessServiceToken gone" 60 sh -c "! '$kubectl' --cache-dir '$out/kubectl-cache' -n $ns get accessservicetoken e2e-changelog"
# The secrets go through the environment, never a command line.
CHANGELOG_SECRETS="$(printf '%s\n' "$token" "$run_token" "$client_secret")" python3 - "$out/changelogs.jsonl" <<'PY' || fail "a secret is in the change log"
import base64, os, sys
text = open(sys.argv[1]).read()
for i, s in enumerate(x for x in os.environ["CHANGELOG_SECRETS"].split("\n") if x):
    if s in text or base64.b64encode(s.encode()).decode() in text:
        print("secret #%d (API token, run token, client secret) is in the change log" % i, file=sys.stderr)
        sys.exit(1)
PY
info "$(wc -l <"$out/changelogs.jsonl") change log entries ($(grep -c OPERATION_TYPE_CREATE "$out/changelogs.jsonl") creates, $(grep -c OPERATION_TYPE_UPDATE "$out/changelogs.jsonl") updates, $(grep -c OPERATION_TYPE_DELETE "$out/changelogs.jsonl") deletes); none holds the API token, the tunnel's run token or the client secret"

# The runtime config that turns change logs on in a pod, as Crossplane
# renders it into the revision's Deployment (KWOK runs no container, so the
# sidecar itself is not run here: the receiver above stands in for it).
kc apply -f cluster/crossplane/deploymentruntimeconfig-changelogs.yaml >/dev/null
rendered_with_changelogs() {
  local d
  d="$(kc -n crossplane-system get deployment "$rev2" -o jsonpath='{.spec.template.spec.containers[*].name}|{.spec.template.spec.containers[?(@.name=="package-runtime")].args}|{.spec.template.spec.containers[?(@.name=="package-runtime")].volumeMounts[*].mountPath}|{.spec.template.spec.volumes[*].name}')"
  [[ "$d" == *changelogs-sidecar*"|"*--enable-changelogs*"|"*/var/run/changelogs*"|"*changelogs* ]]
}
waitfor "deploymentruntimeconfig-changelogs.yaml rendered: the sidecar beside package-runtime, --enable-changelogs, the shared volume" 60 rendered_with_changelogs
kc apply -f cluster/crossplane/deploymentruntimeconfig.yaml >/dev/null

# ------------------------------------------------------------------ 9. trace
phase "trace: crossplane resource trace of a CloudflareTunnel and a PublicHostname"
refs_of() { kc -n $ns get "$1" -o jsonpath='{range .spec.crossplane.resourceRefs[*]}{.kind}/{.name} {end}'; }
waitfor "the CloudflareTunnel names its children" 60 sh -c "[ \"\$('$kubectl' --cache-dir '$out/kubectl-cache' -n $ns get cloudflaretunnel $cft -o jsonpath='{.spec.crossplane.resourceRefs[*].kind}')\" = 'Deployment PodDisruptionBudget Tunnel' ]"
waitfor "the PublicHostname names its DNS record" 60 sh -c "'$kubectl' --cache-dir '$out/kubectl-cache' -n $ns get publichostname status -o jsonpath='{.spec.crossplane.resourceRefs[*].kind}' | grep -qx DNSRecord"
trace() { # OUTPUT RESOURCE NAME [ARG...]
  local f="$out/trace-$1.txt"; shift
  "$crossplane_cli" resource trace "$@" -n $ns >"$f" 2>&1 || { cat "$f" >&2; fail "crossplane resource trace $*"; }
}
row() { # FILE REGEX DESCRIPTION: a row of the tree (name SYNCED READY STATUS)
  grep -Eq "$2" "$out/trace-$1.txt" || { cat "$out/trace-$1.txt" >&2; fail "trace $1: no row for $3"; }
}
trace tunnel cloudflaretunnel $cft --show-connection-secrets
row tunnel "^CloudflareTunnel/$cft \($ns\) +- +True " "the CloudflareTunnel, Ready"
row tunnel "^├─ Deployment/$cft-cloudflared \($ns\) +- +- " "its cloudflared Deployment"
row tunnel "^├─ PodDisruptionBudget/$cft-cloudflared \($ns\) +- +- " "its PodDisruptionBudget"
row tunnel "^└─ Tunnel/$cft \($ns\) +True +True " "its Tunnel, Synced and Ready"
row tunnel "^   └─ Secret/$cft-token \($ns\) " "the Tunnel's token Secret"
[[ "$(wc -l <"$out/trace-tunnel.txt")" == 6 ]] || { cat "$out/trace-tunnel.txt" >&2; fail "trace of the CloudflareTunnel: want a header and 5 rows"; }
trace hostname publichostname status
row hostname "^PublicHostname/status \($ns\) +- +True " "the PublicHostname, Ready"
row hostname "^└─ DNSRecord/[^ ]+ \($ns\) +True +True " "its DNS record, Synced and Ready"
[[ "$(wc -l <"$out/trace-hostname.txt")" == 3 ]] || { cat "$out/trace-hostname.txt" >&2; fail "trace of the PublicHostname: want a header and 2 rows"; }
info "CloudflareTunnel: $(refs_of cloudflaretunnel/$cft)+ the token Secret; PublicHostname: $(refs_of publichostname/status)"
sed 's/^/      /' "$out/trace-tunnel.txt" "$out/trace-hostname.txt" >&2

# --------------------------------------------------------------- 10. uninstall
phase "uninstall: objects, then the Provider"
kc delete -f hack/e2e-crossplane/direct.yaml --wait=false >/dev/null
kc -n $ns delete ingress,publichostnames,services --all --wait=false >/dev/null
kc -n $ns delete cloudflaretunnel $cft --wait=false >/dev/null
# The CloudflareTunnel stops cloudflared first; KWOK runs no container, so
# play cloudflared disconnecting once its Deployment is gone.
waitfor "the cloudflared Deployment gone" 120 sh -c "! '$kubectl' --cache-dir '$out/kubectl-cache' -n $ns get deployment $cft-cloudflared"
curl -sf -X POST "$sim_base/__sim/tunnels/$tunnel_id/connectors" -d '{"count": 0}' >/dev/null
gone() { [[ -z "$(kc get tunnels,hostnameroutes,networkroutes,vpcservices,dnsrecords,publichostnames,cloudflaretunnels,ingresses -A --no-headers 2>/dev/null)" ]]; }
waitfor "every managed resource, CloudflareTunnel and Ingress gone" 180 gone
waitfor "nothing left in the simulator" 30 expect_state 0 0 0 0
grep -qi forbidden "$out/provider-v0.0.2.log" && fail "v0.0.2 was refused something while deleting (forbidden in its log)"
kill "$provider_pid"; wait "$provider_pid" 2>/dev/null || true; provider_pid=""
# As the README's Uninstall section says.
kc delete -f cluster/crossplane/provider.yaml --wait=false >/dev/null
waitfor "Provider and its revisions gone" 120 sh -c "! '$kubectl' --cache-dir '$out/kubectl-cache' get providerrevisions -o name | grep -q ."
kc delete -f cluster/crossplane/activationpolicy.yaml -f cluster/crossplane/rbac.yaml -f cluster/crossplane/deploymentruntimeconfig.yaml >/dev/null
phase "done"

printf '\n\033[1me2e-crossplane: PASSED in %ds\033[0m\n' $((SECONDS - t_start))
printf '  %s\n' "${timings[@]}"
