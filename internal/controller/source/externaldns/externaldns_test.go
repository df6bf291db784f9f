package externaldns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEndpoint(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Ingress", Name: "site", UID: "uid-1"}
	got := Endpoint("site", "apps", map[string]string{"k": "v"}, owner, []string{"b.example.com", "a.example.com", "b.example.com"}, "tid.cfargotunnel.com", "proxied-key")

	if got.GroupVersionKind() != GroupVersionKind || got.GetName() != "site" || got.GetNamespace() != "apps" {
		t.Errorf("object %s %s/%s, want a DNSEndpoint apps/site", got.GroupVersionKind(), got.GetNamespace(), got.GetName())
	}
	if c := metav1.GetControllerOf(got); c != nil {
		t.Errorf("controller %+v: the owner reference is used as given (here not a controller)", c)
	}
	if diff := cmp.Diff([]metav1.OwnerReference{owner}, got.GetOwnerReferences()); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
	// Sorted and distinct, so an unchanged set never rewrites the object.
	if diff := cmp.Diff([]string{"a.example.com", "b.example.com"}, Hosts(got)); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	want := map[string]any{"endpoints": []any{
		map[string]any{"dnsName": "a.example.com", "recordType": "CNAME", "targets": []any{"tid.cfargotunnel.com"}, "providerSpecific": []any{map[string]any{"name": "proxied-key", "value": "true"}}},
		map[string]any{"dnsName": "b.example.com", "recordType": "CNAME", "targets": []any{"tid.cfargotunnel.com"}, "providerSpecific": []any{map[string]any{"name": "proxied-key", "value": "true"}}},
	}}
	if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if n := len(Hosts(Endpoint("site", "apps", nil, owner, nil, "t", "k"))); n != 0 {
		t.Errorf("%d records for no hostnames", n)
	}
}

func TestDescribe(t *testing.T) {
	for o, want := range map[Outcome]string{
		Written:    "DNSEndpoint site lists 2 proxied CNAME records for external-dns to publish",
		CRDMissing: "ExternalDNS mode, but the DNSEndpoint kind (DNSEndpoint.externaldns.k8s.io) is not installed: install external-dns's CRD; the hostnames are on the tunnel, and their records are not written",
		Conflict:   "DNSEndpoint site exists and is not this object's; it is left alone and no records are written",
	} {
		if got := Describe(o, "site", 2); got != want {
			t.Errorf("Describe(%s) = %q, want %q", o, got, want)
		}
	}
}
