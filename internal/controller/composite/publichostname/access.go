package publichostname

// Access, managed: the PublicHostname makes the Access application for its
// hostname (an AccessApplication it controls), with the AccessPolicies its
// spec names, and publishes rules only with that application's audience
// tag on every one of them. Until the application exists nothing is
// published; rules that were published without an Access check are taken
// off meanwhile.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// teamDomainSuffix ends every Zero Trust team domain.
const teamDomainSuffix = ".cloudflareaccess.com"

// ApplicationName is the AccessApplication a PublicHostname makes.
func ApplicationName(ph *v1alpha1.PublicHostname) string { return ph.Name }

// withAccess is the spec with its managed Access made explicit: the team
// and audience tag of the hostname's application. A problem says why
// there is none yet (the spec then publishes nothing).
func (r *Reconciler) withAccess(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target) (v1alpha1.PublicHostnameSpec, *publish.Problem, error) {
	spec := *ph.Spec.DeepCopy()
	if !handshake.ManagedAccess(spec) {
		return spec, nil, nil
	}
	// Without its application the rest of the spec is still checked, and
	// its rules are withheld by the caller.
	unprotected := *spec.DeepCopy()
	unprotected.Access = nil
	if p, err := r.missingPolicy(ctx, ph); p != nil || err != nil {
		return unprotected, p, err
	}
	if !tgt.Made {
		return unprotected, waiting("spec.access", "waiting for CloudflareTunnel %s's credentials, which the Access application uses", handshake.TunnelName(ph)), nil
	}
	if p, _, err := r.holding(ctx, ph); p != nil || err != nil {
		return unprotected, p, err
	}
	app, p, err := r.applyApplication(ctx, ph, tgt)
	if p != nil || err != nil {
		return unprotected, p, err
	}
	at := app.Status.AtProvider
	if at.AUD == "" || !strings.HasSuffix(at.TeamDomain, teamDomainSuffix) || meta.GetExternalName(app) == "" {
		if c := app.GetCondition(xpv2.TypeSynced); c.Status == "False" {
			return unprotected, &publish.Problem{Field: "spec.access", Message: fmt.Sprintf("AccessApplication %s: %s; no rule goes out without its Access check", app.Name, c.Message)}, nil
		}
		return unprotected, waiting("spec.access", "waiting for AccessApplication %s to be made in Cloudflare; no rule goes out without its Access check", app.Name), nil
	}
	spec.Access = &v1alpha1.Access{Required: ptr.To(ptr.Deref(spec.Access.Required, true)), TeamName: strings.TrimSuffix(at.TeamDomain, teamDomainSuffix), AudTags: []string{at.AUD}}
	return spec, nil, nil
}

func waiting(field, format string, args ...any) *publish.Problem {
	return &publish.Problem{Field: field, Message: fmt.Sprintf(format, args...), Waiting: true, WaitingFor: publish.WaitingForAccessApplication}
}

// holding says whether the PublicHostname holds its hostname, which its
// Access application needs: its tunnel's answer accepts its claim and,
// unless its DNS is managed elsewhere, its DNS record is made in
// Cloudflare. Otherwise a problem says what it waits for, and lost whether
// the hostname is another's (the claim lost, or the record refused).
func (r *Reconciler) holding(ctx context.Context, ph *v1alpha1.PublicHostname) (p *publish.Problem, lost bool, err error) {
	t := ph.Status.Tunnel
	switch {
	case t == nil || t.Tunnel != handshake.TunnelName(ph):
		return holdWait("waiting for CloudflareTunnel %s to accept the hostname", handshake.TunnelName(ph)), false, nil
	case !t.Accepted:
		return holdWait("the hostname is not this PublicHostname's on CloudflareTunnel %s (%s)", handshake.TunnelName(ph), t.Reason), true, nil
	case ph.Spec.DNS == v1alpha1.DNSNone || ph.Spec.LoadBalancing != nil:
		// No DNS record of its own to prove it: its claim on the tunnel
		// (and, for a load balancer, the holder check of the
		// LoadBalancer's namespace) is what it has.
		return nil, false, nil
	}
	host, _ := publish.Hostname(ph.Spec.Hostname)
	have, err := r.records(ctx, ph)
	if err != nil {
		return nil, false, err
	}
	for i := range have {
		rec := &have[i]
		switch {
		case !strings.EqualFold(rec.Spec.ForProvider.Name, host) || meta.WasDeleted(rec):
		case Refused(rec):
			return holdWait("its DNS record is refused (%s)", rec.GetCondition(xpv2.TypeSynced).Reason), true, nil
		case meta.GetExternalName(rec) != "" && rec.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue:
			return nil, false, nil
		}
	}
	return holdWait("waiting for its DNS record to be made in Cloudflare"), false, nil
}

