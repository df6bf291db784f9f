// Package dnsrecord reconciles DNSRecord managed resources with DNS records
// in Cloudflare zones.
//
// The product rule: the provider never overwrites or deletes a record it did
// not create, unless the user explicitly imported it by setting its ID as the
// external-name. Records it creates carry an ownership marker in their
// comment (internal/ownership: the installation's owner ID and this
// resource's namespace and name, so a rebuilt cluster with the same owner ID
// finds its records again); a record of the desired name that lacks this
// resource's marker and stands in the way is reported as a conflict, never
// adopted.
package dnsrecord

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// kind is the DNSRecord kind; its external clients share zones, the zone
// cache of the controller.
func kind(zones *zoneCache) mr.Kind[*v1alpha1.DNSRecord] {
	return mr.Kind[*v1alpha1.DNSRecord]{
		GVK:     v1alpha1.DNSRecordGroupVersionKind,
		NewObj:  func() *v1alpha1.DNSRecord { return &v1alpha1.DNSRecord{} },
		NewList: func() client.ObjectList { return &v1alpha1.DNSRecordList{} },
		External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.DNSRecord] {
			return &external{records: c.Cloudflare, zones: c.Cloudflare, cache: zones, accountID: c.Cloudflare.Account(), conn: c}
		},
		Hostnames: func(cr *v1alpha1.DNSRecord) []string { return []string{normalizeName(cr.Spec.ForProvider.Name)} },
	}
}

// Setup adds the DNSRecord controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind(newZoneCache(time.Now)))
}

// SetupGated adds the DNSRecord controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind(newZoneCache(time.Now)))
}

type external struct {
	records   cloudflare.DNSRecordsAPI
	zones     cloudflare.ZonesAPI
	cache     *zoneCache
	accountID string
	// conn is the connection: the owner ID of markers and the config's
	// allowed zones.
	conn mr.Connection

	// The zone Observe resolved, for Create, Update and Delete in the same
	// reconcile.
	zone zoneRef
	// observed is the record Observe found, for Update: a record whose
	// type is to change is replaced, not updated.
	observed *cloudflare.DNSRecord
}

func (e *external) Disconnect(context.Context) error { return nil }

// zoneOf returns the zone the record is in, or is to be created in. Status
// remembers it, so a steady-state poll makes no zone lookup at all; the spec
// is resolved again (through the process-wide cache) only when it no longer
// agrees with status. A record never moves between zones: a spec that now
// points elsewhere is refused while the record exists, except when deleting,
// which must happen where the record lives.
func (e *external) zoneOf(ctx context.Context, cr *v1alpha1.DNSRecord) (zoneRef, error) {
	at := cr.Status.AtProvider
	recorded := zoneRef{ID: at.ZoneID, Name: at.ZoneName}
	hasID := meta.GetExternalName(cr) != ""
	if at.ZoneID != "" && (statusZoneStillDesired(cr.Spec.ForProvider, at) || (meta.WasDeleted(cr) && hasID)) {
		return recorded, nil
	}
	z, err := e.cache.resolveZone(ctx, e.zones, e.accountID, cr.Spec.ForProvider)
	if nz := (*errNoZone)(nil); errors.As(err, &nz) && nz.hint != "" {
		nz.hint = fix(cr, nz.hint)
	}
	if err != nil {
		return zoneRef{}, err
	}
	if at.ZoneID != "" && hasID && z.ID != at.ZoneID {
		return zoneRef{}, errors.Errorf("the record is in zone %s but the spec now points to zone %s: records cannot move between zones; point the spec back at %s, or delete this DNSRecord and create a new one", recorded.label(), z.label(), recorded.label())
	}
	return z, nil
}

// findOwn looks at every record of the desired name. It returns the one this
// managed resource created (by marker), so a create whose result was lost is
// adopted rather than duplicated. A conflicting record made by anyone else
// is an error: it is never adopted, changed or deleted. While deleting,
// conflicts are irrelevant: only our own record matters.
func (e *external) findOwn(ctx context.Context, cr *v1alpha1.DNSRecord) (*cloudflare.DNSRecord, error) {
	rs, err := e.listNamed(ctx, cr)
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for existing DNS records")
	}
	ours, conflict := classify(rs, e.identity(cr), cr.Spec.ForProvider.Type)
	if ours != nil || conflict == nil || meta.WasDeleted(cr) {
		return ours, nil
	}
	return nil, e.conflictError(cr, conflict)
}

// listNamed lists the records of the desired name. After a create of
// unknown outcome (a crash or a lost answer), only a list sent after that
// create can show whether it happened: a cached one from before would say
// no, and the record would be made twice.
func (e *external) listNamed(ctx context.Context, cr *v1alpha1.DNSRecord) ([]cloudflare.DNSRecord, error) {
	f := cloudflare.DNSRecordFilter{Name: normalizeName(cr.Spec.ForProvider.Name)}
	if meta.ExternalCreateIncomplete(cr) {
		// Not since the pending time: the annotation keeps whole seconds,
		// and the create may have waited for the request budget after it.
		return e.records.ListDNSRecordsSince(ctx, e.zone.ID, f, time.Now())
	}
	return e.records.ListDNSRecords(ctx, e.zone.ID, f)
}

