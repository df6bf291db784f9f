package ingress

// Claims: which of two Ingresses holds a hostname, and what the loser is
// told.

import (
	"context"
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress/translate"
)

// LostHostnames are the hostnames of ing that an older Ingress claims,
// each with the claiming Ingress's namespace/name. Readers must be a
// manager's client (the index lives in its cache).
func LostHostnames(ctx context.Context, kube client.Reader, ing *networkingv1.Ingress, hosts []string) (map[string]string, error) {
	return lostHostnames(ctx, kube, ing, hosts)
}

func claimedHostnames(o client.Object) []string {
	ing, ok := o.(*networkingv1.Ingress)
	if !ok || ing.Annotations[v1alpha1.AnnotationTunnel] == "" {
		return nil
	}
	return translate.Translate(translate.Input{Ingress: ing}).Hostnames
}

// conflictMessage explains a lost hostname claim in the user's own words.
// A wildcard and its apex are one claim: Cloudflare stores a wildcard
// private route without its "*.", so only one Ingress can route the pair;
// one Ingress may hold both.
// The winner, "<namespace>/<name>", is named only when it is of ns, the
// loser's namespace: another namespace's Ingress is another tenant's.
func conflictMessage(h string, written []string, winner, ns string) string {
	by := "an Ingress of another namespace"
	if n := handshake.SameNamespaceName(winner, "", ns); n != "" {
		by = "Ingress " + n
	}
	if len(written) == 1 && written[0] != h {
		return fmt.Sprintf("hostname %s is routed privately as %s (Cloudflare stores a wildcard route without its \"*.\"), which %s already claims; this Ingress does not route it. To publish a hostname and its wildcard, put both in one Ingress", written[0], h, by)
	}
	return fmt.Sprintf("hostname %s is already claimed by %s; this Ingress does not route it", h, by)
}

// lostHostnames are the hostnames an older Ingress already claims: the
// first Ingress keeps a hostname, later ones are told and route nothing for
// it. An Ingress whose public claim on a hostname lost (it yielded the
// hostname to the holder of its public claim) claims nothing there: the
// holder's own Ingresses route it.
func lostHostnames(ctx context.Context, kube client.Reader, ing *networkingv1.Ingress, hosts []string) (map[string]string, error) {
	lost := map[string]string{}
	yields := map[types.UID]map[string]string{}
	for _, h := range hosts {
		claims := &networkingv1.IngressList{}
		if err := kube.List(ctx, claims, client.MatchingFields{hostnameIndex: h}); err != nil {
			return nil, errors.Wrap(err, "cannot list Ingresses")
		}
		var older []*networkingv1.Ingress
		for i := range claims.Items {
			if o := &claims.Items[i]; o.UID != ing.UID && olderThan(o, ing) && !meta.WasDeleted(o) {
				older = append(older, o)
			}
		}
		slices.SortFunc(older, func(a, b *networkingv1.Ingress) int {
			if olderThan(a, b) {
				return -1
			}
			return 1
		})
		for _, o := range older {
			if _, seen := yields[o.UID]; !seen {
				y, err := source.YieldedBy(ctx, kube, ownerOf(o))
				if err != nil {
					return nil, err
				}
				yields[o.UID] = y
			}
			if _, yielded := yields[o.UID][h]; !yielded {
				lost[h] = o.Namespace + "/" + o.Name
				break
			}
		}
	}
	return lost, nil
}

// reportYielded tells the Ingress, once per hostname, that it does not
// route a hostname privately because another holds its public claim.
func (r *Reconciler) reportYielded(ing *networkingv1.Ingress, hosts []string, yielded map[string]string) {
	source.ReportYielded(&r.reported, ing, "Ingress", hosts, yielded, func(reason, msg string) { r.warn(ing, reason, msg) })
}

func olderThan(a, b *networkingv1.Ingress) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}
