#!/usr/bin/env bash
# make tour: plays the product's scenes against a running `make demo`, each
# with one line of narration, the commands it runs, what changed in
# Kubernetes and in the simulated Cloudflare account, and a check of its
# outcome that fails loudly (so the tour is also a test). It ends by deleting
# everything and checking that the account is empty; it starts by applying
# the demo's manifests again, so it can be played more than once.
#
#   make demo        # one terminal
#   make tour        # another; TOUR_SCENES="1 4" plays some scenes only
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$root/_output/demo"
tour="$root/_output/tour"
mkdir -p "$tour"
die() { printf '\033[31mtour: %s\033[0m\n' "$*" >&2; exit 1; }
[[ -f "$out/env" ]] || die "no demo is running: start 'make demo' in another terminal and wait for its summary"
# shellcheck disable=SC1091
source "$out/env"
export KUBECONFIG
"$KUBECTL" get --raw /readyz >/dev/null 2>&1 || die "the demo's cluster does not answer: is 'make demo' still running?"

ns=redis-cf-tunnel
cft=redis-cache-azure-development
kc() { "$KUBECTL" --cache-dir "$out/kubectl-cache" "$@"; }
sim_state() { curl -sf "$SIM_BASE/__sim/state"; }
# cf calls the simulated Cloudflare API as a user with the account's token
# would (the token is read from a file, never put on a command line).
cf() { local method=$1 path=$2; shift 2; curl -sf -X "$method" -H @"$out/sim-auth-header" "$SIM_URL${path#/}" "$@"; }

kinds=cloudflaretunnels,publichostnames,gatewaybindings,tunnels,hostnameroutes,networkroutes,vpcservices,dnsrecords,accessapplications,accesspolicies,loadbalancermonitors,loadbalancerpools,loadbalancers.loadbalancing.tunnels.cloudflare.com
snapshot() { # FILE
  kc get "$kinds" -A -o json >"$tour/kube.json"
  sim_state >"$tour/sim.json"
  python3 hack/tour/state.py snapshot "$tour/kube.json" "$tour/sim.json" >"$1"
}
cf_has() { sim_state >"$tour/sim-now.json" && python3 hack/tour/state.py has "$tour/sim-now.json" "$@"; }
cf_lacks() { ! cf_has "$@"; }

# say prints a command as the user would type it, then runs it.
say() { printf '    \033[2m$ %s\033[0m\n' "$*" | sed -e "s#$KUBECTL#kubectl#" -e 's#\$ kc #$ kubectl #'; }
run() { say "$*"; "$@" >/dev/null; }
apply() { # YAML on stdin, shown
  local yaml; yaml="$(cat)"
  say "kubectl apply -f - <<EOF"; printf '%s\n' "$yaml" | sed 's/^/      /'; printf '      EOF\n'
  printf '%s\n' "$yaml" | kc apply -f - >/dev/null
}
# expect waits up to TIMEOUT seconds for COMMAND to succeed; the scene fails
# loudly otherwise, with the provider's last words.
expect() { # DESCRIPTION TIMEOUT COMMAND...
  local what=$1 t=$2; shift 2
  local deadline=$(( $(date +%s) + t ))
  until "$@" >/dev/null 2>&1; do
    if (( $(date +%s) >= deadline )); then
      printf '    \033[31mFAILED: %s (after %ss)\033[0m\n' "$what" "$t" >&2
      tail -15 "$out/provider.log" | sed 's/^/      provider: /' >&2
      exit 1
    fi
    sleep 1
  done
  printf '    \033[32mok\033[0m %s\n' "$what"
}
condition() { # KIND NAME NAMESPACE TYPE WANT-STATUS [WANT-REASON]
  local got; got="$(kc -n "$3" get "$1" "$2" -o jsonpath="{.status.conditions[?(@.type=='$4')].status} {.status.conditions[?(@.type=='$4')].reason}")"
  [[ "${got%% *}" == "$5" && ( -z "${6:-}" || "${got#* }" == "$6" ) ]]
}
warned() { # NAMESPACE OBJECT-NAME REASON
  [[ -n "$(kc -n "$1" get events --field-selector "involvedObject.name=$2,reason=$3,type=Warning" -o name)" ]]
}

