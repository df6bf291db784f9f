package service_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// exposedObjects are what was made for the Service called svc by name (its
// private hostname routes and PublicHostnames), labelled or not.
func exposedObjects(t *testing.T, ns, svc string) []client.Object {
	t.Helper()
	routes, phs := &ztv1alpha1.HostnameRouteList{}, &v1alpha1.PublicHostnameList{}
	var out []client.Object
	for _, l := range []client.ObjectList{routes, phs} {
		if err := p.Client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range routes.Items {
		out = append(out, &routes.Items[i])
	}
	for i := range phs.Items {
		out = append(out, &phs.Items[i])
	}
	var mine []client.Object
	for _, o := range out {
		if c := metav1.GetControllerOf(o); c != nil && c.Kind == "Service" && c.Name == svc {
			mine = append(mine, o)
		}
	}
	return mine
}

// holdDeletions refuses, until the test ends or release is called, every
// deletion of hostname routes and PublicHostnames in ns: what the provider
// wants to release stays.
func holdDeletions(t *testing.T, ns string) (release func()) {
	t.Helper()
	name := "hold-deletions-" + ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule: admissionv1.Rule{
						APIGroups: []string{ztv1alpha1.Group, v1alpha1.Group}, APIVersions: []string{"*"},
						Resources: []string{"hostnameroutes", "publichostnames"},
					},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "held by the test"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}
	p.Create(t, policy)
	p.Create(t, binding)
	release = func() {
		for _, o := range []client.Object{binding, policy} {
			if err := p.Client.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

// A Service deleted and recreated under the same name (a new UID) never
// takes over what was made for the old one: the old one's objects are
// released, and the new one's made anew, never shared.
//
// The provider may see the Service gone between the two (it then releases
// the old objects at once) or not (it was down meanwhile, or both fell in
// one reconcile). To be in the second case every time, deletions are held
// while the Service is deleted and recreated: the old objects are still
// there when the provider first sees the new Service.
func TestARecreatedServiceDoesNotTakeOverTheOldOnesObjects(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "app-" + ns + ".example.com"
	ann := annotations(v1alpha1.AnnotationHostname, host, v1alpha1.AnnotationPublic, "true")
	svc := exposedService(ns, "app", ann, corev1.ServicePort{Name: "web", Port: 8080})
	p.Create(t, svc)
	target := tunnelID + ".cfargotunnel.com"
	var oldRecord, oldRoute string
	wait.Eventually(t, wait.Patience, "published", func() error {
		recs, rts := p.Records(t, host), p.HostnameRoutes(t, host)
		if len(recs) != 1 || recs[0].Content != target || len(rts) != 1 {
			return fmt.Errorf("%d records, %d hostname routes", len(recs), len(rts))
		}
		oldRecord, oldRoute = recs[0].ID, rts[0].ID
		return nil
	})
	old := exposedObjects(t, ns, "app")
	if len(old) != 2 {
		t.Fatalf("%d objects made for the Service, want a hostname route and a PublicHostname", len(old))
	}
	oldUIDs := map[types.UID]bool{}
	for _, o := range old {
		oldUIDs[o.GetUID()] = true
	}

	release := holdDeletions(t, ns)
	wait.Eventually(t, wait.Patience, "deletions held", func() error {
		err := p.Client.Delete(context.Background(), old[0], client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "held by the test") {
			return fmt.Errorf("a deletion is not refused yet: %v", err)
		}
		return nil
	})
	if err := p.Client.Delete(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	again := exposedService(ns, "app", ann, corev1.ServicePort{Name: "web", Port: 8080})
	p.Create(t, again)
	if again.UID == svc.UID {
		t.Fatal("the recreated Service has the old one's UID")
	}
	// The provider has seen the new Service with the old objects still
	// there once it tried to delete the old PublicHostname: the Service's
	// absence releases the hostname route first (kind order) and stops at
	// its refusal, while the new Service's first desired object is its
	// PublicHostname, whose name the old one holds.
	oldPH := phPath(t, old)
	wait.Eventually(t, wait.Patience, "the provider met the new Service beside the old objects", func() error {
		if p.Requests(http.MethodDelete, oldPH) == 0 {
			return fmt.Errorf("no deletion of %s tried yet", oldPH)
		}
		return nil
	})
	release()

	wait.Eventually(t, wait.Patience, "the new Service's own objects, and only those", func() error {
		objs := exposedObjects(t, ns, "app")
		if len(objs) != 2 {
			return fmt.Errorf("%d objects made for a Service app", len(objs))
		}
		for _, o := range objs {
			if oldUIDs[o.GetUID()] {
				return fmt.Errorf("%T %s is the old Service's still", o, o.GetName())
			}
			if c := metav1.GetControllerOf(o); c.UID != again.UID {
				return fmt.Errorf("%T %s is controlled by %s, not the new Service %s", o, o.GetName(), c.UID, again.UID)
			}
		}
		return nil
	})
	wait.Eventually(t, wait.Patience, "published anew, once", func() error {
		recs, rts := p.Records(t, host), p.HostnameRoutes(t, host)
		if len(recs) != 1 || recs[0].Content != target || len(rts) != 1 {
			return fmt.Errorf("%d records, %d hostname routes", len(recs), len(rts))
		}
		if recs[0].ID == oldRecord || rts[0].ID == oldRoute {
			return fmt.Errorf("the old Service's Cloudflare objects are still there (record %s, route %s)", recs[0].ID, rts[0].ID)
		}
		return nil
	})
}

// phPath is the API path of the PublicHostname among objs.
func phPath(t *testing.T, objs []client.Object) string {
	t.Helper()
	for _, o := range objs {
		if ph, ok := o.(*v1alpha1.PublicHostname); ok {
			return fmt.Sprintf("/apis/%s/%s/namespaces/%s/publichostnames/%s", v1alpha1.Group, v1alpha1.Version, ph.Namespace, ph.Name)
		}
	}
	t.Fatal("no PublicHostname among the objects made for the Service")
	return ""
}
