// Package accessservicetoken reconciles AccessServiceToken managed
// resources with Cloudflare Access service tokens, and publishes each
// token's client ID and secret in its connection Secret.
package accessservicetoken

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

var kind = mr.Kind[*v1alpha1.AccessServiceToken]{
	GVK:     v1alpha1.AccessServiceTokenGroupVersionKind,
	NewObj:  func() *v1alpha1.AccessServiceToken { return &v1alpha1.AccessServiceToken{} },
	NewList: func() client.ObjectList { return &v1alpha1.AccessServiceTokenList{} },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.AccessServiceToken] {
		return &external{tokens: c.Cloudflare, org: c.Cloudflare, kube: c.Kube, recorder: c.Recorder, now: time.Now}
	},
	ObservedID: func(cr *v1alpha1.AccessServiceToken) string { return cr.Status.AtProvider.ID },
	StoredForm: func(cr *v1alpha1.AccessServiceToken) {
		if r := cr.Spec.ForProvider.Rotation; r != nil {
			rotation.KeepStoredZero(&r.RequestedAt)
		}
	},
}

// Setup adds the AccessServiceToken controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the AccessServiceToken controller once its CRD is
// established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

// external is built for one reconcile (crossplane-runtime connects anew
// each time), so what Observe learns is kept for Create and Update.
type external struct {
	tokens cloudflare.ServiceTokenAPI
	// org is read only to say why a token may have been deleted or turned
	// off in Cloudflare (its cleanup of inactive tokens).
	org cloudflare.AccessOrganizationReader
	// recorder reports what the provider does to a token Cloudflare
	// deleted or turned off, never silently.
	recorder event.Recorder
	// kube finds the AccessServiceTokens holding an ID (by the
	// external-name index), so a token another resource holds is never
	// taken for a lost create's.
	kube client.Reader
	now  func() time.Time

	// observed is the token Observe read.
	observed *cloudflare.ServiceToken
	// orphans are the tokens a create whose answer was lost left, which
	// Create deletes before making the one this resource keeps.
	orphans []cloudflare.ServiceToken
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) Observe(ctx context.Context, cr *v1alpha1.AccessServiceToken) (managed.ExternalObservation, error) {
	id := meta.GetExternalName(cr)
	if id == "" {
		var err error
		e.orphans, err = e.leftByLostCreate(ctx, cr)
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	t, err := e.tokens.GetServiceToken(ctx, id)
	if cloudflare.IsNotFound(err) {
		return e.gone(ctx, cr)
	}
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, "cannot get Access service token")
	}
	e.observed = t
	cr.Status.AtProvider = Observation(*t, cr.Status.AtProvider)
	cr.Status.AtProvider.Replaced = Replaced(cr)
	cr.SetConditions(xpv2.Available())
	diff := Diff(cr, *t, e.now())
	return managed.ExternalObservation{
		ResourceExists:   true,
		ResourceUpToDate: diff == "",
		Diff:             diff,
		// The client ID only. crossplane-runtime publishes these with a
		// JSON merge patch (managed.APISecretPublisher through
		// resource.APIPatchingApplicator), so a key left out keeps what
		// the Secret holds: the secret published from the create or
		// rotation answer is never overwritten by an Observe, which
		// cannot read it.
		ConnectionDetails: managed.ConnectionDetails{v1alpha1.KeyServiceTokenClientID: []byte(t.ClientID)},
	}, nil
}

