#!/usr/bin/env bash
# Build (once per version) everything cluster-up.sh needs, from the Go module proxy only:
#   kube-apiserver kube-controller-manager kube-scheduler kubectl  <- k8s.io/kubernetes vK8S
#   etcd                                                            <- go.etcd.io/etcd/server/v3 vETCD
#   kwok + kwok-stages.yaml                                         <- sigs.k8s.io/kwok vKWOK
# into $CACHE_ROOT/k8s-<v>-etcd-<v>-kwok-<v>-<os>-<arch>/ and print that directory.
# Usage: BIN_DIR="$(hack/local-cluster-bins.sh)" hack/local-cluster-up.sh
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.35.8}"
ETCD_VERSION="${ETCD_VERSION:-3.6.6}"
KWOK_VERSION="${KWOK_VERSION:-0.8.0}"
CACHE_ROOT="${KWOK_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kwok-cluster-bins}"
DEST="$CACHE_ROOT/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-$(go env GOOS)-$(go env GOARCH)"
KUBE_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

missing() { local b; for b in "${KUBE_CMDS[@]}" etcd kwok; do [[ -x "$DEST/$b" ]] || return 0; done; [[ ! -f "$DEST/kwok-stages.yaml" ]]; }
if ! missing; then echo "$DEST"; exit 0; fi

export GOWORK=off GOFLAGS="-modcacherw -buildvcs=false" CGO_ENABLED=0
log() { echo "kwok-cluster-bins: $*" >&2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$DEST"

# --- Kubernetes components: a throwaway module requiring k8s.io/kubernetes; its staging modules
# (required at v0.0.0, replaced by ./staging in its own go.mod) are mapped to published v0.X.Y.
build_kube() {
  todo=(); for c in "${KUBE_CMDS[@]}"; do [[ -x "$DEST/$c" ]] || todo+=("$c"); done
  if ((${#todo[@]})); then
    mkdir "$work/kube" && cd "$work/kube"
    modfile="$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
    printf 'module local/kube-bins\n\ngo %s\n\nrequire k8s.io/kubernetes v%s\n' \
      "$(awk '$1=="go"{print $2; exit}' "$modfile")" "$K8S_VERSION" > go.mod
    for m in $(awk '$1 ~ /^k8s\.io\// && $2=="v0.0.0" {print $1}' "$modfile"); do
      go mod edit -replace="$m=$m@v0.${K8S_VERSION#1.}"
    done
    { echo '//go:build tools'; echo; echo 'package tools'; for c in "${todo[@]}"; do echo "import _ \"k8s.io/kubernetes/cmd/$c\""; done; } > tools.go
    log "resolving k8s.io/kubernetes v$K8S_VERSION"; go mod tidy
    ld="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld="$ld -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION")"
      ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    log "building ${todo[*]} (cold: ~8-12 min on 2 cores; warm: seconds)"
    mkdir "$work/out"
    go build -trimpath -tags=selinux,notest,grpcnotrace -ldflags "$ld" -o "$work/out/" "${todo[@]/#/k8s.io/kubernetes/cmd/}"
    mv "$work/out/"* "$DEST/"
  fi
}

# --- etcd: the root package of go.etcd.io/etcd/server/v3 is etcd's main package
build_etcd() {
  if [[ ! -x "$DEST/etcd" ]]; then
    mkdir "$work/etcd" && cd "$work/etcd"
    printf 'module local/etcd-bin\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
    log "building etcd v$ETCD_VERSION"; go mod tidy
    go build -trimpath -ldflags "-s -w" -o "$DEST/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$DEST/etcd.tmp" "$DEST/etcd"
  fi
}

# --- kwok: no replace directives in its go.mod, so `go install pkg@version` works.
# kwok v0.8.0 needs go >= 1.26.0 (GOTOOLCHAIN=auto fetches a newer toolchain from the proxy if needed).
build_kwok() {
  if [[ ! -x "$DEST/kwok" ]]; then
    log "building kwok v$KWOK_VERSION"
    GOBIN="$work" go install -trimpath \
      -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=v$KWOK_VERSION -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=v$K8S_VERSION" \
      "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
    mv "$work/kwok" "$DEST/kwok"
  fi
}

# --- kwok's default stages (what kwokctl embeds): node init + lease heartbeat, pod ready/complete/delete
write_stages() {
  if [[ ! -f "$DEST/kwok-stages.yaml" ]]; then
    src="$(go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')/kustomize/stage"
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "# sigs.k8s.io/kwok@v$KWOK_VERSION/kustomize/stage/$f"; cat "$src/$f"; echo "---"
    done | sed '$d' > "$DEST/kwok-stages.yaml.tmp" && mv "$DEST/kwok-stages.yaml.tmp" "$DEST/kwok-stages.yaml"
  fi
}

# etcd and kwok build beside Kubernetes: on a cold machine their module
# downloads then overlap its compile instead of following it.
build_etcd & etcd_pid=$!
build_kwok & kwok_pid=$!
build_kube
wait "$etcd_pid" || { log "etcd build failed"; exit 1; }
wait "$kwok_pid" || { log "kwok build failed"; exit 1; }
write_stages

log "done: $DEST"; echo "$DEST"