// holdWait is the problem of a hostname not (yet) held.
func holdWait(format string, args ...any) *publish.Problem {
	return &publish.Problem{Field: "spec.access", Message: fmt.Sprintf(format, args...) + "; an Access application is made only for a hostname this PublicHostname holds, and no rule goes out without it", Waiting: true, WaitingFor: publish.WaitingForHostname}
}

// dropUnwanted deletes the application of a PublicHostname that no longer
// asks for managed Access, or whose hostname is another's.
func (r *Reconciler) dropUnwanted(ctx context.Context, ph *v1alpha1.PublicHostname) error {
	if !handshake.ManagedAccess(ph.Spec) {
		return r.dropApplication(ctx, ph, false)
	}
	if _, lost, err := r.holding(ctx, ph); err != nil || !lost {
		return err
	}
	return r.dropApplication(ctx, ph, true)
}

// dropApplication deletes the AccessApplication this PublicHostname made
// and no longer wants — its spec asks for no managed Access, or the
// hostname is another's. When the spec no longer asks for Access, it goes
// only once its tunnel serves the hostname's current rules and none of
// them carries the application's audience (CheckGone): the check goes
// before the application, so the hostname is never open while the user
// still asks for it; and the application, which guards the hostname at
// Cloudflare's edge while it exists, goes after the open rules are served,
// so the hostname is never unserved meanwhile. That holds when its
// audience is not known yet (made in Cloudflare, not observed since): the
// rules serve the hostname or they do not, whatever the audience.
func (r *Reconciler) dropApplication(ctx context.Context, ph *v1alpha1.PublicHostname, lost bool) error {
	app := &ztv1alpha1.AccessApplication{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: ApplicationName(ph)}, app)
	if kerrors.IsNotFound(err) || apimeta.IsNoMatchError(err) || (err == nil && (!metav1.IsControlledBy(app, ph) || meta.WasDeleted(app))) {
		return nil
	}
	if err != nil {
		return errors.Wrap(err, "cannot get AccessApplication")
	}
	if !lost && !CheckGone(ph, app.Status.AtProvider.AUD) {
		return nil
	}
	if err := r.kube.Delete(ctx, app, client.Preconditions{UID: &app.UID}); client.IgnoreNotFound(err) != nil {
		return errors.Wrapf(err, "cannot delete AccessApplication %s", app.Name)
	}
	why := "the spec no longer asks for managed Access"
	if lost {
		why = "the hostname is not this PublicHostname's"
	}
	r.record.Event(ph, event.Normal("DeletingAccessApplication", fmt.Sprintf("Deleting AccessApplication %s: %s", app.Name, why)))
	return nil
}

// CheckGone says whether the tunnel serves the PublicHostname's current
// rules (its answer is for them: their generation and number, with a
// configuration version) and none of them checks audience aud (none checks
// any, when the application's audience is not known yet). A hostname
// without rules is not served: the application stays until it is, or
// until the hostname is deleted.
func CheckGone(ph *v1alpha1.PublicHostname, aud string) bool {
	t, rules := ph.Status.Tunnel, ph.Status.Rules
	if t == nil || !t.Accepted || t.ConfigVersion == 0 || t.ObservedGeneration != ph.Status.RulesGeneration || len(rules) == 0 || t.Rules != len(rules) {
		return false
	}
	for _, rule := range rules {
		// An audience not known yet may be any rule's.
		if a := rule.OriginRequest; a != nil && a.Access != nil && (aud == "" || slices.Contains(a.Access.AudTag, aud)) {
			return false
		}
	}
	return true
}

