package cloudflaretunnel

// Publication: the PublicHostnames a tunnel publishes, its claims, the
// decisions, and the answers written back to each.

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// published lists the PublicHostnames this tunnel publishes: those naming
// it, and those it published that now name a CloudflareTunnel that does not
// exist (a typo must not take a working hostname down: they stay here until
// they name a tunnel that exists). One that names another existing tunnel
// has moved; one being deleted is leaving (see leaving).
func (r *Reconciler) published(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]v1alpha1.PublicHostname, error) {
	phs, _, err := r.publishedAndLeaving(ctx, cr)
	return phs, err
}

// publishedAndLeaving lists the PublicHostnames this tunnel publishes and
// those leaving it that wait for its word: being deleted, with an Access
// application of their own and an answer that still counts their rules
// here. Their applications go only once Cloudflare holds a configuration
// without those rules.
func (r *Reconciler) publishedAndLeaving(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]v1alpha1.PublicHostname, []v1alpha1.PublicHostname, error) {
	l := &v1alpha1.PublicHostnameList{}
	self := types.NamespacedName{Namespace: cr.Namespace, Name: cr.Name}
	// Without copies: a tunnel reconciles on every change of any of its
	// hostnames, and copying all of them each time was most of the
	// provider's allocation at a thousand. What this returns shares the
	// cache's objects: read them, and copy one before writing it (answer).
	if err := r.kube.List(ctx, l, client.MatchingFields{handshake.TunnelIndex: handshake.IndexKey(self)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, errors.Wrap(err, "cannot list PublicHostnames")
	}
	allowed := map[string]bool{cr.Namespace: true}
	out := make([]v1alpha1.PublicHostname, 0, len(l.Items))
	var leaving []v1alpha1.PublicHostname
	for i := range l.Items {
		ph := &l.Items[i]
		if meta.WasDeleted(ph) {
			if handshake.AwaitsUnpublishing(ph, self) {
				leaving = append(leaving, *ph)
			}
			continue
		}
		if t := handshake.Tunnel(ph); t != self {
			err := r.kube.Get(ctx, t, &v1alpha1.CloudflareTunnel{})
			if err == nil {
				continue // moved
			}
			if !kerrors.IsNotFound(err) {
				return nil, nil, errors.Wrap(err, "cannot get CloudflareTunnel")
			}
		}
		ok, seen := allowed[ph.Namespace]
		if !seen {
			ns := &corev1.Namespace{}
			if err := r.kube.Get(ctx, types.NamespacedName{Name: ph.Namespace}, ns); client.IgnoreNotFound(err) != nil {
				return nil, nil, errors.Wrap(err, "cannot get Namespace")
			}
			ok = sharing.Allows(cr, ph.Namespace, ns.Labels)
			allowed[ph.Namespace] = ok
		}
		if ok {
			out = append(out, *ph) // a namespace no longer allowed is unpublished
		}
	}
	return out, leaving, nil
}

// claimName names a PublicHostname among the tunnel's claims: by name in
// the tunnel's namespace, "<namespace>/<name>" in another.
func claimName(cr *v1alpha1.CloudflareTunnel, ph *v1alpha1.PublicHostname) string {
	return handshake.AnswerName(types.NamespacedName{Namespace: ph.Namespace, Name: ph.Name}, cr.Namespace)
}

// claims are the PublicHostnames' claims on their hostnames.
func claims(cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname) []publish.Claim {
	out := make([]publish.Claim, 0, len(phs))
	for _, ph := range phs {
		host, _ := publish.Hostname(ph.Spec.Hostname)
		out = append(out, publish.Claim{Name: claimName(cr, &ph), Hostname: host, Created: ph.CreationTimestamp, Rules: ph.Status.Rules})
	}
	return out
}

// caPools are the CA Secrets the published rules name, for cloudflared to
// mount; each once, in a stable order.
func caPools(cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname, d publish.Decision) []v1alpha1.LocalSecretKeySelector {
	seen := map[v1alpha1.LocalSecretKeySelector]bool{}
	var out []v1alpha1.LocalSecretKeySelector
	for _, ph := range phs {
		host, _ := publish.Hostname(ph.Spec.Hostname)
		if d.Holder[host] != claimName(cr, &ph) || len(ph.Status.Rules) == 0 || ph.Namespace != cr.Namespace {
			// Only Secrets of the tunnel's namespace can be mounted; a
			// hostname of another namespace cannot name one (refused
			// when its rules are resolved).
			continue
		}
		for _, p := range ph.Status.CAPools {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// Answer is what a CloudflareTunnel tells a PublicHostname: whether it holds
// its hostname here and, once Cloudflare has the configuration, its version.
func Answer(cr *v1alpha1.CloudflareTunnel, ph *v1alpha1.PublicHostname, d publish.Decision, configVersion int) v1alpha1.PublishedStatus {
	st := v1alpha1.PublishedStatus{Tunnel: handshake.AnswerName(types.NamespacedName{Namespace: cr.Namespace, Name: cr.Name}, ph.Namespace), ObservedGeneration: ph.Status.RulesGeneration}
	if holder, lost := d.Lost[claimName(cr, ph)]; lost {
		// The holder is named only to a PublicHostname of its own
		// namespace: another namespace's is another tenant's object.
		st.Reason = "HostnameConflict"
		by := "a PublicHostname of another namespace"
		if n := handshake.SameNamespaceName(holder, cr.Namespace, ph.Namespace); n != "" {
			st.ClaimedBy, by = holder, "PublicHostname "+n
		}
		st.Message = fmt.Sprintf("hostname %s is already published through CloudflareTunnel %s by %s, the older claim; this one is not published", ph.Spec.Hostname, cr.Name, by)
		return st
	}
	st.Accepted, st.Rules = true, len(ph.Status.Rules)
	switch {
	case st.Rules == 0:
		st.Reason, st.Message = "NoRules", fmt.Sprintf("hostname %s is this PublicHostname's on CloudflareTunnel %s, but it has no valid rules to publish yet", ph.Spec.Hostname, cr.Name)
	case configVersion == 0:
		st.Reason, st.Message = "Accepted", fmt.Sprintf("hostname %s is this PublicHostname's on CloudflareTunnel %s; its rules are on their way to Cloudflare", ph.Spec.Hostname, cr.Name)
	default:
		st.Reason, st.ConfigVersion = "Accepted", configVersion
		st.Message = fmt.Sprintf("hostname %s is published through CloudflareTunnel %s: %s in configuration version %d", ph.Spec.Hostname, cr.Name, publish.RuleCount(st.Rules), configVersion)
	}
	return st
}

// answerLeaving tells each leaving PublicHostname that its rules are out
// of the configuration Cloudflare holds (version: the wanted document is
// there, and it has none of theirs), so its Access application may go.
func (r *Reconciler) answerLeaving(ctx context.Context, cr *v1alpha1.CloudflareTunnel, leaving []v1alpha1.PublicHostname, version int) error {
	if version == 0 {
		return nil
	}
	for i := range leaving {
		ph := leaving[i].DeepCopy() // shares the cache's object
		patch := client.MergeFrom(ph.DeepCopy())
		ph.Status.Tunnel = &v1alpha1.PublishedStatus{
			Tunnel:        handshake.AnswerName(types.NamespacedName{Namespace: cr.Namespace, Name: cr.Name}, ph.Namespace),
			Reason:        handshake.ReasonUnpublished,
			Message:       fmt.Sprintf("hostname %s's rules are out of CloudflareTunnel %s's configuration (version %d)", ph.Spec.Hostname, cr.Name, version),
			ConfigVersion: version,
		}
		if err := r.kube.Status().Patch(ctx, ph, patch); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, "cannot answer PublicHostname %s", ph.Name)
		}
	}
	return nil
}

// configVersion is the version of the tunnel's configuration in Cloudflare
// when it is the one this CloudflareTunnel wants, else 0.
func configVersion(tun *ztv1alpha1.Tunnel, want *ztv1alpha1.TunnelConfig) int {
	synced := tun.GetCondition(xpv2.TypeSynced)
	if synced.Status != corev1.ConditionTrue || synced.ObservedGeneration != tun.Generation || !equality.Semantic.DeepEqual(tun.Spec.ForProvider.Config, want) {
		return 0
	}
	return tun.Status.AtProvider.RemoteConfigVersion
}

// answer writes each PublicHostname's answer where it changed (the
// CloudflareTunnel is the only writer of status.tunnel, by merge patch) and
// tells a hostname that lost its claim by an event.
func (r *Reconciler) answer(ctx context.Context, cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname, d publish.Decision, version int) error {
	answers := make([]v1alpha1.PublishedStatus, len(phs))
	defer func() { r.rules.answered(cr.UID, phs, answers) }()
	for i := range phs {
		want := Answer(cr, &phs[i], d, version)
		if r.rules.stillPublished(cr.UID, &phs[i], want) {
			want = *phs[i].Status.Tunnel
		}
		if t := phs[i].Status.Tunnel; t != nil {
			answers[i] = *t
		}
		if t := phs[i].Status.Tunnel; t != nil && *t == want {
			continue
		}
		ph := phs[i].DeepCopy() // phs share the cache's objects (published)
		if !want.Accepted && (ph.Status.Tunnel == nil || ph.Status.Tunnel.Message != want.Message) {
			r.record.Event(ph, event.Warning(event.Reason(want.Reason), errors.New(want.Message)))
		}
		patch := client.MergeFrom(ph.DeepCopy())
		ph.Status.Tunnel = &want
		if err := r.kube.Status().Patch(ctx, ph, patch); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, "cannot answer PublicHostname %s", ph.Name)
		}
		answers[i] = want
	}
	return nil
}
