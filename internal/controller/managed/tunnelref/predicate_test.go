package tunnelref

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

func TestUsersChanged(t *testing.T) {
	tunnel := func(edit func(*ztv1alpha1.Tunnel)) *ztv1alpha1.Tunnel {
		tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "edge", ResourceVersion: "1", Labels: map[string]string{"a": "b"},
			Annotations: map[string]string{"crossplane.io/external-name": "id-1"},
		}}
		tun.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}
		tun.Spec.ForProvider.Name = "edge"
		tun.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{{Hostname: ptr.To("a.example.com"), Service: "http://a"}}}
		if edit != nil {
			edit(tun)
		}
		return tun
	}
	cft := func(edit func(*tunnelsv1alpha1.CloudflareTunnel)) *tunnelsv1alpha1.CloudflareTunnel {
		c := &tunnelsv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge", Generation: 1}}
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
		"TunnelUnchanged": {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) { t.ResourceVersion = "2" })},
		"TunnelConfigurationOnly": {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) {
			t.Spec.ForProvider.Config.Ingress = append(t.Spec.ForProvider.Config.Ingress, ztv1alpha1.IngressRule{Service: "http_status:404"})
			t.Generation++
		})},
		"TunnelStatusOnly": {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) {
			t.SetConditions(xpv2.Available())
			t.Status.AtProvider.ID = "id-1"
		})},
		"TunnelGetsItsID": {old: tunnel(func(t *ztv1alpha1.Tunnel) { t.Annotations = nil }), new: tunnel(nil), want: true},
		"TunnelCredentials": {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) {
			t.Spec.ProviderConfigReference.Name = "other"
		}), want: true},
		"TunnelAdoptByName": {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) { t.Spec.AdoptByName = true }), want: true},
		"TunnelLabels":      {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) { t.Labels["a"] = "c" }), want: true},
		"TunnelDeleted": {old: tunnel(nil), new: tunnel(func(t *ztv1alpha1.Tunnel) {
			t.DeletionTimestamp = &now
		}), want: true},
		"CloudflareTunnelStatusOnly": {old: cft(nil), new: cft(func(c *tunnelsv1alpha1.CloudflareTunnel) {
			c.Status.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue})
		})},
		"CloudflareTunnelSharing": {old: cft(nil), new: cft(func(c *tunnelsv1alpha1.CloudflareTunnel) {
			c.Spec.AllowedNamespaces = &tunnelsv1alpha1.AllowedNamespaces{From: "All"}
			c.Generation++
		}), want: true},
		"CloudflareTunnelDeleted": {old: cft(nil), new: cft(func(c *tunnelsv1alpha1.CloudflareTunnel) {
			c.DeletionTimestamp = &now
		}), want: true},
		"AnotherKind": {old: &corev1.Secret{}, new: &corev1.Secret{}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.old.DeepCopyObject()
			if got := UsersChanged().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("Update: got %v, want %v", got, tc.want)
			}
			if old, ok := tc.old.(*ztv1alpha1.Tunnel); ok && old.Spec.ForProvider.Config == nil && before.(*ztv1alpha1.Tunnel).Spec.ForProvider.Config != nil {
				t.Error("the cached Tunnel lost its configuration")
			}
		})
	}
	for name, e := range map[string]bool{
		"Create":  UsersChanged().Create(event.CreateEvent{Object: tunnel(nil)}),
		"Delete":  UsersChanged().Delete(event.DeleteEvent{Object: tunnel(nil)}),
		"Generic": UsersChanged().Generic(event.GenericEvent{Object: tunnel(nil)}),
	} {
		if !e {
			t.Errorf("%s: filtered out", name)
		}
	}
}
