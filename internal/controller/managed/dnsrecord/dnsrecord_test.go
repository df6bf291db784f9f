package dnsrecord_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

var (
	zoneCom    = sim.ZoneID("example.com")
	zoneDevCom = sim.ZoneID("dev.example.com")
)

const (
	tunnelA = "6ff42ae2-765d-4adf-8112-31c55c1551ef.cfargotunnel.com"
	tunnelB = "0b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d.cfargotunnel.com"
)

func newRecord(ns, name, host, typ, content string) *v1alpha1.DNSRecord {
	return &v1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.DNSRecordSpec{ForProvider: v1alpha1.DNSRecordParameters{
			Name: host, Type: typ, Content: content,
		}},
	}
}

func cfRecord(t *testing.T, zone, id string) *cloudflare.DNSRecord {
	t.Helper()
	r, err := p.Cloudflare.GetDNSRecord(context.Background(), zone, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func recordsNamed(t *testing.T, zone, name string) []cloudflare.DNSRecord {
	t.Helper()
	rs, err := p.Cloudflare.ListDNSRecords(context.Background(), zone, cloudflare.DNSRecordFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func update(t *testing.T, cr *v1alpha1.DNSRecord, mutate func(*v1alpha1.DNSRecord)) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "update "+cr.GetName(), func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		mutate(cr)
		return p.Client.Update(context.Background(), cr)
	})
}

// ops counts simulator requests per operation.
func ops() map[string]int {
	out := map[string]int{}
	for op, st := range p.Sim.Stats() {
		out[op] = st.Requests
	}
	return out
}

func TestDNSRecordLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "app-" + ns + ".example.com"
	cr := newRecord(ns, "app", host, "CNAME", tunnelA)
	cr.Spec.ForProvider.Proxied = ptr.To(true)
	p.Create(t, cr)
	p.WaitReady(t, cr)

	id := meta.GetExternalName(cr)
	at := cr.Status.AtProvider
	if id == "" || at.ID != id || at.ZoneID != zoneCom || at.ZoneName != "example.com" || at.Name != host {
		t.Fatalf("external-name %q, atProvider %+v", id, at)
	}
	got := cfRecord(t, zoneCom, id)
	if got.Type != "CNAME" || got.Content != tunnelA || !got.Proxied || got.TTL != 1 {
		t.Errorf("Cloudflare has %+v", got)
	}
	if user, owner, ok := ownership.Split(got.Comment); !ok || owner != p.Mark(t, v1alpha1.DNSRecordKind, cr) || user != "" {
		t.Errorf("comment %q does not carry this resource's marker", got.Comment)
	}
	if cr.Spec.ForProvider.TTL == nil || *cr.Spec.ForProvider.TTL != 1 {
		t.Errorf("ttl not late-initialised: %v", cr.Spec.ForProvider.TTL)
	}

	t.Run("SteadyStateIsOneGetPerPoll", func(t *testing.T) {
		r := p.AtRest(t, 4, "/zones/"+zoneCom+"/dns_records$")
		for _, op := range []string{"zones.list", "dns_records.create", "dns_records.update", "dns_records.delete"} {
			if n := r.Calls[op]; n != 0 {
				t.Errorf("%d %s calls in steady state, want 0", n, op)
			}
		}
		// Observation is account-wide: at most one read (a zone list, or a
		// get for a miss) per observation TTL, half the test poll.
		if n := r.Calls["dns_records.get"] + r.Calls["dns_records.list"]; n > r.TTLs+1 {
			t.Errorf("%d reads in %d observation TTLs; want at most one per TTL", n, r.TTLs)
		}
	})

	t.Run("SpecUpdatesReachCloudflare", func(t *testing.T) {
		update(t, cr, func(cr *v1alpha1.DNSRecord) {
			cr.Spec.ForProvider.Content = tunnelB
			cr.Spec.ForProvider.Comment = ptr.To("team-a web frontend")
		})
		want := ownership.Comment("team-a web frontend", p.Mark(t, v1alpha1.DNSRecordKind, cr))
		wait.Eventually(t, wait.Patience, "update in Cloudflare", func() error {
			if got := cfRecord(t, zoneCom, id); got.Content != tunnelB || got.Comment != want {
				return fmt.Errorf("content %q comment %q", got.Content, got.Comment)
			}
			return nil
		})
		p.WaitReady(t, cr)
	})

	t.Run("DriftIsCorrected", func(t *testing.T) {
		if _, err := p.Cloudflare.UpdateDNSRecord(ctx, zoneCom, id, cloudflare.DNSRecord{
			Name: host, Type: "CNAME", Content: "elsewhere.example.net", Proxied: false, TTL: 300, Comment: "edited in the dashboard",
		}); err != nil {
			t.Fatal(err)
		}
		changed := time.Now()
		wait.Eventually(t, wait.Patience, "drift corrected", func() error {
			got := cfRecord(t, zoneCom, id)
			if got.Content != tunnelB || !got.Proxied || got.Comment != ownership.Comment("team-a web frontend", p.Mark(t, v1alpha1.DNSRecordKind, cr)) {
				return fmt.Errorf("still %+v", got)
			}
			return nil
		})
		// docs/managed-resources.md: within one and a half polls; the repairing write may wait
		// for a DNS batch, at most five windows for a zone that just sent one.
		took := time.Since(changed)
		if bound := p.DriftBound(5 * cloudflare.DefaultDNSBatchWindow); took > bound {
			t.Errorf("drift corrected after %s, promised within %s", took.Round(100*time.Millisecond), bound)
		}
		t.Logf("drift corrected after %s", took.Round(100*time.Millisecond))
	})

	t.Run("RecreatedWhenDeletedBehindOurBack", func(t *testing.T) {
		if err := p.Cloudflare.DeleteDNSRecord(ctx, zoneCom, id); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "record recreated", func() error {
			rs := recordsNamed(t, zoneCom, host)
			if len(rs) != 1 || rs[0].ID == id {
				return fmt.Errorf("%d records named %s", len(rs), host)
			}
			if err := p.Get(cr); err != nil {
				return err
			}
			if meta.GetExternalName(cr) != rs[0].ID {
				return fmt.Errorf("external-name %q, want %q", meta.GetExternalName(cr), rs[0].ID)
			}
			return nil
		})
		id = meta.GetExternalName(cr)
		if got := cfRecord(t, zoneCom, id); got.Content != tunnelB || !got.Proxied {
			t.Errorf("recreated as %+v", got)
		}
	})

	t.Run("DeleteRemovesTheRecord", func(t *testing.T) {
		p.DeleteAndWait(t, cr)
		if _, err := p.Cloudflare.GetDNSRecord(ctx, zoneCom, id); !cloudflare.IsNotFound(err) {
			t.Errorf("the record still exists after deletion: %v", err)
		}
	})
}

