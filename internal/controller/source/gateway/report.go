package gateway

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
)

// showLost writes into the routes' entries the hostnames the tunnel gave
// to another source's older claim, as its PublicHostnames' status says.
func showLost(res *translate.Result, children []source.Owned) {
	var phs []*v1alpha1.PublicHostname
	for _, m := range children {
		if ph, ok := m.(*v1alpha1.PublicHostname); ok {
			phs = append(phs, ph)
		}
	}
	lost := translate.Lost(phs, res.Tunnel)
	translate.ShowLost(res.Routes, lost)
	translate.ShowLost(res.GRPCRoutes, lost)
}

func (r *Reconciler) warn(o client.Object, ws []translate.Warning) {
	if r.record == nil {
		return
	}
	for _, w := range ws {
		r.record.Event(o, event.Warning(event.Reason(w.Reason), errors.New(w.Message)))
	}
}

// counted are the routes each Gateway last counted in the source metrics,
// so that a route gone, or no longer naming it, is forgotten.
type counted struct {
	sync.Mutex
	byGateway map[types.NamespacedName]map[routeKey]bool
}

type routeKey struct {
	kind string
	name types.NamespacedName
}

// count records what became of the Gateway's routes in the source metrics,
// by kind (HTTPRoute, GRPCRoute). A route naming two Gateways is counted
// once, as the last of them saw it.
func (r *Reconciler) count(gw types.NamespacedName, sts ...[]translate.RouteStatus) {
	if r.metrics == nil {
		return
	}
	now := map[routeKey]bool{}
	for _, kind := range sts {
		for _, st := range kind {
			k := routeKey{kind: string(st.Kind), name: types.NamespacedName{Namespace: st.Namespace, Name: st.Name}}
			now[k] = true
			r.metrics.SetSource(k.kind, k.name, translate.RouteState(st.Parents))
		}
	}
	r.counted.Lock()
	defer r.counted.Unlock()
	if r.counted.byGateway == nil {
		r.counted.byGateway = map[types.NamespacedName]map[routeKey]bool{}
	}
	for k := range r.counted.byGateway[gw] {
		if !now[k] {
			r.metrics.ForgetSource(k.kind, k.name)
		}
	}
	r.counted.byGateway[gw] = now
}
