// Package promrules tests the alerting rules and the Grafana dashboard the
// chart ships (cluster/charts/provider-cloudflare-tunnel/files) with
// Prometheus' own rule-file parser, PromQL parser and alerting-rule
// evaluator, and checks that every metric they use is documented in
// docs/metrics.md (the e2e suite checks that every documented metric is
// served). It is a module of its own so Prometheus' dependency tree stays
// out of the provider's go.mod; `make test` runs it.
package promrules
