package quietstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// stored is a Tunnel as the API server stores it (and the cache holds it):
// times at whole seconds, Ready and Synced.
func stored() *v1alpha1.Tunnel {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tun := &v1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns", Generation: 3, ResourceVersion: "42"}}
	tun.Status.AtProvider = v1alpha1.TunnelObservation{ID: "abc", Status: "inactive", CreatedAt: &t0}
	tun.SetConditions(xpv2.Available().WithObservedGeneration(3), xpv2.ReconcileSuccess().WithObservedGeneration(3))
	for i := range tun.Status.Conditions {
		tun.Status.Conditions[i].LastTransitionTime = t0
	}
	return tun
}

func TestSameStatus(t *testing.T) {
	later := metav1.NewTime(time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC))
	cases := map[string]struct {
		edit func(*v1alpha1.Tunnel)
		want bool
	}{
		"Unchanged": {edit: func(*v1alpha1.Tunnel) {}, want: true},
		// What crossplane's managed reconciler does every poll: mark the
		// same conditions again. SetConditions keeps an unchanged
		// condition as it is, time included.
		"SameConditionsSetAgain": {edit: func(tun *v1alpha1.Tunnel) {
			tun.SetConditions(xpv2.Available().WithObservedGeneration(3), xpv2.ReconcileSuccess().WithObservedGeneration(3))
		}, want: true},
		// A controller that builds its condition afresh: only the time
		// moved, nothing transitioned.
		"OnlyLastTransitionTimeMoved": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.Conditions[0].LastTransitionTime = later
		}, want: true},
		"ConditionStatusChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.SetConditions(xpv2.Unavailable().WithObservedGeneration(3))
		}, want: false},
		"ConditionReasonChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.Conditions[0].Reason = "Other"
		}, want: false},
		"ConditionMessageChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.SetConditions(xpv2.ReconcileError(errString("boom")).WithObservedGeneration(3))
		}, want: false},
		"ConditionObservedGenerationChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.SetConditions(xpv2.Available().WithObservedGeneration(4))
		}, want: false},
		"ConditionAdded": {edit: func(tun *v1alpha1.Tunnel) {
			tun.SetConditions(xpv2.Condition{Type: "Degraded", Status: corev1.ConditionFalse, Reason: "Fine", LastTransitionTime: later})
		}, want: false},
		"ConditionRemoved": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.Conditions = tun.Status.Conditions[:1]
		}, want: false},
		"ConditionsReordered": {edit: func(tun *v1alpha1.Tunnel) {
			c := tun.Status.Conditions
			c[0], c[1] = c[1], c[0]
		}, want: false},
		"StatusObservedGenerationChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.ObservedGeneration = 3
		}, want: false},
		"AtProviderFieldChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.AtProvider.Status = "healthy"
		}, want: false},
		"AtProviderCountChanged": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.AtProvider.Connections = 4
		}, want: false},
		"AtProviderTimeSet": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.AtProvider.ConnsActiveAt = &later
		}, want: false},
		"AtProviderTimeMoved": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.AtProvider.CreatedAt = &later
		}, want: false},
		// Cloudflare's times carry fractions of a second; the API server
		// stores whole seconds, so the write would change nothing.
		"AtProviderTimeWithinTheStoredSecond": {edit: func(tun *v1alpha1.Tunnel) {
			t := metav1.NewTime(tun.Status.AtProvider.CreatedAt.Add(300 * time.Millisecond))
			tun.Status.AtProvider.CreatedAt = &t
		}, want: true},
		"AtProviderListEmptyIsOmitted": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.AtProvider.ConnectorDetails = []v1alpha1.ConnectorObservation{}
		}, want: true},
		"AtProviderListItemAdded": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Status.AtProvider.ConnectorDetails = []v1alpha1.ConnectorObservation{{ID: "c1"}}
		}, want: false},
		// Only status is compared: spec and metadata are not written by a
		// status write.
		"SpecAndMetadataIgnored": {edit: func(tun *v1alpha1.Tunnel) {
			tun.Spec.ForProvider.Name = "other"
			tun.Labels = map[string]string{"a": "b"}
			tun.ResourceVersion = "43"
		}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cached := stored()
			obj := stored()
			tc.edit(obj)
			got, err := SameStatus(cached, obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("SameStatus(cached, edited) = %t, want %t", got, tc.want)
			}
			// Symmetric.
			if back, _ := SameStatus(obj, cached); back != got {
				t.Errorf("SameStatus(edited, cached) = %t, but SameStatus(cached, edited) = %t", back, got)
			}
		})
	}
}

