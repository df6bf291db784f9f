package dnsrecord_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var zoneOrg = sim.ZoneID("example.org")

// TestGuardrailsRefuseBeforeAnyWrite: a ClusterProviderConfig that allows
// one zone, two hostname suffixes and one namespace refuses a record in
// another zone, a name outside the suffixes and a resource in another
// namespace — each with a False condition and a Warning event naming the
// rule, and not one request written to Cloudflare. What it allows works.
// Tightening the rule later leaves the record already made alone, even when
// its resource is deleted.
func TestGuardrailsRefuseBeforeAnyWrite(t *testing.T) {
	ctx := context.Background()
	allowed, other := p.Namespace(t), p.Namespace(t)
	cpc := p.ClusterConfig(t, "fenced-"+allowed, func(s *tv1alpha1.ProviderConfigSpec) {
		s.Allow = &tv1alpha1.Allowances{
			Zones:            []string{"example.org"},
			HostnameSuffixes: []string{"apps.example.com", "team.example.org"},
			Namespaces:       []string{allowed},
		}
	})
	ref := &xpv2.ProviderConfigReference{Kind: tv1alpha1.ClusterProviderConfigKind, Name: cpc.Name}
	fenced := func(ns, name, host string) *v1alpha1.DNSRecord {
		r := newRecord(ns, name, host, "CNAME", tunnelA)
		r.Spec.ProviderConfigReference = ref
		return r
	}

	refused := []struct {
		cr   *v1alpha1.DNSRecord
		rule string
	}{
		{cr: fenced(allowed, "outside-suffixes", "www."+allowed+".example.org"), rule: "spec.allow.hostnameSuffixes"},
		{cr: fenced(allowed, "outside-zones", "web.apps.example.com"), rule: "spec.allow.zones"},
		{cr: fenced(other, "outside-namespaces", "db.team.example.org"), rule: "spec.allow.namespaces"},
	}
	writes := p.WriteCalls()
	for _, r := range refused {
		p.Create(t, r.cr)
	}
	for _, r := range refused {
		c := p.WaitSynced(t, r.cr, "refused by "+r.rule, func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "not allowed") && strings.Contains(c.Message, r.rule)
		})
		t.Logf("%s: %s", r.cr.Name, c.Message)
		wait.Eventually(t, wait.Patience, "a Warning event for "+r.cr.Name, func() error { return warned(ctx, r.cr, r.rule) })
	}
	if n := p.WriteCalls() - writes; n != 0 {
		t.Errorf("%d requests written to Cloudflare for resources the guardrails refuse", n)
	}

	ok := fenced(allowed, "inside", "api.team.example.org")
	p.Create(t, ok)
	p.WaitReady(t, ok)
	id := meta.GetExternalName(ok)

	// Tighten the rule: the record made before it is left alone, even when
	// its resource is deleted.
	wait.Eventually(t, wait.Patience, "example.org no longer allowed", func() error {
		if err := p.Get(cpc); err != nil {
			return err
		}
		cpc.Spec.Allow.Zones = []string{"example.com"}
		return p.Client.Update(ctx, cpc)
	})
	p.WaitSynced(t, ok, "refused after the rule changed", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.allow.zones")
	})
	p.DeleteAndWait(t, ok)
	if _, err := p.Cloudflare.GetDNSRecord(ctx, zoneOrg, id); err != nil {
		t.Errorf("the record made before the rule changed is gone: %v", err)
	}
	if err := p.Cloudflare.DeleteDNSRecord(ctx, zoneOrg, id); err != nil {
		t.Fatal(err)
	}
	for _, r := range refused {
		p.DeleteAndWait(t, r.cr)
	}
}

// warned finds a Warning event about mg whose message names rule.
func warned(ctx context.Context, mg client.Object, rule string) error {
	evs := &corev1.EventList{}
	if err := p.Client.List(ctx, evs, client.InNamespace(mg.GetNamespace())); err != nil {
		return err
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == mg.GetName() && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, rule) {
			return nil
		}
	}
	return fmt.Errorf("no Warning event about %s naming %s among %d events", mg.GetName(), rule, len(evs.Items))
}
