#!/usr/bin/env bash
# Print the packages whose tests start no control plane (no envtest, no
# provider under test): they run under the race detector in CI
# (make test runs them with -race). A package whose tests start a kube-apiserver is left out:
# its controllers would run several times slower under the detector.
set -euo pipefail
cd "$(dirname "$0")/.."
go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... |
  while read -r pkg dir; do
    if ! grep -qE '"[^"]*/internal/testenv(/providertest)?"|sigs.k8s.io/controller-runtime/pkg/envtest' "$dir"/*_test.go; then
      echo "$pkg"
    fi
  done