declare -a times=()
scene_no=0
scene() { # TITLE NARRATION
  scene_no=$((scene_no + 1)); scene_title=$1
  printf '\n\033[1m== Scene %d: %s\033[0m\n    %s\n' "$scene_no" "$1" "$2"
  snapshot "$tour/before.json"
  scene_start=$(date +%s)
}
changed() {
  snapshot "$tour/after.json"
  printf '    what changed:\n'
  python3 hack/tour/state.py diff "$tour/before.json" "$tour/after.json"
  times+=("$(printf '%3ss  %d. %s' "$(( $(date +%s) - scene_start ))" "$scene_no" "$scene_title")")
}
wanted() { [[ -z "${TOUR_SCENES:-}" || " $TOUR_SCENES " == *" $1 "* ]]; }

printf '\033[1mThe tour\033[0m plays against the running demo and ends by deleting everything it shows.\n'
kc apply -f hack/demo/manifests.yaml >/dev/null
expect "the demo's cloudflared is deployed" 180 kc -n $ns wait --for=condition=DeploymentReady cloudflaretunnel/$cft --timeout=2s
tunnel_id="$(kc -n $ns get cloudflaretunnel $cft -o jsonpath='{.status.tunnelID}')"
# No container runs under KWOK: play cloudflared connecting to Cloudflare's edge.
curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_id/connectors" -d '{"count": 2}' >/dev/null
expect "the demo's tunnel is Ready" 120 kc -n $ns wait --for=condition=Ready cloudflaretunnel/$cft --timeout=2s
expect "the demo's hostnames are Ready" 120 kc -n $ns wait --for=condition=Ready publichostnames --all --timeout=2s

if wanted 1; then
  scene "A Service published without an Ingress" \
    "A Postgres Service names the tunnel: it gets a public TCP hostname, a private route for that hostname and a Workers VPC service reaching its cluster name."
  apply <<'YAML'
apiVersion: v1
kind: Service
metadata:
  name: postgres
  namespace: redis-cf-tunnel
  annotations:
    tunnels.cloudflare.com/tunnel: redis-cache-azure-development
    tunnels.cloudflare.com/public: "true"
    tunnels.cloudflare.com/hostname: db.example.com
    tunnels.cloudflare.com/protocol: tcp
    tunnels.cloudflare.com/vpc-service: postgres-dev
spec:
  ports: [{name: postgres, port: 5432}]
YAML
  expect "Cloudflare routes db.example.com to tcp://postgres" 120 cf_has rule db.example.com
  expect "a proxied DNS record for db.example.com" 120 cf_has dns db.example.com
  expect "a Workers VPC service postgres-dev reaching the cluster name" 120 cf_has "vpc service" postgres-dev
  expect "a private hostname route for db.example.com, for WARP clients" 60 cf_has "hostname route" db.example.com
  changed
fi

if wanted 2; then
  scene "A hostname published by a hand-made PublicHostname, with paths" \
    "No Ingress: a PublicHostname answers /healthz from cloudflared itself and sends the rest to the web Service."
  apply <<'YAML'
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: PublicHostname
metadata:
  name: docs
  namespace: redis-cf-tunnel
spec:
  tunnelRef: {name: redis-cache-azure-development}
  hostname: docs.example.com
  paths:
    - {path: /healthz, pathType: Exact, origin: {url: "http_status:204"}}
    - {path: /api, pathType: Prefix, origin: {service: {name: api, port: http}}}
  origin: {service: {name: web, port: http}}
