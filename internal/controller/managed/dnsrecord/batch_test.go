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
)

// createAtOnce creates n CNAME records in ns in one go, so their creates
// meet in the zone's batch window.
func createAtOnce(t *testing.T, ns string, n int, edit func(i int, cr *v1alpha1.DNSRecord)) []*v1alpha1.DNSRecord {
	t.Helper()
	out := make([]*v1alpha1.DNSRecord, n)
	for i := range out {
		cr := newRecord(ns, fmt.Sprintf("r%d", i), fmt.Sprintf("r%d-%s.example.com", i, ns), "CNAME", tunnelA)
		if edit != nil {
			edit(i, cr)
		}
		out[i] = cr
	}
	for _, cr := range out {
		p.Create(t, cr)
	}
	return out
}

// TestBatchedCreatesLandErrorsOnTheirOwnResource: records created together
// go out in one batch; one that Cloudflare refuses (a CNAME pointing at
// itself, which the CRD does not check) fails the batch, which is split until
// the error lands on that record's resource alone, and the others become
// Ready.
func TestBatchedCreatesLandErrorsOnTheirOwnResource(t *testing.T) {
	ns := p.Namespace(t)
	before := ops()
	const bad = 3
	crs := createAtOnce(t, ns, 6, func(i int, cr *v1alpha1.DNSRecord) {
		if i == bad {
			cr.Spec.ForProvider.Content = cr.Spec.ForProvider.Name
		}
	})
	for i, cr := range crs {
		if i != bad {
			p.WaitReady(t, cr)
		}
	}
	if n := ops()["dns_records.batch"] - before["dns_records.batch"]; n < 1 {
		t.Fatalf("%d batch requests: the creates did not share a batch", n)
	}
	got := p.WaitSynced(t, crs[bad], "the refused record's own error", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "9007")
	})
	t.Logf("refused record: %s", got.Message)
	p.WaitWarning(t, ns, crs[bad].Name, "CannotCreateExternalResource", "9007")
	if meta.GetExternalName(crs[bad]) != "" {
		t.Errorf("the refused record has external-name %q", meta.GetExternalName(crs[bad]))
	}
	for i, cr := range crs {
		if i == bad {
			if rs := recordsNamed(t, zoneCom, cr.Spec.ForProvider.Name); len(rs) != 0 {
				t.Errorf("the refused record exists in Cloudflare: %+v", rs)
			}
			continue
		}
		if rs := recordsNamed(t, zoneCom, cr.Spec.ForProvider.Name); len(rs) != 1 || rs[0].ID != meta.GetExternalName(cr) {
			t.Errorf("%s: Cloudflare has %+v, external-name %q", cr.Name, rs, meta.GetExternalName(cr))
		}
	}

	// Deleting them together batches the deletes too.
	before = ops()
	for _, cr := range crs {
		if err := p.Client.Delete(context.Background(), cr); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	for _, cr := range crs {
		p.DeleteAndWait(t, cr)
	}
	after := ops()
	if n := after["dns_records.batch"] - before["dns_records.batch"]; n < 1 {
		t.Errorf("%d batch requests for 5 deletes made together", n)
	}
	for _, cr := range crs {
		if rs := recordsNamed(t, zoneCom, cr.Spec.ForProvider.Name); len(rs) != 0 {
			t.Errorf("%s left in Cloudflare: %+v", cr.Name, rs)
		}
	}
}

// TestLostBatchResponseLeavesNoDuplicate: Cloudflare applies a batch but the
// answer is lost; every resource in it fails that reconcile, and the next
// finds its record by ownership marker instead of creating another.
func TestLostBatchResponseLeavesNoDuplicate(t *testing.T) {
	ns := p.Namespace(t)
	lostBefore := p.Sim.LostResponses()["dns_records.batch"]
	p.Sim.LoseNext("dns_records.batch", 1)
	t.Cleanup(func() { p.Sim.LoseNext("dns_records.batch", 0) })
	crs := createAtOnce(t, ns, 5, nil)
	for _, cr := range crs {
		p.WaitReady(t, cr)
	}
	if n := p.Sim.LostResponses()["dns_records.batch"] - lostBefore; n != 1 {
		t.Fatalf("%d batch responses lost, want 1: the creates did not share a batch", n)
	}
	for _, cr := range crs {
		rs := recordsNamed(t, zoneCom, cr.Spec.ForProvider.Name)
		if len(rs) != 1 || rs[0].ID != meta.GetExternalName(cr) {
			t.Errorf("%s: %d records in Cloudflare (%+v), external-name %q; want exactly the one it adopted", cr.Name, len(rs), rs, meta.GetExternalName(cr))
		}
	}
	for _, cr := range crs {
		p.DeleteAndWait(t, cr)
	}
}
