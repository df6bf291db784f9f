// Package tunnel reconciles Tunnel managed resources with Cloudflare Tunnels.
package tunnel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// Connection detail keys published to writeConnectionSecretToRef.
const (
	KeyToken     = "token"
	KeyTunnelID  = "tunnelID"
	KeyAccountID = "accountID"
)

// recountPolls is how many polls a serving tunnel's connector count may
// age before Cloudflare's connector list is read again, when nothing else
// says it changed: at the default 1m poll, a connector lost while the tunnel
// stays healthy shows within 5 minutes, for one call per tunnel per 5
// minutes.
const recountPolls = 5

var kind = mr.Kind[*v1alpha1.Tunnel]{
	GVK:        v1alpha1.TunnelGroupVersionKind,
	NewObj:     func() *v1alpha1.Tunnel { return &v1alpha1.Tunnel{} },
	NewList:    func() client.ObjectList { return &v1alpha1.TunnelList{} },
	ObservedID: func(cr *v1alpha1.Tunnel) string { return cr.Status.AtProvider.ID },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.Tunnel] {
		return &external{tunnels: c.Cloudflare, teamnet: c.Cloudflare, routes: c.Cloudflare, kube: c.Kube, accountID: c.Cloudflare.Account(), metrics: c.Metrics,
			recountEvery: recountPolls * c.PollInterval, now: time.Now}
	},
	Hostnames: configHostnames,
	Origins:   configOrigins,
	StoredForm: func(cr *v1alpha1.Tunnel) {
		if r := cr.Spec.ForProvider.TokenRotation; r != nil {
			rotation.KeepStoredZero(&r.RequestedAt)
		}
	},
}

// configHostnames lists the hostnames of the tunnel's configuration.
func configHostnames(cr *v1alpha1.Tunnel) []string {
	c := cr.Spec.ForProvider.Config
	if c == nil {
		return nil
	}
	var hs []string
	for _, r := range c.Ingress {
		if h := ptr.Deref(r.Hostname, ""); h != "" {
			hs = append(hs, h)
		}
	}
	return hs
}

// configOrigins lists the services of the tunnel's configuration, the
// catch-all's included.
func configOrigins(cr *v1alpha1.Tunnel) []string {
	c := cr.Spec.ForProvider.Config
	if c == nil {
		return nil
	}
	os := make([]string, 0, len(c.Ingress))
	for _, r := range c.Ingress {
		os = append(os, r.Service)
	}
	return os
}

// Setup adds the Tunnel controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the Tunnel controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	tunnels cloudflare.TunnelsAPI
	// teamnet lists the network routes that point at the tunnel, which
	// Cloudflare would delete with it.
	teamnet cloudflare.TeamnetAPI
	// routes lists the hostname routes that keep a tunnel from being
	// deleted, to name them.
	routes    cloudflare.HostnameRoutesAPI
	kube      client.Client
	accountID string
	metrics   *metrics.Metrics
	// recountEvery is how long a serving tunnel's connector count may age
	// (connectorsStale).
	recountEvery time.Duration
	now          func() time.Time

	// What Observe saw, for Update in the same reconcile.
	observedName   string
	observedConfig *v1alpha1.TunnelConfig
}

func (e *external) Disconnect(context.Context) error { return nil }

// adopt finds the live tunnel with the desired name and takes it over only
// with proof that this resource made it. Names are unique among an
// account's live tunnels, so the name finds the tunnel a create whose
// response was lost left behind; but a tunnel of that name made elsewhere
// (another cluster, Terraform, the dashboard) is found the same way, and
// adopting it would publish its run token and rewrite its configuration.
// Tunnels carry no ownership marker, so the proof is time: the tunnel
// appeared after this resource began creating it (mr.LeftByOwnCreate) —
// or the user said to adopt by name (spec.adoptByName, after a rebuild).
func (e *external) adopt(ctx context.Context, cr *v1alpha1.Tunnel) (*cloudflare.Tunnel, error) {
	name := cr.Spec.ForProvider.Name
	ts, err := e.named(ctx, cr)
	if err != nil {
		return nil, err
	}
	switch len(ts) {
	case 0:
		return nil, nil
	case 1:
		if !cr.Spec.AdoptByName && !mr.LeftByOwnCreate(cr, ts[0].ID, ts[0].CreatedAt) {
			return nil, &mr.NameTakenError{Kind: "tunnel", Name: name, ID: ts[0].ID, Created: ts[0].CreatedAt}
		}
		return &ts[0], nil
	default:
		return nil, errors.Errorf("%d live tunnels are named %q; set the external-name to the ID of the one to manage", len(ts), name)
	}
}

