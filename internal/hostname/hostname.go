// Package hostname holds the forms hostnames are stored and compared in,
// and how a wildcard pattern covers a name. It is a package of its own,
// without the Cloudflare SDK, so its fuzz targets build in seconds rather
// than minutes (fuzzing rebuilds every dependency with coverage
// instrumentation).
package hostname

import "strings"

// Normalize is the form Cloudflare stores a route's hostname in: lower
// case, without surrounding dots, without a leading "*." label. Compare
// hostnames in this form, or a reconciler never settles.
func Normalize(h string) string {
	h = strings.Trim(strings.ToLower(strings.TrimSpace(h)), ".")
	return strings.Trim(strings.TrimPrefix(h, "*."), ".")
}