// missingPolicy names the first AccessPolicy the spec names that does not
// exist, or that another namespace does not share with this one.
func (r *Reconciler) missingPolicy(ctx context.Context, ph *v1alpha1.PublicHostname) (*publish.Problem, error) {
	for i, pol := range ph.Spec.Access.Policies {
		field := fmt.Sprintf("spec.access.policies[%d]", i)
		key := policyKey(ph.Namespace, pol)
		if j := slices.IndexFunc(ph.Spec.Access.Policies[:i], func(q v1alpha1.AccessPolicyName) bool { return policyKey(ph.Namespace, q) == key }); j >= 0 {
			return &publish.Problem{Field: field, Message: fmt.Sprintf("names AccessPolicy %s again (as spec.access.policies[%d]): an Access application links each policy once; nothing is published without its Access check", key, j)}, nil
		}
		p := &ztv1alpha1.AccessPolicy{}
		err := r.kube.Get(ctx, key, p)
		if kerrors.IsNotFound(err) {
			return &publish.Problem{Field: field, Message: fmt.Sprintf("no AccessPolicy %q in namespace %s; no rule goes out without its Access check", key.Name, key.Namespace), Waiting: true, WaitingFor: publish.WaitingForAccessPolicy}, nil
		}
		if err != nil {
			return nil, errors.Wrap(err, "cannot get AccessPolicy")
		}
		if key.Namespace == ph.Namespace {
			continue
		}
		ns := &corev1.Namespace{}
		if err := r.kube.Get(ctx, types.NamespacedName{Name: ph.Namespace}, ns); err != nil {
			return nil, errors.Wrap(err, "cannot get Namespace")
		}
		if !sharing.AllowedBy(p.Spec.AllowedNamespaces, p.Namespace, ph.Namespace, ns.Labels) {
			return &publish.Problem{Field: field, Message: fmt.Sprintf("AccessPolicy %s is not shared with namespace %s (its spec.allowedNamespaces); no rule goes out without its Access check", key, ph.Namespace)}, nil
		}
	}
	return nil, nil
}

// policyKey is where an AccessPolicy a PublicHostname of namespace ns
// names lives.
func policyKey(ns string, pol v1alpha1.AccessPolicyName) types.NamespacedName {
	if pol.Namespace != "" {
		ns = pol.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: pol.Name}
}

// DesiredApplication is the AccessApplication for the hostname.
func DesiredApplication(ph *v1alpha1.PublicHostname, tgt target.Target) *ztv1alpha1.AccessApplication {
	host, _ := publish.Hostname(ph.Spec.Hostname)
	app := &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ph.Namespace, Name: ApplicationName(ph), Labels: map[string]string{publish.LabelPublicHostname: publish.LabelValue(ph.Name)}},
		Spec: ztv1alpha1.AccessApplicationSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: tgt.ProviderConfig.DeepCopy()},
			ForProvider:         ztv1alpha1.AccessApplicationParameters{Name: host, Domain: host},
		},
	}
	for _, pol := range ph.Spec.Access.Policies {
		app.Spec.ForProvider.Policies = append(app.Spec.ForProvider.Policies, ztv1alpha1.AccessApplicationPolicy{PolicyIDRef: &xpv2.NamespacedReference{Name: pol.Name, Namespace: pol.Namespace}})
	}
	return app
}