YAML
  expect "the PublicHostname is Ready" 120 condition publichostname docs $ns Ready True
  expect "a rule for docs.example.com/api (a path rule)" 60 cf_has rule "docs.example.com^/api"
  expect "a proxied DNS record for docs.example.com" 60 cf_has dns docs.example.com
  changed
fi

if wanted 3; then
  scene "A typo keeps the site up, and says why" \
    "The web Ingress is pointed at a tunnel that does not exist: a Warning says so, and app.example.com stays published."
  run kc -n $ns annotate ingress web tunnels.cloudflare.com/tunnel=redis-cache-azure-developmnet --overwrite
  expect "a Warning TunnelNotFound on the Ingress" 60 warned $ns web TunnelNotFound
  expect "app.example.com is still routed and its DNS record still there" 5 eval 'cf_has rule app.example.com && cf_has dns app.example.com'
  run kc -n $ns annotate ingress web tunnels.cloudflare.com/tunnel=$cft --overwrite
  expect "fixed: the Ingress's PublicHostnames are Ready again" 120 kc -n $ns wait --for=condition=Ready publichostnames --all --timeout=2s
  changed
fi

if wanted 4; then
  scene "A hand edit in Cloudflare, repaired" \
    "Someone deletes app.example.com's DNS record in the Cloudflare dashboard; the provider puts it back on its next look."
  zone_id="$(cf GET "zones?name=example.com" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"][0]["id"])')"
  record_id="$(cf GET "zones/$zone_id/dns_records?name=app.example.com" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"][0]["id"])')"
  say "curl -X DELETE -H @auth-header $SIM_URL""zones/$zone_id/dns_records/$record_id"
  cf DELETE "zones/$zone_id/dns_records/$record_id" >/dev/null
  expect "the record is gone from the account" 5 cf_lacks dns app.example.com
  expect "the provider made it again (a new record ID)" 120 cf_has dns app.example.com
  changed
fi

if wanted 5; then
  scene "A tunnel shared with a second namespace, and refused to a third" \
    "The tunnel allows namespaces labelled tour.example.com/edge=true: team-b's hostname is published, team-c's is refused."
  run kc -n $ns patch cloudflaretunnel $cft --type merge \
    -p '{"spec":{"allowedNamespaces":{"from":"Selector","selector":{"matchLabels":{"tour.example.com/edge":"true"}}}}}'
  for team in team-b team-c; do
    label=""; [[ $team == team-b ]] && label='  labels: {tour.example.com/edge: "true"}'
    apply <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $team
$label
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $team}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: PublicHostname
metadata: {name: web, namespace: $team}
spec:
  tunnelRef: {namespace: redis-cf-tunnel, name: redis-cache-azure-development}
  hostname: $team.example.com
  origin: {service: {name: web, port: http}}
YAML
  done
  expect "team-b's hostname is Ready" 120 condition publichostname web team-b Ready True
  expect "team-b.example.com is routed through the shared tunnel" 30 cf_has rule team-b.example.com
  expect "team-c's is refused: TunnelNotShared" 60 condition publichostname web team-c Ready False TunnelNotShared
  expect "team-c.example.com is published nowhere" 5 eval 'cf_lacks rule team-c.example.com && cf_lacks dns team-c.example.com'
  changed
fi

if wanted 6; then
  scene "Gateway API: routes accepted by another controller's Gateway" \
    "The tour plays the Gateway's controller (Traefik, say): it accepts an HTTPRoute; a GatewayBinding publishes its hostname through the tunnel to the Gateway's Service."
  crds="$(bash hack/thirdparty-crds.sh)"
  run kc apply --server-side -f "$crds/gateway-api"
  run kc wait --for=condition=Established crd/gateways.gateway.networking.k8s.io crd/httproutes.gateway.networking.k8s.io --timeout=60s
  apply <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: traefik}
spec: {controllerName: traefik.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: public, namespace: redis-cf-tunnel}
spec:
  gatewayClassName: traefik
  listeners: [{name: web, port: 8000, protocol: HTTP}]
