#!/usr/bin/env bash
# Run every Go fuzz target of the module for FUZZTIME each, one at a time, and
# print a summary table: target, package, executions (from the last progress
# line Go prints every 3 s; "-" when the run ended before the first), wall
# time (including the instrumented build), result.
#
# Usage: [FUZZTIME=10s] [FUZZFLAGS=...] hack/fuzz.sh [packages...]   (default ./...)
#   FUZZTIME   per target, as go test -fuzztime takes it: 10s (default), 1m, 5000x
#   FUZZFLAGS  extra go test flags, e.g. "-parallel 1"
# Exits non-zero if any target fails. A failing input is saved where Go saves
# it, testdata/fuzz/<target>/ in the package, and becomes a regression test
# of plain `go test`; the table prints the command that reproduces it.
#
# Targets are discovered with `go test -list '^Fuzz'` in every package whose
# test files declare one. In a package whose tests have a TestMain (here: the
# ones that start a kube-apiserver and etcd), the fuzz targets are built
# without the package's other test files (go test -overlay), because fuzzing
# re-runs the test binary in worker processes that are killed when the time
# is up: a TestMain there would start a control plane in every worker and
# leak it. Such fuzz targets must therefore be self-contained.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME="${FUZZTIME:-10s}"
read -r -a extra <<<"${FUZZFLAGS:-}"
[[ $# -gt 0 ]] || set -- ./...

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

has_fuzz() { grep -lE '^func Fuzz[A-Z0-9_][A-Za-z0-9_]*\(' "$@" </dev/null 2>/dev/null; }

declare -a targets=() # "name<TAB>package<TAB>overlay file or empty"
list_failed=0
while IFS=$'\t' read -r pkg dir files; do
  paths=()
  for f in $files; do paths+=("$dir/$f"); done
  [[ ${#paths[@]} -gt 0 ]] || continue
  mapfile -t fuzzfiles < <(has_fuzz "${paths[@]}")
  [[ ${#fuzzfiles[@]} -gt 0 ]] || continue

  # Fuzzing rebuilds every dependency with coverage instrumentation, and
  # the Cloudflare SDK alone takes ~4.5 minutes of that on two cores: keep
  # fuzz targets in packages that do not import it (pure logic lives in
  # SDK-free packages such as internal/hostname).
  if go list -deps -test "$pkg" </dev/null | grep -q '^github.com/cloudflare/cloudflare-go'; then
    echo "fuzz.sh: $pkg declares fuzz targets but imports the Cloudflare SDK (~4.5 min of instrumented build): move the targets and what they fuzz into an SDK-free package" >&2
    list_failed=1
    continue
  fi

  json=""
  if grep -qE '^func TestMain\(' "${paths[@]}" </dev/null; then
    if grep -qE '^func TestMain\(' "${fuzzfiles[@]}" </dev/null; then
      echo "fuzz.sh: $pkg: a file declaring fuzz targets also declares TestMain; cannot isolate them" >&2
      list_failed=1
      continue
    fi
    json="$work/overlay-$(echo "$pkg" | tr '/.' '__').json"
    {
      printf '{"Replace": {'
      sep=""
      for p in "${paths[@]}"; do
        if ! printf '%s\n' "${fuzzfiles[@]}" | grep -qxF "$p"; then
          printf '%s"%s": ""' "$sep" "$p"
          sep=", "
        fi
      done
      printf '}}\n'
    } >"$json"
  fi

  if ! out="$(go test ${json:+"-overlay=$json"} "${extra[@]}" -list '^Fuzz' "$pkg" 2>&1 </dev/null)"; then
    echo "fuzz.sh: cannot list the fuzz targets of $pkg:" >&2
    echo "$out" >&2
    list_failed=1
    continue
  fi
  while read -r name; do
    targets+=("$name"$'\t'"$pkg"$'\t'"$json")
  done < <(grep -E '^Fuzz' <<<"$out")
done < <(go list -f '{{.ImportPath}}{{"\t"}}{{.Dir}}{{"\t"}}{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' "$@")

if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz.sh: no fuzz targets found in $*" >&2
  exit 1
fi

echo "fuzz.sh: ${#targets[@]} fuzz targets, $FUZZTIME each"
# A run that failed only through Go's fuzz deadline race (see below).
deadline_race() {
  grep -q 'context deadline exceeded' "$1" && ! grep -qE 'Failing input written to|panic:|--- FAIL: .*/' "$1"
}

declare -a rows=()
failed=0
for t in "${targets[@]}"; do
  IFS=$'\t' read -r name pkg json <<<"$t"
  log="$work/$name.log"
  start=$SECONDS
  echo "--- $name ($pkg)"
  fuzz() { go test ${json:+"-overlay=$json"} "${extra[@]}" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1 </dev/null; }
  # Go's fuzz coordinator can end a run with a bare "context deadline
  # exceeded" and no failing input when -fuzztime runs out: it compares the
  # parent context's error with its child's before the cancellation has
  # reached the child (golang/go#75804, fixed in Go 1.27). Nothing was found
  # then, since any failing input is written before the run ends. Such a run
  # is retried once; if the race strikes again, the target passes only when
  # its corpus replays cleanly as a plain test, and the table says so.
  ok=0
  note=""
  if fuzz; then
    ok=1
  elif deadline_race "$log"; then
    echo "    (run ended by Go's fuzz deadline race with no failing input; running once more)"
    if fuzz; then
      ok=1
    elif deadline_race "$log" && go test ${json:+"-overlay=$json"} "${extra[@]}" -count=1 -run "^${name}\$" "$pkg" >>"$log" 2>&1 </dev/null; then
      ok=1
      note=" (deadline race twice, no failing input; corpus replayed)"
    fi
  fi
  if [[ $ok == 1 ]]; then
    result="PASS$note"
  else
    result=FAIL
    failed=1
    sed 's/^/    /' "$log" | tail -n 25
    if input="$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -n 1)" && [[ -n "$input" ]]; then
      result="FAIL, reproduce: go test -run '^${name}/${input##*/}\$' $pkg"
    fi
  fi
  execs="$(grep -oE 'execs: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)"
  rows+=("$name"$'\t'"$pkg"$'\t'"${execs:--}"$'\t'"$((SECONDS - start))s"$'\t'"$result")
done

echo
{
  printf 'TARGET\tPACKAGE\tEXECS\tTIME\tRESULT\n'
  printf '%s\n' "${rows[@]}"
} | column -t -s $'\t'

if [[ $failed -ne 0 || $list_failed -ne 0 ]]; then
  exit 1
fi