// TestDNSRecordZoneBySuffix: with no zone set, a record lands in the zone
// whose name is the longest suffix of its name; a name no zone matches is a
// clear error, and such a DNSRecord can still be deleted.
func TestDNSRecordZoneBySuffix(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "x-" + ns + ".dev.example.com"
	cr := newRecord(ns, "dev", host, "A", "192.0.2.10")
	p.Create(t, cr)
	p.WaitReady(t, cr)
	if at := cr.Status.AtProvider; at.ZoneID != zoneDevCom || at.ZoneName != "dev.example.com" {
		t.Errorf("atProvider %+v, want zone dev.example.com", at)
	}
	id := meta.GetExternalName(cr)
	if got := cfRecord(t, zoneDevCom, id); got.Name != host || got.Content != "192.0.2.10" {
		t.Errorf("dev.example.com has %+v", got)
	}
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 0 {
		t.Errorf("%d records named %s in example.com", len(rs), host)
	}

	nowhere := newRecord(ns, "nowhere", "app-"+ns+".example.net", "A", "192.0.2.11")
	p.Create(t, nowhere)
	c := p.WaitSynced(t, nowhere, "no zone error", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "no zone in the account matches app-"+ns+".example.net; set zoneId or zoneName")
	})
	t.Logf("no zone: %s", c.Message)

	p.DeleteAndWait(t, nowhere)
	p.DeleteAndWait(t, cr)
	if _, err := p.Cloudflare.GetDNSRecord(ctx, zoneDevCom, id); !cloudflare.IsNotFound(err) {
		t.Errorf("the record still exists after deletion: %v", err)
	}
}

