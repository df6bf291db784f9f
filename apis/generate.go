//go:build generate

// Remove generated files so a renamed field never leaves a stale file that
// angryjet's type check trips over.
//go:generate bash -c "rm -rf ../package/crds && find . -name 'zz_generated.*.go' -delete"

// Deepcopy methods and CRDs.
//go:generate go tool controller-gen object:headerFile=../hack/boilerplate.go.txt paths=./... crd:crdVersions=v1 output:artifacts:config=../package/crds

// Managed-resource, provider-config and reference-resolver method sets.
//go:generate go tool angryjet generate-methodsets --header-file=../hack/boilerplate.go.txt ./...

// Package apis contains the Kubernetes API of provider-cloudflare-tunnel.
package apis
