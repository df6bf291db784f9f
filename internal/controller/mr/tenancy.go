package mr

import (
	"context"
	"fmt"
	"reflect"
	"strings"
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

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// ClaimedError says a Cloudflare object is already managed by another
// managed resource, which keeps it.
type ClaimedError struct {
	Kind, ID, By string
}

// claimedPrefix starts every ClaimedError message.
const claimedPrefix = "conflict: Cloudflare "

func (e *ClaimedError) Error() string {
	return fmt.Sprintf(claimedPrefix+"%s %s is already managed by %s; this resource neither takes it over nor changes it. Pick another name, or delete that resource first", e.Kind, e.ID, e.By)
}

// ForeignTunnelError says a raw tunnel ID names a tunnel that another
// namespace manages.
type ForeignTunnelError struct {
	ID, By string
}

func (e *ForeignTunnelError) Error() string {
	return fmt.Sprintf("tunnel %s is managed by Tunnel %s in another namespace; a resource may only use tunnels managed in its own namespace, ones shared with it (the CloudflareTunnel's spec.allowedNamespaces), or ones no namespace manages", e.ID, e.By)
}

// ForeignVirtualNetworkError says a raw virtual network ID names a virtual
// network that another namespace manages.
type ForeignVirtualNetworkError struct {
	ID, By string
}

func (e *ForeignVirtualNetworkError) Error() string {
	return fmt.Sprintf("virtual network %s is managed by VirtualNetwork %s in another namespace; a route may only use virtual networks managed in its own namespace (or ones no namespace manages, such as the account's default)", e.ID, e.By)
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

// firstClaim is the oldest managed resource of the list, other than mg and
// not being deleted, whose external-name is id. Names break creation-time
// ties, so every resource agrees on the order.
func firstClaim(ctx context.Context, kube client.Reader, newList func() client.ObjectList, mg resource.Managed, id string) (resource.Managed, error) {
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
	var first resource.Managed
	for _, o := range ml.GetItems() {
		if o.GetUID() == mg.GetUID() || meta.GetExternalName(o) != id || meta.WasDeleted(o) {
			continue
		}
		if first == nil || before(o, first) {
			first = o
		}
	}
	return first, nil
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
	if err := g.checkTunnels(ctx, mg); err != nil {
		if meta.WasDeleted(mg) {
			// Never delete through a foreign tunnel's route: let go.
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, err
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
	adoptingNow := meta.GetExternalName(pristine.(resource.Managed)) == ""
	if synced := pristine.(resource.Managed).GetCondition(xpv2.TypeSynced); !adoptingNow && synced.Status == corev1.ConditionTrue && time.Since(synced.LastTransitionTime.Time) > g.settle {
		// Checked when it took the ID and while it settled, and kept
		// since: a later claimant is newer and refuses itself. This keeps
		// steady-state polls from listing the kind.
		return obs, nil
	}
	other, cerr := firstClaim(ctx, g.kube, g.newList, mg, id)
	if cerr != nil {
		return managed.ExternalObservation{}, cerr
	}
	// A resource that already held the ID keeps it against one adopting it
	// now, whatever their ages; between two that both hold it (imports, or
	// a race), the older keeps it.
	if other == nil || (!adoptingNow && before(mg, other)) {
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

// checkTunnels refuses a tunnel ID that a Tunnel in another namespace
// manages, unless a Tunnel in mg's own namespace manages it too; and a
// virtual network ID likewise.
func (g *tenancyGuard[T]) checkTunnels(ctx context.Context, mg T) error {
	if g.tunnelIDs != nil {
		by, id, err := managedElsewhere(ctx, g.kube, &ztv1alpha1.TunnelList{}, mg.GetNamespace(), g.tunnelIDs(mg), sharedWith(g.kube, mg.GetNamespace(), meta.WasDeleted(mg)))
		if err != nil {
			return errors.Wrap(err, "cannot list Tunnels")
		}
		if by != "" {
			return &ForeignTunnelError{ID: id, By: by}
		}
	}
	if g.virtualNetworkIDs != nil {
		by, id, err := managedElsewhere(ctx, g.kube, &ztv1alpha1.VirtualNetworkList{}, mg.GetNamespace(), g.virtualNetworkIDs(mg), nil)
		if err != nil {
			return errors.Wrap(err, "cannot list VirtualNetworks")
		}
		if by != "" {
			return &ForeignVirtualNetworkError{ID: id, By: by}
		}
	}
	return nil
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
		n := &corev1.Namespace{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
			return false, errors.Wrap(err, "cannot get Namespace")
		}
		return sharing.Allows(cft, ns, n.Labels), nil
	}
}

// managedElsewhere finds, among ids, one that a managed resource of the list
// in another namespace than ns manages (its external-name) while none in ns
// does, nor one that shared says is shared with ns, and names that resource
// ("namespace/name").
func managedElsewhere(ctx context.Context, kube client.Reader, l client.ObjectList, ns string, ids []string, shared func(context.Context, resource.Managed) (bool, error)) (by, id string, err error) {
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
		foreign, own := "", false
		for _, m := range ml.GetItems() {
			if meta.GetExternalName(m) != id {
				continue
			}
			if m.GetNamespace() == ns {
				own = true
				break
			}
			if shared != nil {
				ok, err := shared(ctx, m)
				if err != nil {
					return "", "", err
				}
				if ok {
					own = true
					break
				}
			}
			foreign = m.GetNamespace() + "/" + m.GetName()
		}
		if !own && foreign != "" {
			return foreign, id, nil
		}
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

// nameTakenPrefix starts every NameTakenError message.
const nameTakenPrefix = "name taken: "

// NameTakenError says an object found by this resource's natural key was
// not created by this resource: it is left alone.
type NameTakenError struct {
	Kind, Name, ID string
	Created        time.Time
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf(nameTakenPrefix+"Cloudflare %s %s named %q (created %s) was not created by this resource, so it is neither adopted, changed nor deleted. To take it over on purpose, set %s as the crossplane.io/external-name annotation; otherwise use another name",
		e.Kind, e.ID, e.Name, e.Created.UTC().Format(time.RFC3339), e.ID)
}

// IsTakenMessage says whether a condition message reports an object that is
// someone else's (another resource holds it, or this one did not create
// it): waiting will not change that.
func IsTakenMessage(msg string) bool {
	return strings.Contains(msg, claimedPrefix) || strings.Contains(msg, nameTakenPrefix) || strings.Contains(msg, NotCreatedHere)
}

// NotCreatedHere is in every conflict message about an object found by its
// natural key (a DNS record, a hostname route) that this resource cannot
// prove it made.
const NotCreatedHere = "was not created by this resource"
