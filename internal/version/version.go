// Package version holds the provider's version, set at build time.
package version

// Version of the provider, set with -ldflags "-X .../internal/version.Version=v1.2.3".
var Version = "v0.0.0-dev"
