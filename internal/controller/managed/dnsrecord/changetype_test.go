package dnsrecord_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// retype changes cr's type and content and waits until Cloudflare holds
// exactly one record of the name, of the new type, carrying cr's marker,
// whose ID is cr's external-name, and cr is Ready again. It returns that
// ID.
func retype(t *testing.T, cr *v1alpha1.DNSRecord, typ, content string) string {
	t.Helper()
	before := meta.GetExternalName(cr)
	update(t, cr, func(cr *v1alpha1.DNSRecord) {
		cr.Spec.ForProvider.Type, cr.Spec.ForProvider.Content = typ, content
	})
	host := cr.Spec.ForProvider.Name
	wait.Eventually(t, wait.Patience, cr.Name+" moved to a "+typ+" record", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		id := meta.GetExternalName(cr)
		rs := recordsNamed(t, zoneCom, host)
		if len(rs) != 1 || rs[0].Type != typ || rs[0].Content != content || rs[0].ID != id || id == before {
			return fmt.Errorf("Cloudflare has %+v for %s; external-name %q (was %q)", rs, host, id, before)
		}
		if _, owner, _ := ownership.Split(rs[0].Comment); owner != p.Mark(t, v1alpha1.DNSRecordKind, cr) {
			return fmt.Errorf("the %s record carries marker %q, not this resource's", typ, owner)
		}
		return nil
	})
	p.WaitReady(t, cr)
	return meta.GetExternalName(cr)
}

// history is what a watched name held, write after write, with the
// repeats left out (writes to other names), and the moments it held other
// than exactly one record.
func history(steps []sim.DNSStep) (held []string, notOne []string) {
	for _, s := range steps {
		if len(s.Records) != 1 {
			notOne = append(notOne, s.String())
		}
		if h := strings.Join(s.Records, ", "); len(held) == 0 || held[len(held)-1] != h {
			held = append(held, h)
		}
	}
	return held, notOne
}

// refusedWrites counts the record updates and batches Cloudflare refused
// with a client error so far.
func refusedWrites() int {
	n := 0
	for _, op := range []string{"dns_records.update", "dns_records.edit", "dns_records.batch"} {
		for status, c := range p.Sim.Stats()[op].ByStatus {
			if status >= 400 && status < 500 {
				n += c
			}
		}
	}
	return n
}

// TestDNSRecordTypeChange: a record's type changes from A to CNAME (moving
// a name onto a tunnel) and back. Cloudflare refuses an update that changes
// the type, so the record is replaced: its delete and the new record's
// create in one batch. After every write Cloudflare served, the name had
// exactly one record: never none, never two. No update was sent, none was
// refused, the external-name names the new record each time, and the
// resource is Ready again.
func TestDNSRecordTypeChange(t *testing.T) {
	ns := p.Namespace(t)
	host := "move-" + ns + ".example.com"
	cr := newRecord(ns, "move", host, "A", "192.0.2.40")
	p.Create(t, cr)
	p.WaitReady(t, cr)
	first := meta.GetExternalName(cr)

	watch := p.Sim.WatchDNS(host)
	t.Cleanup(func() { p.Sim.StopDNSWatch(watch) })
	updates, refused := ops()["dns_records.update"], refusedWrites()
	second := retype(t, cr, "CNAME", tunnelA)
	third := retype(t, cr, "A", "192.0.2.40")
	steps := p.Sim.StopDNSWatch(watch)

	if second == first || third == second || third == first {
		t.Errorf("external-names %s, %s, %s: each move makes a new record", first, second, third)
	}
	held, notOne := history(steps)
	if len(notOne) > 0 {
		t.Errorf("the name had other than one record:\n%s", strings.Join(notOne, "\n"))
	}
	if want := []string{"A 192.0.2.40", "CNAME " + tunnelA, "A 192.0.2.40"}; !slices.Equal(held, want) {
		t.Errorf("the name held %q in turn, want %q", held, want)
	}
	if n := ops()["dns_records.update"] - updates; n != 0 {
		t.Errorf("%d record updates (PUT) sent; a type change is never an update", n)
	}
	if n := refusedWrites() - refused; n != 0 {
		t.Errorf("Cloudflare refused %d record writes", n)
	}
	p.DeleteAndWait(t, cr)
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 0 {
		t.Errorf("%d records named %s after deletion", len(rs), host)
	}
}

// TestDNSRecordTypeChangeLostAnswer: Cloudflare applies the batch that
// replaces the record, but its answer is lost. The reconcile fails; the
// next finds the old record gone and the new one carrying this resource's
// marker, and adopts it: no second create, no record left behind, and the
// name never without a record nor with two.
func TestDNSRecordTypeChangeLostAnswer(t *testing.T) {
	ns := p.Namespace(t)
	host := "lost-move-" + ns + ".example.com"
	cr := newRecord(ns, "lost-move", host, "A", "192.0.2.41")
	p.Create(t, cr)
	p.WaitReady(t, cr)

	watch := p.Sim.WatchDNS(host)
	t.Cleanup(func() { p.Sim.StopDNSWatch(watch) })
	lost, creates, batches := p.Sim.LostResponses()["dns_records.batch"], ops()["dns_records.create"], ops()["dns_records.batch"]
	p.Sim.LoseNext("dns_records.batch", 1)
	t.Cleanup(func() { p.Sim.LoseNext("dns_records.batch", 0) })
	retype(t, cr, "CNAME", tunnelA)
	steps := p.Sim.StopDNSWatch(watch)

	if n := p.Sim.LostResponses()["dns_records.batch"] - lost; n != 1 {
		t.Fatalf("%d batch answers lost, want 1", n)
	}
	if n := ops()["dns_records.batch"] - batches; n != 1 {
		t.Errorf("%d batches sent, want 1: the replacement whose answer was lost was repeated", n)
	}
	if n := ops()["dns_records.create"] - creates; n != 0 {
		t.Errorf("%d creates after the lost answer, want 0: the new record is adopted by its marker", n)
	}
	held, notOne := history(steps)
	if len(notOne) > 0 {
		t.Errorf("the name had other than one record:\n%s", strings.Join(notOne, "\n"))
	}
	if want := []string{"A 192.0.2.41", "CNAME " + tunnelA}; !slices.Equal(held, want) {
		t.Errorf("the name held %q in turn, want %q", held, want)
	}
	p.DeleteAndWait(t, cr)
	if rs := recordsNamed(t, zoneCom, host); len(rs) != 0 {
		t.Errorf("%d records named %s after deletion", len(rs), host)
	}
}