// named lists the live tunnels of the desired name, as Cloudflare has them
// now. It runs only while the external-name is unknown (before a create,
// or after one of unknown outcome), where a cached list could be older
// than what it must see: a create this resource made before a crash (made
// twice), or a tunnel made elsewhere a moment ago (a create Cloudflare
// refuses, and meanwhile an empty connection Secret published for a
// tunnel that does not exist).
func (e *external) named(ctx context.Context, cr *v1alpha1.Tunnel) ([]cloudflare.Tunnel, error) {
	return e.tunnels.ListTunnelsSince(ctx, cloudflare.TunnelFilter{Name: cr.Spec.ForProvider.Name}, time.Now())
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.Tunnel) (managed.ExternalObservation, error) {
	var (
		t        *cloudflare.Tunnel
		err      error
		adopted  bool
		lateInit bool
	)
	id := meta.GetExternalName(cr)
	if id == "" {
		if t, err = e.adopt(ctx, cr); err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot look for an existing tunnel")
		}
		if t == nil {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		meta.SetExternalName(cr, t.ID)
		adopted = true
	} else {
		t, err = e.tunnels.GetTunnel(ctx, id)
		if cloudflare.IsNotFound(err) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		if err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot get tunnel")
		}
	}
	// A deleted tunnel is gone, even though Cloudflare still returns it.
	if t.Deleted() {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}

	cr.SetConditions(xpv2.Available())
	prev := cr.Status.AtProvider
	cr.Status.AtProvider = observe(t, prev)

	if cr.Spec.ForProvider.ConfigSrc == nil {
		cr.Spec.ForProvider.ConfigSrc = ptr.To(t.ConfigSrc)
		lateInit = true
	}

	e.observedName = t.Name
	upToDate, diff := t.Name == cr.Spec.ForProvider.Name, ""
	if !upToDate {
		diff = fmt.Sprintf("name: %q in Cloudflare, %q desired", t.Name, cr.Spec.ForProvider.Name)
	}
	if step := e.observeRotation(cr); step != rotationNone {
		upToDate = false
		diff += "token rotation: " + string(step) + "; "
	}
	if cr.Spec.ForProvider.Config != nil {
		tc, err := e.tunnels.GetTunnelConfiguration(ctx, t.ID)
		if err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot get tunnel configuration")
		}
		cr.Status.AtProvider.RemoteConfigVersion = tc.Version
		if e.observedConfig, err = decodeConfig(tc.Config); err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot decode tunnel configuration")
		}
		if d := ConfigDiff(cr.Spec.ForProvider.Config, e.observedConfig); d != "" {
			upToDate = false
			diff += "config: " + d
		}
	}
	if err := e.observeConnectors(ctx, prev, &cr.Status.AtProvider); err != nil {
		return managed.ExternalObservation{}, err
	}

	cd, err := e.connectionDetails(ctx, cr, t.ID)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        upToDate,
		ResourceLateInitialized: adopted || lateInit,
		ConnectionDetails:       cd,
		Diff:                    diff,
	}, nil
}

// observeConnectors reads Cloudflare's connector list when the count may
// have changed (connectorsStale) and says how many connectors run the
// current configuration.
func (e *external) observeConnectors(ctx context.Context, prev v1alpha1.TunnelObservation, cur *v1alpha1.TunnelObservation) error {
	now := e.now()
	if connectorsStale(prev, *cur, now, e.recountEvery) {
		conns, err := e.tunnels.TunnelConnectors(ctx, cur.ID)
		if err != nil {
			return errors.Wrap(err, "cannot list tunnel connections")
		}
		cur.ConnectorDetails = connectorObservations(conns)
		cur.Connectors, cur.Connections = countConnections(cur.ConnectorDetails)
		cur.ConnectorsObservedAt = &metav1.Time{Time: now}
	}
	cur.ConnectorsOnLatestConfig = onLatestConfig(cur.ConnectorDetails, cur.RemoteConfigVersion)
	return nil
}

// holdsReplacedToken says whether the Secret still holds the token a
// finished rotation replaced (its publication failed): Cloudflare refuses
// it to new connectors, so the current one is fetched and published.
func holdsReplacedToken(rot *v1alpha1.TokenRotationObservation, token []byte) bool {
	return rot != nil && rot.RotatedAt != nil && TokenChecksum(token) == rot.ReplacedTokenChecksum
}

