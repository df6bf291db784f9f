package vpcservice

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

// observation maps a service to status.
func observation(s *cloudflare.Service) v1alpha1.VPCServiceObservation {
	return v1alpha1.VPCServiceObservation{
		ServiceID: s.ServiceID,
		CreatedAt: mr.Time(s.CreatedAt),
		UpdatedAt: mr.Time(s.UpdatedAt),
	}
}

// ServiceFrom builds the service the parameters describe, as sent on create
// and on the whole-object update. Optional fields left unset are omitted so
// Cloudflare applies its defaults.
func ServiceFrom(p v1alpha1.VPCServiceParameters) cloudflare.Service {
	s := cloudflare.Service{
		Name:        p.Name,
		Type:        p.Type,
		TCPPort:     clonePort(p.TCPPort),
		HTTPPort:    clonePort(p.HTTPPort),
		HTTPSPort:   clonePort(p.HTTPSPort),
		AppProtocol: ptr.Deref(p.AppProtocol, ""),
		Host: cloudflare.ServiceHost{
			Hostname: ptr.Deref(p.Host.Hostname, ""),
			IPv4:     ptr.Deref(p.Host.IPv4, ""),
			IPv6:     ptr.Deref(p.Host.IPv6, ""),
		},
	}
	if n := p.Host.Network; n != nil {
		s.Host.Network = &cloudflare.ServiceNetwork{TunnelID: ptr.Deref(n.TunnelID, "")}
	}
	if n := p.Host.ResolverNetwork; n != nil {
		s.Host.ResolverNetwork = &cloudflare.ResolverNetwork{TunnelID: ptr.Deref(n.TunnelID, ""), ResolverIPs: slices.Clone(n.ResolverIPs)}
	}
	// cert_verification_mode is required inside tls_settings: an empty
	// block would be refused, so it is sent only with a mode.
	if t := p.TLSSettings; t != nil && t.CertVerificationMode != nil {
		s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: *t.CertVerificationMode}
	}
	return s
}

func clonePort(p *int64) *int64 {
	if p == nil {
		return nil
	}
	return ptr.To(*p)
}

// LateInitialize fills the optional parameters the user left unset
// (appProtocol, tlsSettings.certVerificationMode) with what Cloudflare has,
// and reports whether it changed anything.
func LateInitialize(p *v1alpha1.VPCServiceParameters, s cloudflare.Service) bool {
	changed := false
	if p.AppProtocol == nil && s.AppProtocol != "" {
		p.AppProtocol = ptr.To(s.AppProtocol)
		changed = true
	}
	if s.TLSSettings != nil && s.TLSSettings.CertVerificationMode != "" && (p.TLSSettings == nil || p.TLSSettings.CertVerificationMode == nil) {
		if p.TLSSettings == nil {
			p.TLSSettings = &v1alpha1.TLSSettings{}
		}
		p.TLSSettings.CertVerificationMode = ptr.To(s.TLSSettings.CertVerificationMode)
		changed = true
	}
	return changed
}

// Diff compares the desired parameters with the service Cloudflare has and
// returns one "field: observed in Cloudflare, desired" entry per difference,
// or "" when they agree. Unset appProtocol and tlsSettings mean "whatever
// Cloudflare has"; Observe late-initialises them.
func Diff(want v1alpha1.VPCServiceParameters, got cloudflare.Service) string {
	d := &differ{}
	d.str("name", want.Name, got.Name)
	d.str("type", want.Type, got.Type)
	d.port("tcpPort", want.TCPPort, got.TCPPort)
	d.port("httpPort", want.HTTPPort, got.HTTPPort)
	d.port("httpsPort", want.HTTPSPort, got.HTTPSPort)
	if want.AppProtocol != nil {
		d.str("appProtocol", *want.AppProtocol, got.AppProtocol)
	}

	// DNS names are case-insensitive and addresses have several spellings
	// (2001:DB8::1, 2001:db8::1): compare meaning, so a canonicalising API
	// does not cause an update every poll.
	wh, gh := want.Host, got.Host
	d.add("host.hostname", ptr.Deref(wh.Hostname, ""), gh.Hostname, strings.EqualFold)
	d.add("host.ipv4", ptr.Deref(wh.IPv4, ""), gh.IPv4, sameAddr)
	d.add("host.ipv6", ptr.Deref(wh.IPv6, ""), gh.IPv6, sameAddr)
	switch {
	case wh.Network == nil && gh.Network != nil:
		d.entries = append(d.entries, fmt.Sprintf("host.network: tunnel %q in Cloudflare, unset desired", gh.Network.TunnelID))
	case wh.Network != nil && gh.Network == nil:
		d.entries = append(d.entries, "host.network: unset in Cloudflare, set desired")
	case wh.Network != nil:
		d.str("host.network.tunnelId", ptr.Deref(wh.Network.TunnelID, ""), gh.Network.TunnelID)
	}
	switch {
	case wh.ResolverNetwork == nil && gh.ResolverNetwork != nil:
		d.entries = append(d.entries, fmt.Sprintf("host.resolverNetwork: tunnel %q in Cloudflare, unset desired", gh.ResolverNetwork.TunnelID))
	case wh.ResolverNetwork != nil && gh.ResolverNetwork == nil:
		d.entries = append(d.entries, "host.resolverNetwork: unset in Cloudflare, set desired")
	case wh.ResolverNetwork != nil:
		d.str("host.resolverNetwork.tunnelId", ptr.Deref(wh.ResolverNetwork.TunnelID, ""), gh.ResolverNetwork.TunnelID)
		// Resolver order is significant (the first is tried first).
		if w, g := wh.ResolverNetwork.ResolverIPs, gh.ResolverNetwork.ResolverIPs; !slices.EqualFunc(w, g, sameAddr) {
			d.entries = append(d.entries, fmt.Sprintf("host.resolverNetwork.resolverIps: %q in Cloudflare, %q desired", g, w))
		}
	}

	if want.TLSSettings != nil && want.TLSSettings.CertVerificationMode != nil {
		mode := ""
		if got.TLSSettings != nil {
			mode = got.TLSSettings.CertVerificationMode
		}
		d.str("tlsSettings.certVerificationMode", *want.TLSSettings.CertVerificationMode, mode)
	}
	return strings.Join(d.entries, "; ")
}

// differ collects readable differences.
type differ struct{ entries []string }

func (d *differ) str(field, want, got string) {
	d.add(field, want, got, func(a, b string) bool { return a == b })
}

func (d *differ) add(field, want, got string, equal func(a, b string) bool) {
	if !equal(want, got) {
		d.entries = append(d.entries, fmt.Sprintf("%s: %s in Cloudflare, %s desired", field, quoteOrUnset(got), quoteOrUnset(want)))
	}
}

func (d *differ) port(field string, want, got *int64) {
	if ptr.Equal(want, got) {
		return
	}
	show := func(p *int64) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	d.entries = append(d.entries, fmt.Sprintf("%s: %s in Cloudflare, %s desired", field, show(got), show(want)))
}

func quoteOrUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return fmt.Sprintf("%q", s)
}

// sameAddr compares two IP addresses by value, and anything that does not
// parse as one by text.
func sameAddr(a, b string) bool {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return x == y
}
