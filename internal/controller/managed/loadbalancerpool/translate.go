package loadbalancerpool

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// Input is the pool Cloudflare is asked to hold for p, with mark in its
// description; an error when an origin's tunnel is not resolved yet.
func Input(p v1alpha1.LoadBalancerPoolParameters, mark ownership.Mark) (cloudflare.PoolInput, error) {
	in := cloudflare.PoolInput{
		Name:           p.Name,
		Description:    ownership.Comment(ptr.Deref(p.Description, ""), mark),
		Enabled:        ptr.Deref(p.Enabled, true),
		MinimumOrigins: ptr.Deref(p.MinimumOrigins, 1),
		Monitor:        ptr.Deref(p.MonitorID, ""),
	}
	for _, o := range p.Origins {
		addr, ok := Address(o)
		if !ok {
			return cloudflare.PoolInput{}, &UnresolvedOriginError{Origin: o.Name}
		}
		origin := cloudflare.PoolOrigin{Name: o.Name, Address: addr, Enabled: ptr.Deref(o.Enabled, true), Weight: float64(ptr.Deref(o.Weight, 100)) / 100}
		if o.Host != nil {
			origin.Header = map[string][]string{"Host": {*o.Host}}
		}
		in.Origins = append(in.Origins, origin)
	}
	return in, nil
}

// Address is where an origin points Cloudflare: its tunnel as
// <tunnel ID>.cfargotunnel.com, or its raw address (lowercase, as
// Cloudflare stores it); false while a tunnel reference has no ID.
func Address(o v1alpha1.PoolOrigin) (string, bool) {
	switch {
	case o.TunnelID != nil && *o.TunnelID != "":
		return strings.ToLower(*o.TunnelID) + v1alpha1.TunnelOriginSuffix, true
	case o.Address != nil && o.TunnelRef == nil:
		return strings.ToLower(*o.Address), true
	}
	return "", false
}

// LateInitialize fills an unset description with the user part of
// Cloudflare's.
func LateInitialize(p *v1alpha1.LoadBalancerPoolParameters, got *cloudflare.Pool) bool {
	if p.Description != nil {
		return false
	}
	user, _, _ := ownership.Split(got.Description)
	p.Description = ptr.To(user)
	return true
}

// Diff describes how the pool Cloudflare holds differs from want; "" when
// it is up to date. Origins compare in order (Cloudflare keeps the order
// it was given), weights to Cloudflare's two decimals.
func Diff(want cloudflare.PoolInput, got cloudflare.Pool) string {
	var d []string
	field := func(name string, in, desired any) {
		if fmt.Sprint(in) != fmt.Sprint(desired) {
			d = append(d, fmt.Sprintf("%s: %v in Cloudflare, %v desired", name, in, desired))
		}
	}
	field("name", fmt.Sprintf("%q", got.Name), fmt.Sprintf("%q", want.Name))
	field("description", fmt.Sprintf("%q", got.Description), fmt.Sprintf("%q", want.Description))
	field("enabled", got.Enabled, want.Enabled)
	field("minimumOrigins", got.MinimumOrigins, want.MinimumOrigins)
	field("monitor", fmt.Sprintf("%q", got.Monitor), fmt.Sprintf("%q", want.Monitor))
	if !slices.EqualFunc(got.Origins, want.Origins, sameOrigin) {
		d = append(d, fmt.Sprintf("origins: %s in Cloudflare, %s desired", describe(got.Origins), describe(want.Origins)))
	}
	return strings.Join(d, "; ")
}

func sameOrigin(a, b cloudflare.PoolOrigin) bool {
	return a.Name == b.Name && strings.EqualFold(a.Address, b.Address) && a.Enabled == b.Enabled &&
		hundredths(a.Weight) == hundredths(b.Weight) && hostOf(a.Header) == hostOf(b.Header)
}

func hundredths(w float64) int64 { return int64(w*100 + 0.5) }

func hostOf(h map[string][]string) string {
	if len(h["Host"]) == 0 {
		return ""
	}
	return strings.Join(h["Host"], ",")
}

func describe(origins []cloudflare.PoolOrigin) string {
	parts := make([]string, 0, len(origins))
	for _, o := range origins {
		parts = append(parts, fmt.Sprintf("%s=%s(enabled=%t weight=%d host=%q)", o.Name, o.Address, o.Enabled, hundredths(o.Weight), hostOf(o.Header)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