func (e *external) conflictError(cr *v1alpha1.DNSRecord, c *cloudflare.DNSRecord) error {
	hint := "import it by setting its ID as " + meta.AnnotationKeyExternalName + " to manage it"
	if id := meta.GetExternalName(cr); id != "" {
		hint = "the external-name " + id + " names no record in that zone; to manage this one instead, set its ID as " + meta.AnnotationKeyExternalName
	}
	return &ConflictError{Type: c.Type, Name: normalizeName(c.Name), Zone: e.zone.label(), ID: c.ID, Owner: e.identity(cr).Describe(c.Comment), Fix: fix(cr, hint)}
}

// ConflictError is a record of the desired name that this resource cannot
// prove it made: it is never adopted, changed or deleted.
type ConflictError struct {
	Type, Name, Zone, ID string
	// Owner says who the record's comment says made it; Fix what to do.
	Owner, Fix string
}

func (c *ConflictError) Error() string {
	return fmt.Sprintf("conflict: a %s record for %s already exists in zone %s and was not created by this resource (id %s): %s. It is left alone; %s",
		c.Type, c.Name, c.Zone, c.ID, c.Owner, c.Fix)
}

// ConditionReason of a record in the way: NameTaken.
func (c *ConflictError) ConditionReason() xpv2.ConditionReason { return common.ReasonNameTaken }

// fix is a refusal's advice: to a DNSRecord's author, the fields of the
// record to set (own); for a record made for a PublicHostname, which no one
// edits, where its name comes from. A Service's or an Ingress's author reads
// this on their own object, and must be told the annotation to change.
func fix(cr *v1alpha1.DNSRecord, own string) string {
	c := metav1.GetControllerOf(cr)
	if c == nil || c.Kind != tunnelsv1alpha1.PublicHostnameKind {
		return own
	}
	return fmt.Sprintf("the record's name is PublicHostname %s's hostname: use another hostname (its spec.hostname, or the %s annotation of the Service or Ingress that made it), or leave its DNS to someone else (spec.dns: None, or the %s annotation)",
		c.Name, tunnelsv1alpha1.AnnotationHostname, tunnelsv1alpha1.AnnotationDNS)
}

func (e *external) identity(cr *v1alpha1.DNSRecord) ownership.Identity {
	return e.conn.Identity(v1alpha1.DNSRecordKind, cr)
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.DNSRecord) (managed.ExternalObservation, error) {
	z, err := e.zoneOf(ctx, cr)
	if err != nil {
		// A zone the account definitively does not have holds no record to
		// delete; anything else (a failed lookup) must not drop one.
		if meta.WasDeleted(cr) && isNoZone(err) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, errors.Wrap(err, "cannot resolve the record's zone")
	}
	e.zone = z
	if err := e.conn.Config.CheckZone(z.Name); err != nil {
		// Refused before any write; a deletion lets go, leaving what the
		// resource made before the rule alone.
		if meta.WasDeleted(cr) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, err
	}

	var rec *cloudflare.DNSRecord
	adopted := false
	if id := meta.GetExternalName(cr); id != "" {
		rec, err = e.records.GetDNSRecord(ctx, z.ID, id)
		switch {
		case cloudflare.IsNotFound(err) && meta.WasDeleted(cr):
			return managed.ExternalObservation{ResourceExists: false}, nil
		case cloudflare.IsNotFound(err):
			// Deleted behind our back: it is recreated, but only after the
			// same checks as a first create, so nothing made in the meantime
			// is duplicated or shadowed.
			rec = nil
		case err != nil:
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot get DNS record")
		}
	}
	if rec == nil {
		if rec, err = e.findOwn(ctx, cr); err != nil || rec == nil {
			return managed.ExternalObservation{ResourceExists: false}, err
		}
		meta.SetExternalName(cr, rec.ID)
		adopted = true
	}

	e.observed = rec
	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = observation(rec, z)
	lateInit := lateInitialize(&cr.Spec.ForProvider, rec)
	diff := Diff(cr.Spec.ForProvider, rec, e.identity(cr).Mark())
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.DNSRecord) (managed.ExternalCreation, error) {
	rec, err := e.records.CreateDNSRecord(ctx, e.zone.ID, desired(cr.Spec.ForProvider, e.identity(cr).Mark()))
	if cloudflare.IsAlreadyExists(err) || cloudflare.IsConflict(err) {
		// Something appeared since Observe looked. Take it only if it is
		// ours (a concurrent reconcile's create); otherwise say whose way
		// we are in.
		var lerr error
		if rec, lerr = e.findOwn(ctx, cr); lerr != nil {
			return managed.ExternalCreation{}, lerr
		}
		if rec != nil {
			err = nil
		}
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create DNS record")
	}
	meta.SetExternalName(cr, rec.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.DNSRecord) (managed.ExternalUpdate, error) {
	want := desired(cr.Spec.ForProvider, e.identity(cr).Mark())
	if typeChanges(e.observed, want) {
		return managed.ExternalUpdate{}, e.changeType(ctx, cr, want)
	}
	// PUT: the record becomes exactly the desired one, marker included.
	_, err := e.records.UpdateDNSRecord(ctx, e.zone.ID, meta.GetExternalName(cr), want)
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update DNS record")
}

// Delete is reached only with an external-name: a record this resource
// created or adopted by marker, or one the user explicitly imported.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.DNSRecord) (managed.ExternalDelete, error) {
	err := e.records.DeleteDNSRecord(ctx, e.zone.ID, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete DNS record")
}
