#!/usr/bin/env bash
# Validate every YAML file under examples/ against the CRDs in package/crds with
# `crossplane resource validate` (offline). Kinds with no schema there (Secret,
# Namespace, Deployment, ...) are reported as missing schemas and do not fail.
# Exits non-zero on any validation failure, or when there is nothing to check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CRDS=package/crds
EXAMPLES=examples

crossplane="$(bash hack/crossplane-cli.sh)"

mapfile -t crds < <(find "$CRDS" -type f \( -name '*.yaml' -o -name '*.yml' \) 2>/dev/null | LC_ALL=C sort)
mapfile -t files < <(find "$EXAMPLES" -type f \( -name '*.yaml' -o -name '*.yml' \) 2>/dev/null | LC_ALL=C sort)
(( ${#crds[@]} )) || { echo "validate-examples: no CRDs in $CRDS/" >&2; exit 1; }
(( ${#files[@]} )) || { echo "validate-examples: no YAML files in $EXAMPLES/" >&2; exit 1; }

# No schema downloads (--crossplane-image=""), and a throwaway schema cache
# instead of ~/.crossplane/cache.
cache="$(mktemp -d)"; trap 'rm -rf "$cache"' EXIT
failed=()
for f in "${files[@]}"; do
  [[ "$f" != *,* ]] || { echo "FAIL $f: file names with ',' are not supported" >&2; failed+=("$f"); continue; }
  if out="$("$crossplane" resource validate --crossplane-image="" --cache-dir="$cache" "$CRDS" "$f" 2>&1)"; then
    echo "ok   $f: $(grep '^Total ' <<<"$out" || echo "$out" | tail -n1)"
  else
    echo "FAIL $f"; sed 's/^/       /' <<<"$out"
    failed+=("$f")
  fi
done

echo "validate-examples: ${#files[@]} file(s) against ${#crds[@]} CRD file(s) in $CRDS/; ${#failed[@]} failed"
(( ${#failed[@]} == 0 ))
