package mr

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// ClaimedError says a Cloudflare object is already managed by another
// managed resource, which keeps it.
type ClaimedError struct {
	Kind, ID, By string
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("conflict: Cloudflare %s %s is already managed by %s; this resource neither takes it over nor changes it. Pick another name, or delete that resource first", e.Kind, e.ID, e.By)
}

// ConditionReason of an object another resource holds: Conflict.
func (e *ClaimedError) ConditionReason() xpv2.ConditionReason { return common.ReasonConflict }

// ForeignTunnelError says a raw tunnel ID names a tunnel that another
// namespace manages.
type ForeignTunnelError struct {
	ID, By string
}

func (e *ForeignTunnelError) Error() string {
	return fmt.Sprintf("tunnel %s is managed by Tunnel %s in another namespace; a resource may only use tunnels managed in its own namespace, ones shared with it (the CloudflareTunnel's spec.allowedNamespaces), or ones no namespace manages", e.ID, e.By)
}

// ConditionReason of another namespace's tunnel: NotAllowed.
func (e *ForeignTunnelError) ConditionReason() xpv2.ConditionReason { return common.ReasonNotAllowed }

// ForeignVirtualNetworkError says a raw virtual network ID names a virtual
// network that another namespace manages.
type ForeignVirtualNetworkError struct {
	ID, By string
}

func (e *ForeignVirtualNetworkError) Error() string {
	return fmt.Sprintf("virtual network %s is managed by VirtualNetwork %s in another namespace; a route may only use virtual networks managed in its own namespace (or ones no namespace manages, such as the account's default)", e.ID, e.By)
}

// ConditionReason of another namespace's virtual network: NotAllowed.
func (e *ForeignVirtualNetworkError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonNotAllowed
}

// ForeignAccessPolicyError says a raw Access policy ID names a policy that
// an AccessPolicy of another namespace manages and does not share with the
// resource's namespace.
type ForeignAccessPolicyError struct {
	ID, By string
}

func (e *ForeignAccessPolicyError) Error() string {
	return fmt.Sprintf("Access policy %s is managed by AccessPolicy %s in another namespace, which does not share it with this one; use policies of this namespace, ones shared with it (the AccessPolicy's spec.allowedNamespaces), or ones no namespace manages", e.ID, e.By)
}

// ConditionReason of another namespace's policy: NotAllowed.
func (e *ForeignAccessPolicyError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonNotAllowed
}

// ExternalNameIndex indexes each managed resource kind by external-name
// (Setup registers it), so the resources claiming one Cloudflare object are
// found without listing the kind.
const ExternalNameIndex = "tunnels.cloudflare.com/external-name"

// externalNames is ExternalNameIndex's value: the external-name, if set.
func externalNames(o client.Object) []string {
	if id := meta.GetExternalName(o); id != "" {
		return []string{id}
	}
	return nil
}

// firstClaim is the managed resource of the list, other than mg and not
// being deleted, whose claim on external-name id ranks first (claimsBefore).
func firstClaim(ctx context.Context, kube client.Reader, newList func() client.ObjectList, mg resource.Managed, id string, observedID func(resource.Managed) string) (resource.Managed, error) {
	l := newList()
	// Read only: the cache's objects are compared, never changed. By the
	// external-name index: listing the whole kind on every reconcile of
	// every resource was quadratic in the resources.
	if err := kube.List(ctx, l, client.MatchingFields{ExternalNameIndex: id}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, errors.Wrap(err, "cannot list managed resources")
	}
	ml, ok := l.(resource.ManagedList)
	if !ok {
		return nil, errors.Errorf("%T is not a managed resource list", l)
	}
	// One being deleted lets go of its claim.
	return firstOf(ml.GetItems(), id, observedID, func(o resource.Managed) bool { return o.GetUID() == mg.GetUID() || meta.WasDeleted(o) }), nil
}

// firstOf is the item, not skipped, whose claim on id ranks first
// (claimsBefore), or nil.
func firstOf(items []resource.Managed, id string, observedID func(resource.Managed) string, skip func(resource.Managed) bool) resource.Managed {
	var first resource.Managed
	for _, o := range items {
		if meta.GetExternalName(o) != id || (skip != nil && skip(o)) {
			continue
		}
		if first == nil || claimsBefore(o, first, holds(o, id, observedID), holds(first, id, observedID)) {
			first = o
		}
	}
	return first
}

// holds says whether m holds its claim on the Cloudflare object id: it
// names it, and, for a kind whose status records the object it observed
// (observedID), it has observed it as its own. A resource that was refused
// keeps the status it had before (the guard restores it), so a decoy that
// names another resource's object never holds it, however old the decoy is
// or whenever its external-name was set.
func holds(m resource.Managed, id string, observedID func(resource.Managed) string) bool {
	if id == "" || meta.GetExternalName(m) != id {
		return false
	}
	return observedID == nil || observedID(m) == id
}

