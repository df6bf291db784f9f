package target

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestChanged(t *testing.T) {
	cft := func(edit func(*v1alpha1.CloudflareTunnel)) *v1alpha1.CloudflareTunnel {
		c := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge", Generation: 1, Labels: map[string]string{"a": "b"}}}
		c.Status.TunnelID = "id-1"
		c.Status.ProviderConfigRef = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}
		if edit != nil {
			edit(c)
		}
		return c
	}
	now := metav1.Now()
	cases := map[string]struct {
		old, new client.Object
		want     bool
	}{
		"Unchanged": {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) { c.ResourceVersion = "2" })},
		"StatusOnly": {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) {
			c.Status.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue})
			c.Status.Connections = 4
		})},
		"GetsItsID": {old: cft(func(c *v1alpha1.CloudflareTunnel) { c.Status.TunnelID = "" }), new: cft(nil), want: true},
		"WhyNoIDChanged": {
			old: cft(func(c *v1alpha1.CloudflareTunnel) { c.Status.TunnelID = "" }),
			new: cft(func(c *v1alpha1.CloudflareTunnel) {
				c.Status.TunnelID = ""
				c.Status.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonTunnelNameTaken})
			}),
			want: true,
		},
		"ProviderConfigSaid": {old: cft(func(c *v1alpha1.CloudflareTunnel) { c.Status.ProviderConfigRef = nil }), new: cft(nil), want: true},
		"ProviderConfigChanged": {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) {
			c.Status.ProviderConfigRef.Name = "other"
		}), want: true},
		"Sharing": {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) {
			c.Spec.AllowedNamespaces = &v1alpha1.AllowedNamespaces{From: "All"}
			c.Generation++
		}), want: true},
		"ItsChildren": {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) {
			c.Spec.Crossplane = &v1alpha1.CompositeCrossplane{ResourceRefs: []v1alpha1.CompositeResourceRef{{APIVersion: "apps/v1", Kind: "Deployment", Name: "edge-cloudflared"}}}
		})},
		"AdoptByName": {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) { c.Spec.AdoptByName = true }), want: true},
		"Labels":      {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) { c.Labels["a"] = "c" }), want: true},
		"Deleted":     {old: cft(nil), new: cft(func(c *v1alpha1.CloudflareTunnel) { c.DeletionTimestamp = &now }), want: true},
		"AnotherKind": {old: &corev1.Secret{}, new: &corev1.Secret{}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Changed().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("Update: got %v, want %v", got, tc.want)
			}
		})
	}
	for name, e := range map[string]bool{
		"Create":  Changed().Create(event.CreateEvent{Object: cft(nil)}),
		"Delete":  Changed().Delete(event.DeleteEvent{Object: cft(nil)}),
		"Generic": Changed().Generic(event.GenericEvent{Object: cft(nil)}),
	} {
		if !e {
			t.Errorf("%s: filtered out", name)
		}
	}
}
