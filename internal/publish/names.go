package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels on every object made for a source or a published hostname, so
// controllers can list what a source, a tunnel or a PublicHostname made.
// Values go through LabelValue.
const (
	LabelIngress        = "tunnels.cloudflare.com/ingress"
	LabelTunnel         = "tunnels.cloudflare.com/tunnel"
	LabelPublicHostname = "tunnels.cloudflare.com/public-hostname"
	LabelService        = "tunnels.cloudflare.com/service"
	// LabelTunnelNamespace is the tunnel's namespace on an object made for
	// a source in another namespace (a shared tunnel); without it, the
	// tunnel is in the object's namespace.
	LabelTunnelNamespace = "tunnels.cloudflare.com/tunnel-namespace"
)

// Kind abbreviations used in the names of objects made for others.
const (
	KindHostnameRoute  = "route"
	KindVPCService     = "vpc"
	KindDNSRecord      = "dns"
	KindPublicHostname = "host"
	KindNetworkRoute   = "net"
)

// ObjectName names an object made for another: "<owner>-<kind>-<hash>", a
// DNS-1123 label of at most 63 characters. The hash covers the unmodified
// owner name, kind and key (e.g. the hostname), so names stay distinct when
// the readable part is sanitised or truncated, and never change for the same
// inputs.
func ObjectName(owner, kind, key string) string {
	sum := sha256.Sum256([]byte(owner + "\x00" + kind + "\x00" + key))
	parts := []string{hex.EncodeToString(sum[:])[:10]}
	if k := sanitize(kind, 20); k != "" {
		parts = append([]string{k}, parts...)
	}
	used := len(strings.Join(parts, "-")) + 1
	if i := sanitize(owner, validation.DNS1123LabelMaxLength-used); i != "" {
		parts = append([]string{i}, parts...)
	}
	return strings.Join(parts, "-")
}

// LabelValue is v when it is a valid label value, else a sanitised, truncated
// form with a hash suffix (names of up to 253 characters exceed a label's
// 63). Select by LabelValue(name), not name.
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	h := hex.EncodeToString(sum[:])[:10]
	if s := sanitize(v, validation.LabelValueMaxLength-len(h)-1); s != "" {
		return s + "-" + h
	}
	return h
}

// sanitize keeps lower-cased ASCII letters and digits, turns every other run
// of characters into one '-', trims '-' at both ends, and stops at max bytes.
func sanitize(s string, max int) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s) && b.Len() < max; i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteByte(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}