// TestSameStatusCrossplaneKeepsTime shows why plain equality is already
// enough for crossplane conditions: marking an unchanged condition again
// keeps the stored object's lastTransitionTime, so the objects are equal
// even compared with lastTransitionTime.
func TestSameStatusCrossplaneKeepsTime(t *testing.T) {
	cached, obj := stored(), stored()
	obj.SetConditions(xpv2.Available().WithObservedGeneration(3), xpv2.ReconcileSuccess().WithObservedGeneration(3))
	for i, c := range obj.Status.Conditions {
		if !c.LastTransitionTime.Equal(&cached.Status.Conditions[i].LastTransitionTime) {
			t.Errorf("condition %s: lastTransitionTime %s, stored %s: SetConditions replaced an unchanged condition", c.Type, c.LastTransitionTime, cached.Status.Conditions[i].LastTransitionTime)
		}
	}
}

func TestSameStatusOtherKinds(t *testing.T) {
	ing := func(host string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{}
		if host != "" {
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: host}}
		}
		return i
	}
	asUnstructured := func(o runtime.Object) *unstructured.Unstructured {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: u}
	}
	cases := map[string]struct {
		a, b runtime.Object
		want bool
	}{
		"IngressSameAddress":          {a: ing("t.cfargotunnel.com"), b: ing("t.cfargotunnel.com"), want: true},
		"IngressAddressChanged":       {a: ing("t.cfargotunnel.com"), b: ing("u.cfargotunnel.com"), want: false},
		"IngressAddressRemoved":       {a: ing("t.cfargotunnel.com"), b: ing(""), want: false},
		"IngressNoAddress":            {a: ing(""), b: ing(""), want: true},
		"UnstructuredAndTypedSame":    {a: asUnstructured(stored()), b: stored(), want: true},
		"UnstructuredAndTypedChanged": {a: asUnstructured(ing("a")), b: ing("b"), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := SameStatus(tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("SameStatus = %t, want %t", got, tc.want)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestSameStatusStructs tables the fast comparison: it says equal only for
// two objects of one type with equal Status fields, and otherwise leaves the
// answer to the unstructured comparison.
func TestSameStatusStructs(t *testing.T) {
	moved := stored()
	moved.Status.AtProvider.Status = "healthy"
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"a": "b"}}}
	cases := map[string]struct {
		a, b runtime.Object
		want bool
	}{
		"EqualStatus":        {a: stored(), b: stored(), want: true},
		"DifferentStatus":    {a: stored(), b: moved, want: false},
		"DifferentTypes":     {a: stored(), b: &networkingv1.Ingress{}, want: false},
		"UnstructuredCannot": {a: u, b: u.DeepCopy(), want: false},
		"NilCannot":          {a: (*v1alpha1.Tunnel)(nil), b: stored(), want: false},
		"TimeWithinTheStoredSecond": {a: stored(), b: func() runtime.Object {
			tun := stored()
			t := metav1.NewTime(tun.Status.AtProvider.CreatedAt.Add(300 * time.Millisecond))
			tun.Status.AtProvider.CreatedAt = &t
			return tun
		}(), want: true},
		"TimeInTheNextSecond": {a: stored(), b: func() runtime.Object {
			tun := stored()
			t := metav1.NewTime(tun.Status.AtProvider.CreatedAt.Add(time.Second))
			tun.Status.AtProvider.CreatedAt = &t
			return tun
		}(), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sameStatusStructs(tc.a, tc.b); got != tc.want {
				t.Errorf("sameStatusStructs() = %t, want %t", got, tc.want)
			}
		})
	}
}