---
apiVersion: v1
kind: Service
metadata: {name: traefik, namespace: redis-cf-tunnel}
spec:
  ports: [{name: web, port: 80, targetPort: 8000}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: redis-cf-tunnel}
spec:
  parentRefs: [{name: public, sectionName: web}]
  hostnames: [shop.example.com]
YAML
  say "kubectl patch httproute shop --subresource=status ...   # the Gateway's controller accepts the route"
  gen="$(kc -n $ns get httproute shop -o jsonpath='{.metadata.generation}')"
  kc -n $ns patch httproute shop --subresource=status --type merge -p "{\"status\":{\"parents\":[{\"parentRef\":{\"name\":\"public\",\"sectionName\":\"web\"},\"controllerName\":\"traefik.io/gateway-controller\",\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\",\"reason\":\"Accepted\",\"message\":\"played by the tour\",\"observedGeneration\":$gen,\"lastTransitionTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}]}]}}" >/dev/null
  apply <<'YAML'
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: GatewayBinding
metadata: {name: public-web, namespace: redis-cf-tunnel}
spec:
  tunnelRef: {name: redis-cache-azure-development}
  gatewayRef: {name: public, sectionName: web}
  origin:
    service: {name: traefik, port: web}
YAML
  expect "the GatewayBinding is Ready" 180 condition gatewaybinding public-web $ns Ready True
  expect "shop.example.com is routed to the Gateway's Service, with its DNS record" 30 eval 'cf_has rule shop.example.com && cf_has dns shop.example.com'
  changed
fi

if wanted 7; then
  scene "Gateway API: a Gateway of class cloudflare is the tunnel" \
    "The provider is the Gateway's controller: an HTTPRoute publishes straight to its Service, its status says so, and a match cloudflared cannot do is reported on the route, not published."
  crds="$(bash hack/thirdparty-crds.sh)"
  run kc apply --server-side -f "$crds/gateway-api"
  run kc wait --for=condition=Established crd/gateways.gateway.networking.k8s.io crd/httproutes.gateway.networking.k8s.io --timeout=60s
  apply <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: cloudflare}