// claimsBefore orders two claims on one Cloudflare object: one that holds
// it before one that only names it (an import, an adoption, a refused
// resource); between equals, the older; names break creation-time ties,
// so every resource agrees on the order.
func claimsBefore(a, b resource.Managed, aHolds, bHolds bool) bool {
	if aHolds != bHolds {
		return aHolds
	}
	return before(a, b)
}

func before(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// tenancyGuard keeps one Cloudflare object to one managed resource, and
// tunnels to their namespace. Adoption by natural key (a tunnel or VPC
// service name) and imports by external-name would otherwise let a resource
// in one namespace take over, or receive the run token of, an object that a
// resource in another namespace manages; and a raw tunnel ID would route
// hostnames into another team's tunnel. The older claim wins; the newer
// resource reports the conflict and never writes or deletes the object.
type tenancyGuard[T resource.ModernManaged] struct {
	managed.TypedExternalClient[T]
	kube      client.Reader
	kind      string
	newList   func() client.ObjectList
	tunnelIDs func(T) []string
	// virtualNetworkIDs, like tunnelIDs, for virtual networks.
	virtualNetworkIDs func(T) []string
	// accessPolicyIDs, like tunnelIDs, for Access policies, which their
	// AccessPolicy may share (spec.allowedNamespaces).
	accessPolicyIDs func(T) []string
	// observedID is the ID of the object the kind's status says it
	// observed as its own; nil for a kind whose status does not say.
	observedID func(resource.Managed) string
	// settle is how long after a resource became Synced its claim is still
	// checked. Two resources adopting one object in the same instant each
	// see the other without an ID and both take it; once both IDs are
	// saved the next check finds the pair and the newer one lets go.
	settle time.Duration
}

func (g *tenancyGuard[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	// What the resource was before Observe, to undo everything Observe
	// wrote into it (adoption, status, late-init) should the object turn
	// out to be another resource's.
	pristine := mg.DeepCopyObject()
	if err := g.checkForeign(ctx, mg); err != nil {
		if !meta.WasDeleted(mg) || !isForeign(err) {
			return managed.ExternalObservation{}, err
		}
		if !holds(mg, meta.GetExternalName(mg), g.observedID) {
			// Never delete through a foreign tunnel what this resource
			// never held: let go.
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		// What it held is its own, whichever tunnel it points at: deleted
		// like any other, never left behind to block that tunnel's
		// deletion.
	}
	obs, err := g.TypedExternalClient.Observe(ctx, mg)
	if taken := (&NameTakenError{}); errors.As(err, &taken) && meta.WasDeleted(mg) {
		// Never ours: nothing to delete, let go.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	id := meta.GetExternalName(mg)
	if err != nil || id == "" {
		return obs, err
	}
	// Holding is what the resource had before this Observe: an ID it names
	// but never observed as its own (set by hand, or found just now) is
	// being adopted, whatever the resource's age.
	adoptingNow := !holds(pristine.(resource.Managed), id, g.observedID)
	if synced := pristine.(resource.Managed).GetCondition(xpv2.TypeSynced); !adoptingNow && synced.Status == corev1.ConditionTrue && time.Since(synced.LastTransitionTime.Time) > g.settle {
		// Checked when it took the ID and while it settled, and kept
		// since: a later claimant is newer and refuses itself. This keeps
		// steady-state polls from listing the kind.
		return obs, nil
	}
	other, cerr := firstClaim(ctx, g.kube, g.newList, mg, id, g.observedID)
	if cerr != nil {
		return managed.ExternalObservation{}, cerr
	}
	// A resource that already held the ID keeps it against one adopting it
	// now, whatever their ages; between two that both hold it (a race), or
	// two that both adopt it, the older keeps it.
	if other == nil || claimsBefore(mg, other, !adoptingNow, holds(other, id, g.observedID)) {
		return obs, nil
	}
	// Taken: nothing Observe learned about the other resource's object may
	// be saved in this one (its ID, its status, its run token), and a
	// deletion lets go without touching it.
	reflect.ValueOf(mg).Elem().Set(reflect.ValueOf(pristine).Elem())
	if meta.WasDeleted(mg) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	return managed.ExternalObservation{}, &ClaimedError{Kind: g.kind, ID: id, By: other.GetNamespace() + "/" + other.GetName()}
}

// checkForeign refuses a tunnel ID that a Tunnel in another namespace
// manages, unless a Tunnel in mg's own namespace manages it too; and a
// virtual network ID and an Access policy ID likewise.
func (g *tenancyGuard[T]) checkForeign(ctx context.Context, mg T) error {
	if g.tunnelIDs != nil {
		by, id, err := managedElsewhere(ctx, g.kube, &ztv1alpha1.TunnelList{}, tunnelObservedID, mg.GetNamespace(), g.tunnelIDs(mg), sharedWith(g.kube, mg.GetNamespace(), meta.WasDeleted(mg)))
		if err != nil {
			return errors.Wrap(err, "cannot list Tunnels")
		}
		if by != "" {
			return &ForeignTunnelError{ID: id, By: by}
		}
	}
	if g.virtualNetworkIDs != nil {
		by, id, err := managedElsewhere(ctx, g.kube, &ztv1alpha1.VirtualNetworkList{}, virtualNetworkObservedID, mg.GetNamespace(), g.virtualNetworkIDs(mg), nil)
		if err != nil {
			return errors.Wrap(err, "cannot list VirtualNetworks")
		}
		if by != "" {
			return &ForeignVirtualNetworkError{ID: id, By: by}
		}
	}
	if g.accessPolicyIDs != nil {
		by, id, err := managedElsewhere(ctx, g.kube, &ztv1alpha1.AccessPolicyList{}, accessPolicyObservedID, mg.GetNamespace(), g.accessPolicyIDs(mg), policySharedWith(g.kube, mg.GetNamespace(), meta.WasDeleted(mg)))
		if err != nil {
			return errors.Wrap(err, "cannot list AccessPolicies")
		}
		if by != "" {
			return &ForeignAccessPolicyError{ID: id, By: by}
		}
	}
	return nil
}

// policySharedWith says whether an AccessPolicy of another namespace is
// shared with ns: its spec.allowedNamespaces allows ns. While deleting, a
// policy shared at all will do, as for tunnels (sharedWith): an
// application deleted after its namespace was taken out must still go.
func policySharedWith(kube client.Reader, ns string, deleting bool) func(context.Context, resource.Managed) (bool, error) {
	return func(ctx context.Context, m resource.Managed) (bool, error) {
		p, ok := m.(*ztv1alpha1.AccessPolicy)
		if !ok || !sharing.SharedBy(p.Spec.AllowedNamespaces) {
			return false, nil
		}
		if deleting {
			return true, nil
		}
		labels, err := namespaceLabels(ctx, kube, ns)
		if err != nil {
			return false, err
		}
		return sharing.AllowedBy(p.Spec.AllowedNamespaces, p.Namespace, ns, labels), nil
	}
}

// namespaceLabels are the labels of namespace ns, which a sharing selector
// matches.
func namespaceLabels(ctx context.Context, kube client.Reader, ns string) (map[string]string, error) {
	n := &corev1.Namespace{}
	if err := kube.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
		return nil, errors.Wrap(err, "cannot get Namespace")
	}
	return n.Labels, nil
}

// accessPolicyObservedID is the policy an AccessPolicy observed as its own.
func accessPolicyObservedID(m resource.Managed) string {
	if p, ok := m.(*ztv1alpha1.AccessPolicy); ok {
		return p.Status.AtProvider.ID
	}
	return ""
}

// sharedWith says whether a Tunnel of another namespace is shared with ns:
// its CloudflareTunnel's spec.allowedNamespaces allows ns. While deleting,
// a tunnel shared at all will do: a namespace taken out of the allowed set
// must still remove what it made through the tunnel (each kind's ownership
// check, its marker or its claim on the ID, still keeps it off objects it
// did not make).
func sharedWith(kube client.Reader, ns string, deleting bool) func(context.Context, resource.Managed) (bool, error) {
	return func(ctx context.Context, m resource.Managed) (bool, error) {
		c := metav1.GetControllerOf(m)
		if c == nil || c.Kind != v1alpha1.CloudflareTunnelKind {
			return false, nil // a Tunnel made by hand is its namespace's alone
		}
		cft := &v1alpha1.CloudflareTunnel{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: m.GetNamespace(), Name: c.Name}, cft); err != nil {
			return false, client.IgnoreNotFound(errors.Wrap(err, "cannot get CloudflareTunnel"))
		}
		if cft.UID != c.UID || !sharing.Shared(cft) {
			return false, nil
		}
		if deleting {
			return true, nil
		}
		labels, err := namespaceLabels(ctx, kube, ns)
		if err != nil {
			return false, err
		}
		return sharing.Allows(cft, ns, labels), nil
	}
}

// isForeign says whether err refuses a tunnel or virtual network that
// another namespace manages.
func isForeign(err error) bool {
	var t *ForeignTunnelError
	var v *ForeignVirtualNetworkError
	var p *ForeignAccessPolicyError
	return errors.As(err, &t) || errors.As(err, &v) || errors.As(err, &p)
}

// tunnelObservedID is the tunnel a Tunnel observed as its own.
func tunnelObservedID(m resource.Managed) string {
	if t, ok := m.(*ztv1alpha1.Tunnel); ok {
		return t.Status.AtProvider.ID
	}
	return ""
}

// virtualNetworkObservedID is the virtual network a VirtualNetwork observed
// as its own.
func virtualNetworkObservedID(m resource.Managed) string {
	if v, ok := m.(*ztv1alpha1.VirtualNetwork); ok {
		return v.Status.AtProvider.ID
	}
	return ""
}

// managedElsewhere finds, among ids, one whose claim (firstOf: the managed
// resource of the list that holds it, else the oldest naming it) is in
// another namespace than ns and not shared with ns (shared), and names that
// resource ("namespace/name"). A resource of ns that names an ID without
// holding it (refused, because another resource holds it) does not make
// the ID ns's own.
func managedElsewhere(ctx context.Context, kube client.Reader, l client.ObjectList, observedID func(resource.Managed) string, ns string, ids []string, shared func(context.Context, resource.Managed) (bool, error)) (by, id string, err error) {
	if len(ids) == 0 {
		return "", "", nil
	}
	if err := kube.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		if apimeta.IsNoMatchError(err) {
			// A kind not installed (safe start) manages nothing.
			return "", "", nil
		}
		return "", "", err
	}
	ml, ok := l.(resource.ManagedList)
	if !ok {
		return "", "", errors.Errorf("%T is not a managed resource list", l)
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		// One being deleted still holds its object until it is gone.
		claim := firstOf(ml.GetItems(), id, observedID, nil)
		if claim == nil || claim.GetNamespace() == ns {
			continue
		}
		if shared != nil {
			ok, err := shared(ctx, claim)
			if err != nil {
				return "", "", err
			}
			if ok {
				continue
			}
		}
		return claim.GetNamespace() + "/" + claim.GetName(), id, nil
	}
	return "", "", nil
}

// CreateSkew is the clock-skew allowance when an object's creation time in
// Cloudflare is compared with the time this provider began creating it (a
// resource's crossplane.io/external-create-pending annotation). It is also
// the one window in which an object of the same name made elsewhere is
// mistaken for ours: one made within CreateSkew before this resource's own
// create began. A cluster whose clock is further off than this sees its own
// lost creates refused as taken (the message says how to take one over).
const CreateSkew = 30 * time.Second

// LeftByOwnCreate says whether the object id, which Cloudflare created at
// created, can be what this resource's own create left behind when its
// response was lost: the resource began a create, the object appeared no
// earlier than CreateSkew before it did, and it is not the object that
// refused one of this resource's creates as already existing (which was
// there before that create began). A name finds an object; it does not
// prove the object is ours — anything older belongs to someone else.
func LeftByOwnCreate(mg metav1.Object, id string, created time.Time) bool {
	pending := meta.GetExternalCreatePending(mg)
	if id != "" && mg.GetAnnotations()[AnnotationCreateRefusedBy] == id {
		return false
	}
	return !pending.IsZero() && !created.IsZero() && !created.Before(pending.Add(-CreateSkew))
}

// AnnotationCreateRefusedBy holds the ID of the object of the desired name
// that made Cloudflare refuse this resource's create: it existed before the
// create began, so it is not what a create of this resource left behind,
// however close in time the two were (the window LeftByOwnCreate allows).
const AnnotationCreateRefusedBy = "tunnels.cloudflare.com/create-refused-by"

// CreateRefused records that the object id stood in the way of mg's
// create, and returns the error that says the name is taken. The managed
// reconciler saves mg's annotations after a failed create.
func CreateRefused(mg metav1.Object, kind, name, id string, created time.Time) error {
	meta.AddAnnotations(mg, map[string]string{AnnotationCreateRefusedBy: id})
	return &NameTakenError{Kind: kind, Name: name, ID: id, Created: created}
}

// NameTakenError says an object found by this resource's natural key was
// not created by this resource: it is left alone.
type NameTakenError struct {
	Kind, Name, ID string
	Created        time.Time
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("name taken: Cloudflare %s %s named %q (created %s) was not created by this resource, so it is neither adopted, changed nor deleted. To take it over on purpose, set %s as the crossplane.io/external-name annotation; otherwise use another name",
		e.Kind, e.ID, e.Name, e.Created.UTC().Format(time.RFC3339), e.ID)
}

// ConditionReason of an object of the resource's name that it did not
// create: NameTaken.
func (e *NameTakenError) ConditionReason() xpv2.ConditionReason { return common.ReasonNameTaken }