// connectionDetails publishes the tunnel ID and account, and the run token
// when the connection Secret does not hold this tunnel's token yet. The
// token is fetched only then, so a steady-state poll costs one call.
func (e *external) connectionDetails(ctx context.Context, cr *v1alpha1.Tunnel, id string) (managed.ConnectionDetails, error) {
	cd := managed.ConnectionDetails{KeyTunnelID: []byte(id), KeyAccountID: []byte(e.accountID)}
	ref := cr.GetWriteConnectionSecretToReference()
	if ref == nil {
		return cd, nil
	}
	s := &corev1.Secret{}
	err := e.kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: ref.Name}, s)
	if err != nil && !kerrors.IsNotFound(err) {
		return nil, errors.Wrap(err, "cannot get connection secret")
	}
	if err == nil && len(s.Data[KeyToken]) > 0 && string(s.Data[KeyTunnelID]) == id && !holdsReplacedToken(cr.Status.AtProvider.TokenRotation, s.Data[KeyToken]) {
		return cd, nil
	}
	token, err := e.tunnels.TunnelToken(ctx, id)
	if err != nil {
		return nil, errors.Wrap(err, "cannot get tunnel token")
	}
	cd[KeyToken] = []byte(token)
	return cd, nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.Tunnel) (managed.ExternalCreation, error) {
	src := ptr.Deref(cr.Spec.ForProvider.ConfigSrc, "cloudflare")
	t, err := e.tunnels.CreateTunnel(ctx, cr.Spec.ForProvider.Name, src)
	if cloudflare.IsAlreadyExists(err) {
		// Observe did not see it (a listing older than the tunnel). It
		// was there before this create began, so it is not this one's; an
		// earlier create of ours that left it would have been seen, since
		// a failed write makes the next listing fresh.
		err = e.refused(ctx, cr)
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create tunnel")
	}
	meta.SetExternalName(cr, t.ID)
	cd := managed.ConnectionDetails{KeyTunnelID: []byte(t.ID), KeyAccountID: []byte(e.accountID)}
	if t.Token != "" {
		cd[KeyToken] = []byte(t.Token)
	}
	return managed.ExternalCreation{ConnectionDetails: cd}, nil
}

