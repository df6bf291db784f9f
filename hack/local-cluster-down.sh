#!/usr/bin/env bash
# Stop the cluster started by local-cluster-up.sh. Signals only the PIDs recorded in
# $CLUSTER_DIR/pids, and only while /proc/PID/exe is still the recorded binary.
# Order: kwok + kube-scheduler + kube-controller-manager (together), then kube-apiserver,
# then etcd. SIGTERM, wait up to 15s, then SIGKILL. FAST=1 sends SIGKILL right away (fine for
# throwaway test clusters: ~0.1s instead of ~7s). PURGE=1 also deletes $CLUSTER_DIR.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${CLUSTER_DIR:-$here/cluster}"
log() { printf '%s cluster-down: %s\n' "$(date +%T.%3N)" "$*" >&2; }
[[ -f "$DIR/pids" ]] || { log "no $DIR/pids; nothing to stop"; exit 0; }

declare -A pid_of=()
while read -r name pid; do pid_of[$name]=$pid; done < "$DIR/pids"

running() { # PID: alive and not a zombie (an exited child waiting for init to reap it)
  kill -0 "$1" 2>/dev/null || return 1
  [[ ! -r "/proc/$1/stat" ]] || [[ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]]
}
ours() { # NAME PID: still running and still our binary?
  running "$2" || return 1
  local exe
  if [[ -e "/proc/$2/exe" ]]; then
    exe=$(readlink "/proc/$2/exe" 2>/dev/null) || return 1
    [[ "$(basename "${exe% (deleted)}")" == "$1" ]]
  else # no /proc (macOS): compare the (possibly truncated) command name
    exe=$(ps -o comm= -p "$2" 2>/dev/null) || return 1
    exe=$(basename "$exe"); [[ -n "$exe" && "$1" == "$exe"* ]]
  fi
}
stop() { # NAMES... (stopped together)
  local n pids=() names=()
  for n in "$@"; do
    local p="${pid_of[$n]:-}"
    [[ -n "$p" ]] || continue
    if ours "$n" "$p"; then kill "-${SIG:-TERM}" "$p"; pids+=("$p"); names+=("$n"); else log "$n ($p) not running"; fi
  done
  local i
  for _ in $(seq 1 150); do
    local left=0
    for p in "${pids[@]}"; do running "$p" && left=1; done
    (( left )) || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if running "${pids[$i]}"; then log "${names[$i]} (${pids[$i]}) ignored SIGTERM; SIGKILL"; kill -KILL "${pids[$i]}"; fi
    log "stopped ${names[$i]} (${pids[$i]})"
  done
}
t0=$(date +%s.%N)
[[ "${FAST:-0}" == 1 ]] && SIG=KILL
stop kwok kube-scheduler kube-controller-manager
stop kube-apiserver
stop etcd
mv "$DIR/pids" "$DIR/pids.stopped"
log "all stopped in $(printf '%.2f' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{print a-b}')")s"
if [[ "${PURGE:-0}" == 1 ]]; then rm -rf "$DIR"; log "removed $DIR"; fi