// leftByLostCreate finds the tokens a create of this resource whose answer
// was lost left: of its name, made after its create began
// (mr.LostCreate), and held by no other AccessServiceToken. Unlike a
// policy or a group, such a token is not adopted: Cloudflare shows a
// token's secret only in the answer to its create (or a rotation), and
// that answer is what was lost, so adopted it would be a token nobody can
// use, or worse, one rotated at once. Provably this resource's, it is
// deleted (by Create, so an Observe-only resource deletes nothing) and a
// new one made, whose answer carries the secret.
func (e *external) leftByLostCreate(ctx context.Context, cr *v1alpha1.AccessServiceToken) ([]cloudflare.ServiceToken, error) {
	name := cr.Spec.ForProvider.Name
	found, err := mr.LostCreate[cloudflare.ServiceToken]{
		List:    e.tokens.ListServiceTokens,
		Match:   func(t cloudflare.ServiceToken) bool { return t.Name == name },
		ID:      func(t cloudflare.ServiceToken) string { return t.ID },
		Created: func(t cloudflare.ServiceToken) time.Time { return t.CreatedAt },
	}.Find(ctx, cr)
	if err != nil {
		return nil, err
	}
	var ours []cloudflare.ServiceToken
	for _, t := range found {
		held, err := e.heldByAnother(ctx, cr, t.ID)
		if err != nil {
			return nil, err
		}
		if !held {
			ours = append(ours, t)
		}
	}
	return ours, nil
}

// heldByAnother says whether another AccessServiceToken names id: a token
// of the same name that another resource made at the same moment is that
// resource's, not a leftover of this one's.
func (e *external) heldByAnother(ctx context.Context, cr *v1alpha1.AccessServiceToken, id string) (bool, error) {
	l := &v1alpha1.AccessServiceTokenList{}
	if err := e.kube.List(ctx, l, client.MatchingFields{mr.ExternalNameIndex: id}); err != nil {
		return false, errors.Wrap(err, "cannot list AccessServiceTokens")
	}
	for _, o := range l.Items {
		if o.GetUID() != cr.GetUID() {
			return true, nil
		}
	}
	return false, nil
}

// gone is the observation of a token Cloudflare does not have. One this
// resource made and observed was deleted in Cloudflare: the resource
// waits for the user (DeletedInCloudflareError, Synced=False and the
// Warning event crossplane-runtime records for it), or, set to Recreate,
// says so in a Warning event, records the old ID (annotations, read into
// status.atProvider.replaced) and forgets it as external-name, so that
// Create makes a new token and publishes it (a create of it whose answer
// is lost is then found as any other, by leftByLostCreate). Any other
// missing token is made, as before.
func (e *external) gone(ctx context.Context, cr *v1alpha1.AccessServiceToken) (managed.ExternalObservation, error) {
	if !DeletedInCloudflare(cr) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	deleted := &DeletedInCloudflareError{ID: cr.Status.AtProvider.ID, Secret: secretName(cr), LastSeenAt: cr.Status.AtProvider.LastSeenAt, Cleanup: e.cleanup(ctx)}
	if !Recreates(cr) {
		cr.SetConditions(xpv2.Unavailable().WithMessage(deleted.Error()))
		return managed.ExternalObservation{}, deleted
	}
	e.recorder.Event(cr, event.Warning(EventRecreating, errors.New(deleted.Recreating())))
	// Annotations, not status: crossplane-runtime saves the resource
	// before the create and takes the API server's answer, status and
	// all, so only what is in its metadata survives to the next Observe,
	// which puts the record in status.
	meta.AddAnnotations(cr, map[string]string{AnnotationReplacedID: deleted.ID, AnnotationReplacedAt: e.now().UTC().Format(time.RFC3339)})
	meta.SetExternalName(cr, "")
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// cleanup is the account's cleanup of inactive service tokens when it is
// on, for messages; nil when off or unknown (a failed read only makes a
// message less specific).
func (e *external) cleanup(ctx context.Context) *cloudflare.ServiceTokenInactivity {
	org, err := e.org.GetAccessOrganization(ctx)
	if err != nil || org.ServiceTokenInactivity == nil || !org.ServiceTokenInactivity.Enabled {
		return nil
	}
	return org.ServiceTokenInactivity
}

func secretName(cr *v1alpha1.AccessServiceToken) string {
	if r := cr.Spec.WriteConnectionSecretToReference; r != nil {
		return r.Name
	}
	return ""
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.AccessServiceToken) (managed.ExternalCreation, error) {
	for _, o := range e.orphans {
		if err := e.tokens.DeleteServiceToken(ctx, o.ID); err != nil && !cloudflare.IsNotFound(err) {
			return managed.ExternalCreation{}, errors.Wrapf(err, "cannot delete service token %s, which a create of this resource whose answer was lost left (its secret is unknown)", o.ID)
		}
	}
	t, err := e.tokens.CreateServiceToken(ctx, Input(cr.Spec.ForProvider))
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create Access service token")
	}
	meta.SetExternalName(cr, t.ID)
	return managed.ExternalCreation{ConnectionDetails: details(t)}, nil
}