spec: {controllerName: tunnels.cloudflare.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: redis-cf-tunnel
  annotations: {tunnels.cloudflare.com/tunnel: redis-cache-azure-development}   # the demo's tunnel
spec:
  gatewayClassName: cloudflare
  listeners: [{name: web, port: 80, protocol: HTTP, hostname: "*.example.com"}]
---
apiVersion: v1
kind: Service
metadata: {name: store, namespace: redis-cf-tunnel}
spec:
  ports: [{name: http, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: store, namespace: redis-cf-tunnel}
spec:
  parentRefs: [{name: edge}]
  hostnames: [store.example.com]
  rules:
    - backendRefs: [{name: store, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /beta}, headers: [{name: x-beta, value: "on"}]}]   # cloudflared matches no header
      backendRefs: [{name: store, port: 8080}]
YAML
  # route_condition ROUTE TYPE WANT-STATUS [WANT-REASON]: this provider's
  # entry of the route's status.parents.
  route_condition() {
    local got; got="$(kc -n $ns get httproute "$1" -o jsonpath="{.status.parents[?(@.controllerName=='tunnels.cloudflare.com/gateway-controller')].conditions[?(@.type=='$2')].status} {.status.parents[?(@.controllerName=='tunnels.cloudflare.com/gateway-controller')].conditions[?(@.type=='$2')].reason}")"
    [[ "${got%% *}" == "$3" && ( -z "${4:-}" || "${got#* }" == "$4" ) ]]
  }
  expect "the Gateway is Accepted and Programmed" 120 eval 'condition gateway edge $ns Accepted True Accepted && condition gateway edge $ns Programmed True Programmed'
  expect "the route is Accepted, its refs resolved" 120 eval 'route_condition store Accepted True Accepted && route_condition store ResolvedRefs True ResolvedRefs'
  expect "the header match is reported: PartiallyInvalid=True, UnsupportedValue" 60 route_condition store PartiallyInvalid True UnsupportedValue
  say "kubectl get httproute store -o jsonpath='{.status.parents[*].conditions}'"
  kc -n $ns get httproute store -o jsonpath='{range .status.parents[*].conditions[*]}{.type}={.status} ({.reason}): {.message}{"\n"}{end}' | sed 's/^/      /'
  expect "store.example.com is routed to the Service, with its DNS record" 120 eval 'cf_has rule store.example.com && cf_has dns store.example.com'
  expect "the header-matched rule (/beta) is not published" 5 cf_lacks rule "store.example.com^/beta"
  changed
fi

if wanted 8; then
  scene "A token rotation" \
    "Asking for a token issued now: Cloudflare issues a new one and the token Secret (which cloudflared reads) gets it."
  secret_version="$(kc -n $ns get secret $cft-token -o jsonpath='{.metadata.resourceVersion}')"
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  run kc -n $ns patch cloudflaretunnel $cft --type merge -p "{\"spec\":{\"tokenRotation\":{\"requestedAt\":\"$now\"}}}"
  rotated() { local at; at="$(kc -n $ns get cloudflaretunnel $cft -o jsonpath='{.status.tokenRotatedAt}')"; [[ -n "$at" && ! "$at" < "$now" ]]; }
  expect "status.tokenRotatedAt is at or after the request" 120 rotated
  expect "the token Secret was rewritten (its value is never shown)" 30 eval "[[ \"\$(kc -n $ns get secret $cft-token -o jsonpath='{.metadata.resourceVersion}')\" != $secret_version ]]"
  say "curl -X POST $SIM_BASE/__sim/tunnels/$tunnel_id/connectors -d '{\"count\":2}'   # cloudflared restarts with the new token (played: KWOK runs no containers)"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_id/connectors" -d '{"count": 2}' >/dev/null
  expect "the CloudflareTunnel is Ready on the new token" 90 condition cloudflaretunnel $cft $ns Ready True
  changed
fi

if wanted 9; then
  scene "A degraded tunnel, reported" \
    "One of the two cloudflared connectors loses three of its four edge connections: Cloudflare calls the tunnel degraded, and so does the CloudflareTunnel."
  say "curl -X POST $SIM_BASE/__sim/tunnels/$tunnel_id/connectors -d '{\"connectors\":[{\"connections\":4},{\"connections\":1}]}'   # played by the simulator"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_id/connectors" -d '{"connectors":[{"connections":4},{"connections":1}]}' >/dev/null
  expect "Degraded=True on the CloudflareTunnel" 90 condition cloudflaretunnel $cft $ns Degraded True
  say "curl -X POST $SIM_BASE/__sim/tunnels/$tunnel_id/connectors -d '{\"count\":2}'   # the connections come back"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_id/connectors" -d '{"count":2}' >/dev/null
  expect "Degraded=False once they are back" 90 condition cloudflaretunnel $cft $ns Degraded False
  changed
fi

if wanted 10; then
  scene "A hostname protected by a shared Access policy; a tenant's attempt on it refused" \
    "The platform team shares its policy \"employees\" with labelled namespaces; a PublicHostname names it and gets its Access application and the check on its rules. Another namespace's bare AccessApplication for the same hostname is refused. Then the policy is taken off, and the application goes."
  apply <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: platform}
---
apiVersion: zerotrust.tunnels.cloudflare.com/v1alpha1
kind: AccessPolicy
metadata: {name: employees, namespace: platform}
spec:
  allowedNamespaces:
    from: Selector
    selector: {matchLabels: {tour.example.com/employees: "true"}}
  forProvider:
    name: employees
    decision: allow
    include: [{emailDomain: example.com}]
