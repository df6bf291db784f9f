package dnsrecord

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// typeChanges says whether the record in Cloudflare has another type than
// the desired one. Cloudflare refuses an update that changes a record's
// type (since 2026-06-30), so such a record is replaced (changeType).
func typeChanges(got *cloudflare.DNSRecord, want cloudflare.DNSRecord) bool {
	return got != nil && !strings.EqualFold(got.Type, want.Type)
}

// changeType replaces the record with one of the desired type: the old
// record's delete and the new one's create in one batch, which Cloudflare
// applies in one transaction. The name is never without a record, and an
// answer lost on the way back leaves neither a duplicate nor an orphan:
// either nothing happened (the next Observe finds the old record and tries
// again) or both did (the next Observe finds the old ID gone and adopts the
// new record by this resource's marker, which it carries).
func (e *external) changeType(ctx context.Context, cr *v1alpha1.DNSRecord, want cloudflare.DNSRecord) error {
	old := meta.GetExternalName(cr)
	if err := e.checkNewTypeFits(ctx, cr, old, want.Type); err != nil {
		return err
	}
	rec, err := e.records.ReplaceDNSRecord(ctx, e.zone.ID, old, want)
	if err != nil {
		return errors.Wrapf(err, "cannot change the record's type from %s to %s (by deleting it and creating the new one in one batch)", e.observed.Type, want.Type)
	}
	cr.Status.AtProvider = observation(rec, e.zone)
	return errors.Wrap(e.saveExternalName(ctx, cr, rec.ID), "the record's type was changed, but the new record's ID could not be saved as the external-name (the next reconcile finds the record by its ownership marker)")
}

// checkNewTypeFits refuses, before any write, a new type that a record of
// the name this resource cannot prove it made stands in the way of (a
// CNAME beside someone's A record): it is reported as a conflict, and the
// old record is kept.
func (e *external) checkNewTypeFits(ctx context.Context, cr *v1alpha1.DNSRecord, old, typ string) error {
	rs, err := e.listNamed(ctx, cr)
	if err != nil {
		return errors.Wrap(err, "cannot look for DNS records in the way of the new type")
	}
	others := make([]cloudflare.DNSRecord, 0, len(rs))
	for _, r := range rs {
		if r.ID != old {
			others = append(others, r)
		}
	}
	_, c := classify(others, e.identity(cr), typ)
	if c == nil {
		return nil
	}
	hint := fmt.Sprintf("this resource's %s record %s is kept until a %s record fits beside the other records of the name: set spec.forProvider.type back, or have that record removed by whoever made it", e.observed.Type, old, strings.ToUpper(typ))
	return &ConflictError{Type: c.Type, Name: normalizeName(c.Name), Zone: e.zone.label(), ID: c.ID, Owner: e.identity(cr).Describe(c.Comment), Fix: fix(cr, hint)}
}

// saveExternalName saves the replacement's ID as the external-name at
// once: after an Update the managed reconciler saves only the status, and
// until the ID is saved every Observe would have to find the record by its
// marker again. The status Observe and changeType wrote is kept for the
// reconciler to save.
func (e *external) saveExternalName(ctx context.Context, cr *v1alpha1.DNSRecord, id string) error {
	before := cr.DeepCopy()
	meta.SetExternalName(cr, id)
	status := *cr.Status.DeepCopy()
	err := e.conn.Kube.Patch(ctx, cr, client.MergeFrom(before))
	cr.Status = status
	return err
}
