#!/usr/bin/env bash
# Start a kubelet-less local Kubernetes cluster on loopback only:
#   etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok (fake nodes/pods)
# All ports are random free ports on 127.0.0.1. Prints the admin kubeconfig path on stdout
# (everything else goes to stderr). Stop with local-cluster-down.sh.
#
# Env:
#   BIN_DIR        dir with etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl
#   CLUSTER_DIR    state dir (wiped on start)                     [<script dir>/cluster]
#   KWOK_STAGES    kwok Stage config (node-initialize, node-heartbeat-with-lease,
#                  pod-ready, pod-complete, pod-delete)           [$BIN_DIR/kwok-stages.yaml]
#   KWOK_NODES     number of fake nodes                          [1]
#   AUTHZ_MODE     kube-apiserver --authorization-mode           [RBAC]
#   UP_TIMEOUT     seconds to wait for each readiness step       [60]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN_DIR="${BIN_DIR:-$here/bin}"
DIR="${CLUSTER_DIR:-$here/cluster}"
KWOK_STAGES="${KWOK_STAGES:-$BIN_DIR/kwok-stages.yaml}"
KWOK_NODES="${KWOK_NODES:-1}"
AUTHZ_MODE="${AUTHZ_MODE:-RBAC}"
UP_TIMEOUT="${UP_TIMEOUT:-60}"