YAML
  run kc label namespace $ns tour.example.com/employees=true --overwrite
  apply <<'YAML'
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: PublicHostname
metadata: {name: grafana, namespace: redis-cf-tunnel}
spec:
  tunnelRef: {name: redis-cache-azure-development}
  hostname: grafana.example.com
  origin: {service: {name: web, port: http}}
  access:
    policies: [{name: employees, namespace: platform}]
YAML
  expect "the PublicHostname is Ready" 120 condition publichostname grafana $ns Ready True
  expect "an Access application for grafana.example.com with the policy employees" 30 cf_has "access application" grafana.example.com employees
  expect "every rule of grafana.example.com requires its Access token" 30 cf_has rule grafana.example.com ", Access "
  expect "a proxied DNS record for grafana.example.com" 30 cf_has dns grafana.example.com
  apply <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: team-d}
---
apiVersion: zerotrust.tunnels.cloudflare.com/v1alpha1
kind: AccessPolicy
metadata: {name: only-me, namespace: team-d}
spec:
  forProvider:
    name: team-d only
    decision: allow
    include: [{email: mallory@example.net}]
---
apiVersion: zerotrust.tunnels.cloudflare.com/v1alpha1
kind: AccessApplication
metadata: {name: grafana, namespace: team-d}
spec:
  forProvider:
    name: not yours
    domain: grafana.example.com
    policies: [{policyIdRef: {name: only-me}}]
YAML
  expect "team-d's application is refused: Synced=False, NotAllowed" 90 condition accessapplication grafana team-d Synced False NotAllowed
  one_app() { [[ "$(sim_state | python3 hack/tour/state.py count /dev/stdin "access application" grafana.example.com)" == 1 ]]; }
  expect "the account still holds one application for grafana.example.com, the platform's" 5 eval 'one_app && cf_has "access application" grafana.example.com employees'
  run kc -n $ns patch publichostname grafana --type merge -p '{"spec":{"access":null}}'
  expect "the rules of grafana.example.com no longer ask for a token" 120 eval 'cf_has rule grafana.example.com && ! cf_has rule grafana.example.com ", Access "'
  expect "the Access application for grafana.example.com is gone from the account" 120 cf_lacks "access application" grafana.example.com
  changed
fi

if wanted 11; then
  scene "Two clusters, one hostname: failover through Cloudflare Load Balancing" \
    "A second cluster (its own control plane and its own provider, on the same Cloudflare account) serves failover.example.com beside this one. Each cluster's annotated Ingress makes its own pool of its own tunnel; this cluster's load balancer lists both, A first. A's cloudflared stops: the load balancer serves from B's pool, and from A's again when A is back."
  # Cluster B: a second local control plane and a second provider process,
  # stopped when the scene ends (or fails).
  cluster_b="$tour/cluster-b"
  stop_b() {
    if [[ -n "${provider_b:-}" ]]; then kill "$provider_b" 2>/dev/null; wait "$provider_b" 2>/dev/null || true; fi
    provider_b=""
    if [[ -f "$cluster_b/pids" ]]; then CLUSTER_DIR="$cluster_b" FAST=1 bash hack/local-cluster-down.sh >/dev/null 2>&1 || true; fi
  }
  trap stop_b EXIT
  say "CLUSTER_DIR=$cluster_b bash hack/local-cluster-up.sh   # cluster B"
  kubeconfig_b="$(CLUSTER_DIR="$cluster_b" KWOK_NODES=1 BIN_DIR="$(dirname "$KUBECTL")" bash hack/local-cluster-up.sh 2>"$tour/cluster-b-up.log")" \
    || { cat "$tour/cluster-b-up.log" >&2; die "cluster B did not start"; }
  kb() { "$KUBECTL" --kubeconfig "$kubeconfig_b" --cache-dir "$out/kubectl-cache" "$@"; }
  kb apply --server-side -f package/crds >/dev/null
  kb apply -f examples/ingress/ingressclass.yaml >/dev/null
  kb wait --for=condition=Established crd --all --timeout=60s >/dev/null
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
  # Two installations on one token share its rate limit: B takes 15%, as
  # docs/operate.md advises (A keeps its default).
  say "KUBECONFIG=<cluster B> provider --cloudflare-budget-fraction 0.15 &   # cluster B's provider (log: $tour/provider-b.log)"
  KUBECONFIG="$kubeconfig_b" _output/bin/provider --poll 10s --cloudflare-budget-fraction 0.15 \
    --metrics-bind-address "127.0.0.1:$(free_port)" --health-probe-bind-address "127.0.0.1:$(free_port)" >"$tour/provider-b.log" 2>&1 &
  provider_b=$!
  # B's credentials: the same account's token, copied Secret to Secret
  # (never shown, never on a command line).
  kb create namespace crossplane-system >/dev/null
  kc -n crossplane-system get secret cloudflare-credentials -o json \
    | python3 -c 'import json,sys; s=json.load(sys.stdin); print(json.dumps({"apiVersion":"v1","kind":"Secret","metadata":{"name":s["metadata"]["name"],"namespace":"crossplane-system"},"data":s["data"]}))' \
    | kb apply -f - >/dev/null
  kb apply -f - >/dev/null <<YAML
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: ClusterProviderConfig
metadata: {name: default}
spec:
  credentials:
    source: Secret
    secretRef: {namespace: crossplane-system, name: cloudflare-credentials}
  endpoint: $SIM_URL