// refused records which tunnel stood in the way of a create, so that no
// later Observe takes it for what this resource's create left behind.
func (e *external) refused(ctx context.Context, cr *v1alpha1.Tunnel) error {
	name := cr.Spec.ForProvider.Name
	// Cloudflare just said the name is taken: a cached list may not show
	// by what, and without its ID the refusal is not recorded (a later
	// Observe could then take a tunnel made moments before for ours).
	ts, err := e.tunnels.ListTunnelsSince(ctx, cloudflare.TunnelFilter{Name: name}, time.Now())
	if err == nil && len(ts) == 0 {
		// Cloudflare lists only the tunnels a token may read.
		return errors.Errorf("a live tunnel named %q already exists that this API token may not read (Cloudflare lists a token only the tunnels it may read); it is left alone", name)
	}
	if err != nil || len(ts) != 1 {
		return errors.Errorf("a live tunnel named %q already exists", name)
	}
	if cr.Spec.AdoptByName {
		// Adopted by the next Observe, as asked.
		return errors.Errorf("a live tunnel named %q already exists; adopting it by name (spec.adoptByName)", name)
	}
	return mr.CreateRefused(cr, "tunnel", name, ts[0].ID, ts[0].CreatedAt)
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.Tunnel) (managed.ExternalUpdate, error) {
	id := meta.GetExternalName(cr)
	if e.observedName != cr.Spec.ForProvider.Name {
		if _, err := e.tunnels.RenameTunnel(ctx, id, cr.Spec.ForProvider.Name); err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot rename tunnel")
		}
	}
	if want := cr.Spec.ForProvider.Config; want != nil && ConfigDiff(want, e.observedConfig) != "" {
		doc, err := json.Marshal(want)
		if err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot encode tunnel configuration")
		}
		tc, err := e.tunnels.UpdateTunnelConfiguration(ctx, id, doc)
		e.metrics.ConfigurationWritten(err)
		if err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update tunnel configuration")
		}
		cr.Status.AtProvider.RemoteConfigVersion = tc.Version
	}
	cd, err := e.rotate(ctx, cr)
	return managed.ExternalUpdate{ConnectionDetails: cd}, err
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.Tunnel) (managed.ExternalDelete, error) {
	if err := e.routesBlockDeletion(ctx, meta.GetExternalName(cr)); err != nil {
		return managed.ExternalDelete{}, err
	}
	err := e.tunnels.DeleteTunnel(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	if ae := (*cloudflare.APIError)(nil); errors.As(err, &ae) {
		switch {
		case ae.HasCode(cloudflare.CodeTunnelHasConnections):
			return managed.ExternalDelete{}, errors.New("cannot delete tunnel yet: cloudflared connectors are still connected; stop them (scale the cloudflared Deployment to zero) and deletion will retry")
		case ae.HasCode(cloudflare.CodeTunnelHasRoutes):
			return managed.ExternalDelete{}, errors.New("cannot delete tunnel yet: routes still point at it: " + e.hostnameRoutesOf(ctx, meta.GetExternalName(cr)) + "; delete them (their HostnameRoutes, or in the dashboard) and deletion will retry")
		}
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete tunnel")
}

// routesBlockDeletion refuses to delete a tunnel that network routes still
// point at: Cloudflare deletes a tunnel's CIDR routes with it, and some may
// not be this resource's to delete (made in the dashboard, or by another
// tool); the NetworkRoutes of this provider would be left failing.
func (e *external) routesBlockDeletion(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	rs, err := e.teamnet.ListCIDRRoutesNow(ctx, cloudflare.CIDRRouteFilter{TunnelID: id})
	if err != nil {
		return errors.Wrap(err, "cannot list the network routes of the tunnel")
	}
	if len(rs) == 0 {
		return nil
	}
	names := make([]blocker, 0, len(rs))
	for _, r := range rs {
		names = append(names, blocker{kind: "network route", id: r.ID, name: r.Network, by: managedBy(ctx, e.kube, &v1alpha1.NetworkRouteList{}, "NetworkRoute", r.ID)})
	}
	return errors.New(fmt.Sprintf("cannot delete tunnel yet: %d network route(s) still point at it: %s; Cloudflare would delete them with the tunnel, so delete them first (their NetworkRoutes, or in the dashboard) and deletion will retry", len(rs), describe(names)))
}

// hostnameRoutesOf names the live hostname routes through tunnel id, and
// the resource that manages each; what cannot be listed is said so.
func (e *external) hostnameRoutesOf(ctx context.Context, id string) string {
	rs, err := e.routes.ListHostnameRoutes(ctx, cloudflare.HostnameRouteFilter{TunnelID: id})
	if err != nil {
		return "hostname routes (cannot list them: " + err.Error() + ")"
	}
	names := make([]blocker, 0, len(rs))
	for _, r := range rs {
		names = append(names, blocker{kind: "hostname route", id: r.ID, name: r.Hostname, by: managedBy(ctx, e.kube, &v1alpha1.HostnameRouteList{}, "HostnameRoute", r.ID)})
	}
	if len(names) == 0 {
		return "routes Cloudflare does not list yet"
	}
	return describe(names)
}

// blocker is a Cloudflare object that keeps a tunnel from being deleted.
type blocker struct {
	kind, id, name string
	// by is the resource that manages it ("Kind namespace/name"), if any.
	by string
}

// describe names up to five blockers and counts the rest.
func describe(bs []blocker) string {
	const shown = 5
	out := make([]string, 0, shown)
	for i, b := range bs {
		if i == shown {
			out = append(out, fmt.Sprintf("and %d more", len(bs)-shown))
			break
		}
		by := "managed by no resource of this cluster"
		if b.by != "" {
			by = "managed by " + b.by
		}
		out = append(out, fmt.Sprintf("%s %s (%s, %s)", b.kind, b.id, b.name, by))
	}
	return strings.Join(out, ", ")
}

// managedBy names the managed resource of the list whose external-name is
// id, "" when none is (or the cache cannot say).
func managedBy(ctx context.Context, kube client.Reader, l client.ObjectList, kind, id string) string {
	if kube == nil || kube.List(ctx, l, client.MatchingFields{mr.ExternalNameIndex: id}) != nil {
		return ""
	}
	ml, ok := l.(resource.ManagedList)
	if !ok {
		return ""
	}
	for _, m := range ml.GetItems() {
		if meta.GetExternalName(m) == id {
			return kind + " " + m.GetNamespace() + "/" + m.GetName()
		}
	}
	return ""
}
