// Package realism runs the whole provider against a simulator switched to
// be as strict as Cloudflare where Cloudflare lags, lingers or limits: lists
// that miss objects created moments ago, connectors that stay listed (and
// block a tunnel's delete with 1022) after their cloudflared stops, tunnel
// responses without the connections array Cloudflare removed on
// 2026-10-05, and Cloudflare's real rate limit (1,200 requests per five
// minutes) with the provider's real request budget and its production
// creation grace period (30 s). docs/reliability.md lists the switches.
//
// The package has no production code; everything is in its tests.
package realism