// TestDNSRecordNeverTouchesForeignRecords: a record made elsewhere (no
// marker) on the wanted name is reported, never adopted, changed or deleted,
// whether it has the same type or clashes as CNAME against A.
func TestDNSRecordNeverTouchesForeignRecords(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "foreign-" + ns + ".example.com"
	foreign, err := p.Cloudflare.CreateDNSRecord(ctx, zoneCom, cloudflare.DNSRecord{
		Name: host, Type: "CNAME", Content: "legacy.example.net", TTL: 300, Comment: "managed by hand",
	})
	if err != nil {
		t.Fatal(err)
	}

	// The provider observes through an account-wide snapshot up to half a
	// poll old: a record made since may still meet a create, which
	// Cloudflare refuses. This test is about a record the provider can see,
	// so it waits until any snapshot listed before the record has expired.
	time.Sleep(p.Poll/2 + 100*time.Millisecond)
	writes := p.WriteCalls()

	sameType := newRecord(ns, "same-type", host, "CNAME", tunnelA)
	sameType.Spec.ForProvider.Proxied = ptr.To(true)
	addr := newRecord(ns, "address", host, "A", "192.0.2.20")
	for _, cr := range []*v1alpha1.DNSRecord{sameType, addr} {
		p.Create(t, cr)
		c := p.WaitSynced(t, cr, cr.GetName()+" reports the conflict", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNameTaken &&
				strings.Contains(c.Message, "not created by this resource (id "+foreign.ID+")")
		})
		t.Logf("%s: %s", cr.GetName(), c.Message)
	}

	unchanged := func(when string) {
		t.Helper()
		rs := recordsNamed(t, zoneCom, host)
		if len(rs) != 1 {
			t.Fatalf("%s: %d records named %s, want only the foreign one", when, len(rs), host)
		}
		got := rs[0]
		if got.ID != foreign.ID || got.Content != foreign.Content || got.Comment != foreign.Comment ||
			got.TTL != foreign.TTL || got.Proxied != foreign.Proxied || !got.ModifiedOn.Equal(*foreign.ModifiedOn) {
			t.Errorf("%s: the foreign record changed: %+v, was %+v", when, got, foreign)
		}
	}
	// Evidence, not a timer: the zone's records listed twice more, as the
	// refused resources are retried (with backoff).
	p.WaitServed(t, 2, "GET", "/zones/"+zoneCom+"/dns_records$")
	unchanged("after several polls")
	for _, cr := range []*v1alpha1.DNSRecord{sameType, addr} {
		if err := p.Get(cr); err != nil {
			t.Fatal(err)
		}
		if n := meta.GetExternalName(cr); n != "" {
			t.Errorf("%s adopted the foreign record: external-name %q", cr.GetName(), n)
		}
		if c := cr.GetCondition(xpv2.TypeReady); c.Status == corev1.ConditionTrue {
			t.Errorf("%s is Ready", cr.GetName())
		}
	}

	for _, cr := range []*v1alpha1.DNSRecord{sameType, addr} {
		p.DeleteAndWait(t, cr)
	}
	// A deletion's every call is made before the finalizer goes, so once
	// the DNSRecords are gone there is nothing left to wait for.
	unchanged("after deleting the DNSRecords")
	// Not even a create Cloudflare would have refused was attempted.
	if w := p.WriteCalls() - writes; w != 0 {
		t.Errorf("%d write calls reached Cloudflare", w)
	}
}

// TestDNSRecordImportObserveOnly: a foreign record adopted by setting its ID
// as the external-name, observe only: Ready, and nothing is ever written,
// even though the spec differs.
func TestDNSRecordImportObserveOnly(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "imported-" + ns + ".example.com"
	existing, err := p.Cloudflare.CreateDNSRecord(ctx, zoneCom, cloudflare.DNSRecord{
		Name: host, Type: "CNAME", Content: "legacy.example.net", TTL: 300, Comment: "managed by hand",
	})
	if err != nil {
		t.Fatal(err)
	}
	cr := newRecord(ns, "imported", host, "CNAME", tunnelA)
	cr.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	meta.SetExternalName(cr, existing.ID)
	before := p.WriteCalls()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	p.WaitServed(t, 6, "GET", "/zones/"+zoneCom+"/dns_records$") // several polls observed the record
	if w := p.WriteCalls() - before; w != 0 {
		t.Errorf("%d write calls reached Cloudflare for an observe-only DNSRecord", w)
	}
	if got := cfRecord(t, zoneCom, existing.ID); got.Content != existing.Content || got.Comment != existing.Comment || !got.ModifiedOn.Equal(*existing.ModifiedOn) {
		t.Errorf("an observe-only DNSRecord changed the record: %+v", got)
	}
	if at := cr.Status.AtProvider; at.ID != existing.ID || at.ZoneName != "example.com" || at.TTL != 300 {
		t.Errorf("atProvider %+v", at)
	}
	p.DeleteAndWait(t, cr)
	cfRecord(t, zoneCom, existing.ID) // still there
}

