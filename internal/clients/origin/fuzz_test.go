package origin

import (
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// everything lists what an entry can: with it, only the never rule and
// unreadable origins refuse.
var everything = []string{"0.0.0.0/0", "::/0", "com", "org", "internal", "local", "io", "svc", "bastion", "unix:/run/app.sock"}

// FuzzCheck: whatever is listed, an allowed origin's host is never an
// address of the metadata ranges, however a resolver reads it (Go's parser,
// or inet_aton's decimal, octal and hexadecimal forms); a refusal names one
// of the rules and says why; and not knowing the source's namespace never
// refuses what knowing it allows.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"http://169.254.169.254:80", "http://2852039166/", "http://0xa9fea9fe/", "http://0251.0376.0251.0376/",
		"http://[::ffff:169.254.169.254]/", "http://[fe80::1%25eth0]:80", "http://good@169.254.169.254",
		"http://web.team-a.svc:80", "https://kubernetes.default.svc", "http://web:80", "unix:/run/app.sock",
		"tcp://db-0.db.team-b.svc.cluster.local:5432", "http_status:404", "hello_world", "bastion",
		"http://169-254-169-254.ns.pod.cluster.local", "http://[64:ff9b::a9fe:a9fe]/", "http://169.254.169.254.nip.io",
		"http://metadata.google.internal.", "HTTP://WEB.TEAM-A.SVC.CLUSTER.LOCAL.:80",
	} {
		f.Add(s, "team-a")
	}
	f.Fuzz(func(t *testing.T, origin, ns string) {
		r := Check(origin, Source{Namespace: ns}, everything)
		if r != nil {
			if !slices.Contains(Rules, r.Rule) || r.Why == "" || r.Origin != origin {
				t.Fatalf("Check(%q): refusal %+v names no rule or says nothing", origin, r)
			}
		} else if a, ok := resolvedAddr(origin); ok && metadataAddr(a) {
			t.Fatalf("Check(%q) allowed it, but its host is %s, a metadata address", origin, a)
		}
		if r == nil && Check(origin, Source{}, everything) != nil {
			t.Fatalf("Check(%q) allows it from namespace %q but refuses it when the namespace is not known", origin, ns)
		}
	})
}

// resolvedAddr is the address a resolver would read an origin's host as,
// if it reads it as one.
func resolvedAddr(origin string) (netip.Addr, bool) {
	u, err := url.Parse(origin)
	if err != nil {
		return netip.Addr{}, false
	}
	h := strings.TrimSuffix(u.Hostname(), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap(), true
	}
	return inetAton(h)
}

// inetAton reads an IPv4 address as the C library does: 1-4 parts, each
// decimal, octal (leading 0) or hexadecimal (0x), the last filling the
// remaining bytes.
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}
