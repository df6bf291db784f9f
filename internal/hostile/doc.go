// Package hostile holds the hostile-input corpus: a table-driven integration
// test that throws malformed and malicious manifests and annotations at the
// whole provider (a real kube-apiserver with the provider's CRDs, every
// controller, the Cloudflare simulator) and checks how each one is answered
// — refused by the API server's schema, a Warning event on the Ingress, a
// False Synced or Ready condition — and that none of them disturbs an
// Ingress that already works or leaves anything behind in Cloudflare.
//
// The package has no production code; everything is in its tests.
package hostile