// applyApplication creates or updates the hostname's AccessApplication. A
// name held by an AccessApplication this PublicHostname does not control is
// a problem: it is left alone.
func (r *Reconciler) applyApplication(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target) (*ztv1alpha1.AccessApplication, *publish.Problem, error) {
	want := DesiredApplication(ph, tgt)
	cur := &ztv1alpha1.AccessApplication{}
	err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if kerrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(ph, want, r.kube.Scheme()); err != nil {
			return nil, nil, errors.Wrap(err, "cannot own AccessApplication")
		}
		if err := r.kube.Create(ctx, want); err != nil {
			return nil, nil, errors.Wrapf(err, "cannot create AccessApplication %s", want.Name)
		}
		r.record.Event(ph, event.Normal("CreatedAccessApplication", "Created AccessApplication "+want.Name))
		return want, nil, nil
	}
	if err != nil {
		return nil, nil, errors.Wrap(err, "cannot get AccessApplication")
	}
	if !metav1.IsControlledBy(cur, ph) {
		return nil, &publish.Problem{Field: "spec.access.policies", Message: fmt.Sprintf("AccessApplication %s exists and is not this PublicHostname's; it is left alone, and no rule goes out without an Access check", cur.Name)}, nil
	}
	before := cur.DeepCopy()
	cur.Spec.ForProvider.Name, cur.Spec.ForProvider.Domain = want.Spec.ForProvider.Name, want.Spec.ForProvider.Domain
	if !slices.EqualFunc(names(cur.Namespace, cur.Spec.ForProvider.Policies), names(want.Namespace, want.Spec.ForProvider.Policies), strings.EqualFold) {
		// Resolved IDs go with the references: they are resolved again.
		cur.Spec.ForProvider.Policies = want.Spec.ForProvider.Policies
	}
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	if equality.Semantic.DeepEqual(before, cur) {
		return cur, nil, nil
	}
	return cur, nil, errors.Wrapf(r.kube.Update(ctx, cur), "cannot update AccessApplication %s", cur.Name)
}

// names are the namespace/name of the policies an application of
// namespace ns references.
func names(ns string, ps []ztv1alpha1.AccessApplicationPolicy) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if r := p.PolicyIDRef; r != nil {
			out = append(out, policyKey(ns, v1alpha1.AccessPolicyName{Name: r.Name, Namespace: r.Namespace}).String())
		}
	}
	return out
}

// Protected says whether every rule checks Access: rules published before
// the spec asked for Access must not stay while its application is made.
func Protected(rules []ztv1alpha1.IngressRule) bool {
	for _, r := range rules {
		if r.OriginRequest == nil || r.OriginRequest.Access == nil || !ptr.Deref(r.OriginRequest.Access.Required, false) {
			return false
		}
	}
	return true
}

// releaseApplication deletes the AccessApplication this PublicHostname
// made, and says whether it is gone. One it does not control is left
// alone. A cluster that has not activated the kind has none.
func (r *Reconciler) releaseApplication(ctx context.Context, ph *v1alpha1.PublicHostname) (bool, error) {
	app := &ztv1alpha1.AccessApplication{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: ApplicationName(ph)}, app)
	if kerrors.IsNotFound(err) || apimeta.IsNoMatchError(err) || (err == nil && !metav1.IsControlledBy(app, ph)) {
		return true, nil
	}
	if err != nil {
		return false, errors.Wrap(err, "cannot get AccessApplication")
	}
	if !meta.WasDeleted(app) {
		if err := r.kube.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
			return false, errors.Wrapf(err, "cannot delete AccessApplication %s", app.Name)
		}
	}
	return false, nil
}

// awaitUnpublishing says whether the application must wait for the
// tunnel's answer. A tunnel gone or being deleted takes its configuration
// with it: nothing to wait for.
func (r *Reconciler) awaitUnpublishing(ctx context.Context, ph *v1alpha1.PublicHostname) (bool, error) {
	if !handshake.AwaitsUnpublishing(ph, handshake.Tunnel(ph)) {
		return false, nil
	}
	cft := &v1alpha1.CloudflareTunnel{}
	err := r.kube.Get(ctx, handshake.Tunnel(ph), cft)
	if kerrors.IsNotFound(err) || (err == nil && meta.WasDeleted(cft)) {
		return false, nil
	}
	return err == nil, errors.Wrap(err, "cannot get CloudflareTunnel")
}