log() { printf '%s cluster-up: %s\n' "$(date +%T.%3N)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
t0=$(date +%s.%N)
elapsed() { printf '%.2f' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{print a-b}')"; }

for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl; do
  [[ -x "$BIN_DIR/$b" ]] || die "missing $BIN_DIR/$b"
done
[[ -f "$KWOK_STAGES" ]] || die "missing kwok stages file $KWOK_STAGES"
command -v openssl >/dev/null || die "openssl is required"
command -v curl >/dev/null || die "curl is required"

# Refuse to start over a running cluster.
if [[ -f "$DIR/pids" ]]; then
  while read -r name pid; do
    if kill -0 "$pid" 2>/dev/null; then die "$name (pid $pid) from $DIR still runs; run local-cluster-down.sh first"; fi
  done < "$DIR/pids"
fi
# Only ever wipe a directory this script created (marker file), never an arbitrary CLUSTER_DIR.
if [[ -d "$DIR" && -n "$(ls -A "$DIR")" && ! -f "$DIR/.kwok-cluster" ]]; then
  die "$DIR exists, is not empty and was not created by local-cluster-up.sh"
fi
rm -rf "$DIR"
# On any failure from here on, stop whatever was started (logs stay in $DIR/logs).
ok=0
trap '[[ $ok == 1 ]] || { log "startup failed; stopping started processes (logs in $DIR/logs)"; CLUSTER_DIR="$DIR" FAST=1 "$here/local-cluster-down.sh" || true; }' EXIT
mkdir -p "$DIR"/{pki,logs,etcd,kwok-workdir,flexvolume,certdir/apiserver,certdir/kcm,certdir/scheduler}
chmod 700 "$DIR/pki" "$DIR/etcd"
: > "$DIR/pids"; : > "$DIR/.kwok-cluster"

# ---------------------------------------------------------------- ports
# Pick below the kernel's ephemeral range: a port in that range can be taken as the source port
# of any outgoing connection between our check and the component's bind().
eph_lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
(( eph_lo > 12000 )) || eph_lo=32768
declare -A used=()
# free_port VAR: sets VAR to a free port no earlier call returned. It must not
# run in a $(...) subshell: the record of ports already handed out would be
# lost with it, and two components could draw the same port (seen in CI:
# the scheduler was given etcd's port).
free_port() {
  local p
  while :; do
    p=$((10000 + RANDOM % (eph_lo - 10000)))
    [[ -n "${used[$p]:-}" ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then used[$p]=1; printf -v "$1" '%s' "$p"; return; fi
  done
}
free_port ETCD_PORT; free_port ETCD_PEER_PORT; free_port APISERVER_PORT
free_port KCM_PORT; free_port SCHED_PORT

# ---------------------------------------------------------------- PKI (EC P-256, openssl)
pki="$DIR/pki"
genkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
mkca() { # NAME CN
  genkey "$pki/$1.key"
  openssl req -x509 -new -key "$pki/$1.key" -subj "/CN=$2" -days 3650 -out "$pki/$1.crt" -extensions v3_ca \
    -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3_ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n') 2>/dev/null
}
sign() { # NAME SUBJECT EXTENDED_KEY_USAGE [SAN]; signs with CA=$CA (default: ca)
  local ca="${CA:-ca}"
  genkey "$pki/$1.key"
  openssl req -new -key "$pki/$1.key" -subj "$2" -out "$pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$ca.crt" -CAkey "$pki/$ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -days 365 -out "$pki/$1.crt" \
    -extfile <(printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s' "$3" "${4:+subjectAltName=$4}") 2>/dev/null
  rm -f "$pki/$1.csr"
}
mkca ca kwok-local-ca
sign apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
sign admin "/O=system:masters/CN=kwok-admin" clientAuth
sign kcm "/CN=system:kube-controller-manager" clientAuth
sign scheduler "/CN=system:kube-scheduler" clientAuth
sign kwok "/O=system:masters/CN=kwok-controller" clientAuth
# front-proxy (requestheader) CA: KCM/scheduler (and aggregated API servers) read it for delegated authn
mkca front-proxy-ca kwok-front-proxy-ca
CA=front-proxy-ca sign front-proxy-client "/CN=front-proxy-client" clientAuth
genkey "$pki/sa.key"; openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null

kubeconfig() { # FILE USER
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kwok
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: kwok
  context: {cluster: kwok, user: $2}
current-context: kwok
EOF
  chmod 600 "$1"
}
for u in admin kcm scheduler kwok; do kubeconfig "$DIR/$u.kubeconfig" "$u"; done
KUBECONFIG_OUT="$DIR/kubeconfig"; cp "$DIR/admin.kubeconfig" "$KUBECONFIG_OUT"
log "PKI + kubeconfigs ready ($(elapsed)s)"

# ---------------------------------------------------------------- helpers
start() { # NAME BINARY ARGS...
  local name=$1; shift
  if command -v setsid >/dev/null; then setsid "$@" >"$DIR/logs/$name.log" 2>&1 < /dev/null &
  else nohup "$@" >"$DIR/logs/$name.log" 2>&1 < /dev/null & fi
  echo "$name $!" >> "$DIR/pids"
}
alive() { local pid; pid=$(awk -v n="$1" '$1==n{print $2}' "$DIR/pids"); kill -0 "$pid" 2>/dev/null; }
wait_for() { # NAME DESCRIPTION COMMAND...
  local name=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + UP_TIMEOUT ))
  until "$@" >/dev/null 2>&1; do
    [[ -z "$name" ]] || alive "$name" || { tail -20 "$DIR/logs/$name.log" >&2; die "$name exited"; }
    (( $(date +%s) < deadline )) || { [[ -z "$name" ]] || tail -20 "$DIR/logs/$name.log" >&2; die "timeout waiting for $what"; }
    sleep 0.2
  done
  log "$what ($(elapsed)s)"
}
kc() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_OUT" --cache-dir "$DIR/kubectl-cache" "$@"; }
https_ok() { curl -sfk --max-time 2 "$1" | grep -qx ok; }

# ---------------------------------------------------------------- etcd
start etcd "$BIN_DIR/etcd" \
  --name=kwok --data-dir="$DIR/etcd" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="kwok=http://127.0.0.1:$ETCD_PEER_PORT" \
  --unsafe-no-fsync=true --quota-backend-bytes=2147483648 --log-level=warn

wait_for etcd "etcd healthy on 127.0.0.1:$ETCD_PORT" sh -c "curl -sf --max-time 2 http://127.0.0.1:$ETCD_PORT/health | grep -q '\"health\":\"true\"'"

# ---------------------------------------------------------------- kube-apiserver
start kube-apiserver "$BIN_DIR/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
  --cert-dir="$DIR/certdir/apiserver" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 \
  --requestheader-client-ca-file="$pki/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$pki/front-proxy-client.crt" --proxy-client-key-file="$pki/front-proxy-client.key" \
  --endpoint-reconciler-type=none \
  --authorization-mode="$AUTHZ_MODE" --allow-privileged=true
wait_for kube-apiserver "kube-apiserver ready on 127.0.0.1:$APISERVER_PORT" \
  sh -c "curl -sf --max-time 2 --cacert '$pki/ca.crt' --cert '$pki/admin.crt' --key '$pki/admin.key' https://127.0.0.1:$APISERVER_PORT/readyz | grep -qx ok"

# ---------------------------------------------------------------- kcm, scheduler, kwok
start kube-controller-manager "$BIN_DIR/kube-controller-manager" \
  --kubeconfig="$DIR/kcm.kubeconfig" \
  --authentication-kubeconfig="$DIR/kcm.kubeconfig" --authorization-kubeconfig="$DIR/kcm.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$DIR/certdir/kcm" \
  --leader-elect=false --use-service-account-credentials=true \
  --root-ca-file="$pki/ca.crt" --service-account-private-key-file="$pki/sa.key" \
  --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
  --service-cluster-ip-range=10.96.0.0/16 --cluster-name=kwok \
  --flex-volume-plugin-dir="$DIR/flexvolume" \
  --kube-api-qps=100 --kube-api-burst=200
start kube-scheduler "$BIN_DIR/kube-scheduler" \
  --kubeconfig="$DIR/scheduler.kubeconfig" \
  --authentication-kubeconfig="$DIR/scheduler.kubeconfig" --authorization-kubeconfig="$DIR/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --cert-dir="$DIR/certdir/scheduler" \
  --leader-elect=false --kube-api-qps=100 --kube-api-burst=200
KWOK_WORKDIR="$DIR/kwok-workdir" start kwok "$BIN_DIR/kwok" \
  --kubeconfig="$DIR/kwok.kubeconfig" --config="$KWOK_STAGES" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds=40 --cidr=10.244.0.0/16 --node-ip=127.0.0.1

# fake nodes (kwok only manages nodes carrying the annotation kwok.x-k8s.io/node=fake)
for i in $(seq 0 $((KWOK_NODES - 1))); do
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    kubernetes.io/hostname: kwok-node-$i
    node-role.kubernetes.io/agent: ""
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  nodeInfo: {architecture: amd64, operatingSystem: linux}
---
EOF
done | kc apply -f - >/dev/null
log "created $KWOK_NODES fake node(s) ($(elapsed)s)"

wait_for kube-controller-manager "kube-controller-manager healthy on 127.0.0.1:$KCM_PORT" https_ok "https://127.0.0.1:$KCM_PORT/healthz"
wait_for kube-scheduler "kube-scheduler healthy on 127.0.0.1:$SCHED_PORT" https_ok "https://127.0.0.1:$SCHED_PORT/healthz"
wait_for kwok "kwok made the node(s) Ready" kc wait --for=condition=Ready node -l type=kwok --timeout=2s
wait_for kube-controller-manager "node taints cleared by node-lifecycle controller" \
  sh -c "[ -z \"\$('$BIN_DIR/kubectl' --kubeconfig '$KUBECONFIG_OUT' --cache-dir '$DIR/kubectl-cache' get nodes -l type=kwok -o jsonpath='{.items[*].spec.taints}')\" ]"
wait_for kube-controller-manager "default ServiceAccount created" kc -n default get serviceaccount default

cat > "$DIR/env" <<EOF
KUBECONFIG=$KUBECONFIG_OUT
ETCD_PORT=$ETCD_PORT
APISERVER_PORT=$APISERVER_PORT
KCM_PORT=$KCM_PORT
SCHED_PORT=$SCHED_PORT
EOF
echo "$(elapsed)" > "$DIR/up-seconds"
ok=1
log "cluster ready in $(elapsed)s; pids in $DIR/pids, logs in $DIR/logs"
echo "$KUBECONFIG_OUT"