// TestDNSRecordImportTakesOver: importing a foreign record with full
// management hands it over: the first update applies the spec and adds this
// resource's marker, and deleting the DNSRecord deletes it.
func TestDNSRecordImportTakesOver(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "takeover-" + ns + ".example.com"
	existing, err := p.Cloudflare.CreateDNSRecord(ctx, zoneCom, cloudflare.DNSRecord{
		Name: host, Type: "CNAME", Content: "legacy.example.net", TTL: 300, Comment: "managed by hand",
	})
	if err != nil {
		t.Fatal(err)
	}
	cr := newRecord(ns, "takeover", host, "CNAME", tunnelA)
	cr.Spec.ForProvider.Proxied = ptr.To(true)
	cr.Spec.ForProvider.ZoneName = ptr.To("example.com")
	meta.SetExternalName(cr, existing.ID)
	p.Create(t, cr)
	p.WaitReady(t, cr)
	wait.Eventually(t, wait.Patience, "handed over", func() error {
		got := cfRecord(t, zoneCom, existing.ID)
		if got.Content != tunnelA || !got.Proxied || got.Comment != ownership.Comment("", p.Mark(t, v1alpha1.DNSRecordKind, cr)) {
			return fmt.Errorf("record %+v", got)
		}
		return nil
	})
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 1 {
		t.Errorf("%d records named %s, want 1", len(rs), host)
	}
	p.DeleteAndWait(t, cr)
	if _, err := p.Cloudflare.GetDNSRecord(ctx, zoneCom, existing.ID); !cloudflare.IsNotFound(err) {
		t.Errorf("the imported record survived deleting its DNSRecord: %v", err)
	}
}

// TestDNSRecordCrashAfterCreate: the process died after Cloudflare created
// the record but before the external-name was saved. The record carries this
// resource's marker, so the next reconcile adopts it instead of creating a
// second one or stopping for a human.
func TestDNSRecordCrashAfterCreate(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "crash-" + ns + ".example.com"
	cr := newRecord(ns, "crash", host, "CNAME", tunnelA)
	cr.Spec.ForProvider.Proxied = ptr.To(true)
	// Paused, so the provider does not create it before the "lost" record
	// exists; the UID is known once the API server has it.
	cr.SetAnnotations(map[string]string{meta.AnnotationKeyReconciliationPaused: "true"})
	p.Create(t, cr)
	// As the managed reconciler does: the pending time is recorded, then
	// the create sent.
	pending := time.Now()
	lost, err := p.Cloudflare.CreateDNSRecord(ctx, zoneCom, cloudflare.DNSRecord{
		Name: host, Type: "CNAME", Content: tunnelA, Proxied: true, Comment: ownership.Comment("", p.Mark(t, v1alpha1.DNSRecordKind, cr)),
	})
	if err != nil {
		t.Fatal(err)
	}
	creates := ops()["dns_records.create"]
	update(t, cr, func(cr *v1alpha1.DNSRecord) {
		meta.RemoveAnnotations(cr, meta.AnnotationKeyReconciliationPaused)
		meta.SetExternalCreatePending(cr, pending)
	})
	p.WaitReady(t, cr)
	if n := ops()["dns_records.create"] - creates; n != 0 {
		t.Errorf("%d creates after the crash, want 0: the lost record is adopted by its marker", n)
	}
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 1 || rs[0].ID != lost.ID || meta.GetExternalName(cr) != lost.ID {
		t.Fatalf("after the crash: %d records named %s, external-name %q, want %q", len(rs), host, meta.GetExternalName(cr), lost.ID)
	}
	p.DeleteAndWait(t, cr)
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 0 {
		t.Errorf("%d records named %s after deletion", len(rs), host)
	}
}

// TestDNSRecordDeleteWhenAlreadyGone: deleting a DNSRecord whose record was
// deleted behind our back completes (and does not recreate it first).
func TestDNSRecordDeleteWhenAlreadyGone(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	host := "gone-" + ns + ".example.com"
	cr := newRecord(ns, "gone", host, "A", "192.0.2.30")
	p.Create(t, cr)
	p.WaitReady(t, cr)
	// Paused, so no poll recreates the record between its deletion and the
	// DNSRecord's.
	update(t, cr, func(cr *v1alpha1.DNSRecord) {
		meta.AddAnnotations(cr, map[string]string{meta.AnnotationKeyReconciliationPaused: "true"})
	})
	p.WaitSynced(t, cr, "paused", func(c xpv2.Condition) bool { return c.Reason == xpv2.ReasonReconcilePaused })
	if err := p.Cloudflare.DeleteDNSRecord(ctx, zoneCom, meta.GetExternalName(cr)); err != nil {
		t.Fatal(err)
	}
	if err := p.Client.Delete(ctx, cr); err != nil {
		t.Fatal(err)
	}
	update(t, cr, func(cr *v1alpha1.DNSRecord) { meta.RemoveAnnotations(cr, meta.AnnotationKeyReconciliationPaused) })
	p.DeleteAndWait(t, cr)
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 0 {
		t.Errorf("%d records named %s after deletion", len(rs), host)
	}
}
