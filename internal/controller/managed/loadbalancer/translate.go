package loadbalancer

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/zonename"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// Input is the load balancer Cloudflare is asked to hold for p, with mark
// in its description. Proxied by default: a tunnel origin only takes
// proxied traffic.
func Input(p v1alpha1.LoadBalancerParameters, mark ownership.Mark) cloudflare.LoadBalancerInput {
	in := cloudflare.LoadBalancerInput{
		Name:            zonename.Normalize(p.Hostname),
		Description:     ownership.Comment(ptr.Deref(p.Description, ""), mark),
		Enabled:         ptr.Deref(p.Enabled, true),
		Proxied:         ptr.Deref(p.Proxied, true),
		DefaultPools:    slices.Clone(p.DefaultPools),
		FallbackPool:    ptr.Deref(p.FallbackPool, ""),
		SteeringPolicy:  ptr.Deref(p.SteeringPolicy, "off"),
		SessionAffinity: ptr.Deref(p.SessionAffinity, "none"),
	}
	if p.SessionAffinityTTL != nil {
		in.SessionAffinityTTL = ptr.To(float64(*p.SessionAffinityTTL))
	}
	return in
}

// LateInitialize fills an unset description with the user part of
// Cloudflare's.
func LateInitialize(p *v1alpha1.LoadBalancerParameters, got *cloudflare.LoadBalancer) bool {
	if p.Description != nil {
		return false
	}
	user, _, _ := ownership.Split(got.Description)
	p.Description = ptr.To(user)
	return true
}

// Diff describes how the load balancer Cloudflare holds differs from want;
// "" when it is up to date. The default pools compare in order: it is the
// failover order. The session affinity TTL compares only when asked for
// (Cloudflare has a default of its own).
func Diff(want cloudflare.LoadBalancerInput, got cloudflare.LoadBalancer) string {
	var d []string
	field := func(name string, in, desired any) {
		if fmt.Sprint(in) != fmt.Sprint(desired) {
			d = append(d, fmt.Sprintf("%s: %v in Cloudflare, %v desired", name, in, desired))
		}
	}
	field("hostname", zonename.Normalize(got.Name), want.Name)
	field("description", fmt.Sprintf("%q", got.Description), fmt.Sprintf("%q", want.Description))
	field("enabled", got.Enabled, want.Enabled)
	field("proxied", got.Proxied, want.Proxied)
	field("defaultPools", got.DefaultPools, want.DefaultPools)
	field("fallbackPool", got.FallbackPool, want.FallbackPool)
	field("steeringPolicy", steering(got.SteeringPolicy), want.SteeringPolicy)
	field("sessionAffinity", affinity(got.SessionAffinity), want.SessionAffinity)
	if want.SessionAffinityTTL != nil {
		field("sessionAffinityTTL", ptr.Deref(got.SessionAffinityTTL, 0), *want.SessionAffinityTTL)
	}
	return strings.Join(d, "; ")
}

// steering reads Cloudflare's "" as what it documents it means without
// region, country or PoP pools (which this resource never sets): off.
func steering(s string) string {
	if s == "" {
		return "off"
	}
	return s
}

func affinity(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