YAML
  failover_site() { # CLUSTER POOL EXTRA-ANNOTATIONS
    cat <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: failover}
---
apiVersion: tunnels.cloudflare.com/v1alpha1
kind: CloudflareTunnel
metadata: {name: edge, namespace: failover}
spec:
  tunnelName: failover-$1   # tunnel names are unique in the account
  replicas: 1
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: failover}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: failover
  annotations:
    tunnels.cloudflare.com/tunnel: edge
    tunnels.cloudflare.com/public: "true"
    tunnels.cloudflare.com/lb-pool: $2
    tunnels.cloudflare.com/lb-monitor-interval: 10s
$3
spec:
  ingressClassName: cloudflare
  rules:
    - host: failover.example.com
      http:
        paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}]
YAML
  }
  say "# cluster A: its pool, and the load balancer's pools in order with the fallback"
  failover_site a failover-a "    tunnels.cloudflare.com/lb-pools: failover-a, failover-b
    tunnels.cloudflare.com/lb-fallback-pool: failover-b" | apply
  say "# cluster B (kubectl --kubeconfig <cluster B>): its pool only, probed at a path cloudflared answers itself"
  failover_site b failover-b "    tunnels.cloudflare.com/lb-monitor-path: /cf-probe
    tunnels.cloudflare.com/lb-monitor-connector-only: \"true\"" | kb apply -f - >/dev/null
  tunnel_of() { "$@" -n failover get cloudflaretunnel edge -o jsonpath='{.status.tunnelID}'; }
  expect "both clusters' tunnels exist" 180 eval '[[ -n "$(tunnel_of kc)" && -n "$(tunnel_of kb)" ]]'
  tunnel_a="$(tunnel_of kc)"; tunnel_b="$(tunnel_of kb)"
  # No container runs under KWOK: play each cluster's cloudflared connecting.
  for id in "$tunnel_a" "$tunnel_b"; do curl -sf -X POST "$SIM_BASE/__sim/tunnels/$id/connectors" -d '{"count": 2}' >/dev/null; done
  expect "cluster B's pool failover-b, its tunnel the origin" 180 cf_has pool failover-b "$tunnel_b.cfargotunnel.com"
  expect "the load balancer lists both pools, A's first" 180 cf_has "load balancer" failover.example.com "pools failover-a, failover-b; fallback failover-b"
  expect "no DNS record for failover.example.com: the load balancer holds the name" 5 cf_lacks dns failover.example.com
  serving() { [[ "$(curl -sf "$SIM_BASE/__sim/load_balancers/decision?hostname=failover.example.com" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pool_name"])')" == "$1" ]]; }
  say "curl $SIM_BASE/__sim/load_balancers/decision?hostname=failover.example.com   # which pool would serve now"
  expect "the load balancer serves from failover-a" 120 serving failover-a
  say "curl -X POST $SIM_BASE/__sim/tunnels/$tunnel_a/connectors -d '{\"count\":0}'   # cluster A's cloudflared stops (played)"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_a/connectors" -d '{"count": 0}' >/dev/null
  expect "A's pool is unhealthy: the load balancer serves from failover-b" 120 serving failover-b
  pool_health() { [[ "$(kc -n failover get publichostnames -o jsonpath='{.items[0].status.loadBalancing.poolHealth}')" == "$1" ]]; }
  expect "cluster A's PublicHostname says its pool is Unhealthy" 120 pool_health Unhealthy
  say "curl -X POST $SIM_BASE/__sim/tunnels/$tunnel_a/connectors -d '{\"count\":2}'   # A is back"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_a/connectors" -d '{"count": 2}' >/dev/null
  expect "the load balancer serves from failover-a again" 120 serving failover-a
  changed
  # Cleaned up here, not by the last scene: cluster B goes with this one.
  # A first: its load balancer lists B's pool, which Cloudflare refuses to
  # delete while listed.
  run kc delete namespace failover --wait=false
  expect "cluster A's cloudflared Deployment is gone" 120 eval "! kc -n failover get deployment edge-cloudflared"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_a/connectors" -d '{"count": 0}' >/dev/null
  expect "cluster A's namespace is gone, its load balancer, pool and tunnel with it" 300 eval '! kc get namespace failover && cf_lacks "load balancer" failover.example.com && cf_lacks pool failover-a && cf_lacks tunnel failover-a'
  run kb delete namespace failover --wait=false
  expect "cluster B's cloudflared Deployment is gone" 120 eval "! kb -n failover get deployment edge-cloudflared"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_b/connectors" -d '{"count": 0}' >/dev/null
  expect "cluster B's namespace is gone, its pool and tunnel with it" 300 eval '! kb get namespace failover && cf_lacks pool failover-b && cf_lacks tunnel failover-b'
  expect "no monitor of failover.example.com is left" 5 cf_lacks monitor failover.example.com
  say "# cluster B's provider and control plane stop"
  stop_b
  trap - EXIT
fi

if wanted 12; then
  scene "Everything deleted, the account empty" \
    "Deleting the namespaces deletes every object the provider made in Cloudflare, and nothing else."
  for n in team-b team-c team-d platform; do kc get namespace $n >/dev/null 2>&1 && run kc delete namespace $n --wait=false; done
  run kc delete namespace $ns --wait=false
  expect "the cloudflared Deployment is gone" 120 eval "! kc -n $ns get deployment $cft-cloudflared"
  say "curl -X POST $SIM_BASE/__sim/tunnels/$tunnel_id/connectors -d '{\"count\":0}'   # its pods stopped, so their connections close (played)"
  curl -sf -X POST "$SIM_BASE/__sim/tunnels/$tunnel_id/connectors" -d '{"count": 0}' >/dev/null
  gone() { ! kc get namespace "$1"; }
  expect "the namespaces are gone" 300 eval "gone $ns && gone team-b && gone team-c && gone team-d && gone platform"
  expect "the Cloudflare account holds nothing" 60 eval 'sim_state >"$tour/sim-now.json" && python3 hack/tour/state.py empty "$tour/sim-now.json"'
  changed
fi

printf '\n\033[1mThe tour: every scene passed\033[0m\n'
printf '    %s\n' "${times[@]}"