// details are the connection details of an answer that carries the secret.
func details(t *cloudflare.IssuedServiceToken) managed.ConnectionDetails {
	return managed.ConnectionDetails{
		v1alpha1.KeyServiceTokenClientID:     []byte(t.ClientID),
		v1alpha1.KeyServiceTokenClientSecret: []byte(t.ClientSecret.Reveal()),
	}
}

// Update rotates the secret when asked; else it corrects the name and
// duration and refreshes the expiry when due. A rotation request in the
// future is refused, but the rest is still done.
func (e *external) Update(ctx context.Context, cr *v1alpha1.AccessServiceToken) (managed.ExternalUpdate, error) {
	id := meta.GetExternalName(cr)
	t := e.observed
	if t == nil {
		return managed.ExternalUpdate{}, errors.New("the service token was not observed before its update")
	}
	cd, refused, err := e.rotate(ctx, cr, id, *t)
	if err != nil || cd != nil {
		// A new secret is published before anything else may fail:
		// crossplane-runtime publishes nothing from an Update that
		// returns an error, and the secret cannot be read again. The
		// rest waits for the next reconcile, whose Observe sees it.
		return managed.ExternalUpdate{ConnectionDetails: cd}, err
	}
	if in, ok := Change(cr.Spec.ForProvider, *t); ok {
		if TurnedOnAgain(in) {
			e.recorder.Event(cr, event.Warning(EventTurningOn, errors.New(TurningOnMessage(*t, e.cleanup(ctx)))))
		}
		if t, err = e.tokens.UpdateServiceToken(ctx, id, in); err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update Access service token")
		}
	}
	if RefreshDue(cr.Spec.ForProvider.RefreshBefore, t.ExpiresAt, e.now()) {
		if t, err = e.tokens.RefreshServiceToken(ctx, id); err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot refresh Access service token")
		}
		cr.Status.AtProvider.LastRefreshedAt = &metav1.Time{Time: e.now()}
	}
	cr.Status.AtProvider = Observation(*t, cr.Status.AtProvider)
	return managed.ExternalUpdate{}, refused
}

// rotate issues a new secret when the request asks for one and returns it
// as connection details, published like the first. A request in the
// future is returned as refused, not as a failure of the update.
//
// Should the answer to a rotation be lost, the new secret is known to no
// one and the request is served again: the secret the connection Secret
// holds is then replaced at once (Cloudflare keeps one previous secret),
// with no overlap. Cloudflare offers no way to read a secret again.
func (e *external) rotate(ctx context.Context, cr *v1alpha1.AccessServiceToken, id string, t cloudflare.ServiceToken) (cd managed.ConnectionDetails, refused, err error) {
	want := cr.Spec.ForProvider.Rotation
	now := e.now()
	due, refused := RotationDue(want, cr.Status.AtProvider.Rotation, t.CreatedAt, now)
	if !due {
		return nil, refused, nil
	}
	prev := PreviousExpiresAt(want, now)
	issued, err := e.tokens.RotateServiceToken(ctx, id, prev)
	if err != nil {
		return nil, nil, errors.Wrap(err, "cannot rotate the Access service token's secret")
	}
	rot := &v1alpha1.AccessServiceTokenRotationObservation{RequestedAt: want.RequestedAt, RotatedAt: metav1.Time{Time: now}, PreviousSecretExpiresAt: &metav1.Time{Time: now}}
	if prev != nil {
		rot.PreviousSecretExpiresAt = &metav1.Time{Time: *prev}
	}
	cr.Status.AtProvider = Observation(issued.ServiceToken, cr.Status.AtProvider)
	cr.Status.AtProvider.Rotation = rot
	return details(issued), nil, nil
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.AccessServiceToken) (managed.ExternalDelete, error) {
	err := e.tokens.DeleteServiceToken(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete Access service token")
}
