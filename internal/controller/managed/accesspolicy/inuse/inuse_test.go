// Package inuse_test runs the provider to show who keeps an AccessPolicy's
// deletion waiting: only applications that may use the policy and link it
// at Cloudflare, and its status names none of another namespace's.
package inuse_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func policy(ns, name string, shared *v1alpha1.AllowedNamespaces) *v1alpha1.AccessPolicy {
	return &v1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AccessPolicySpec{AllowedNamespaces: shared, ForProvider: v1alpha1.AccessPolicyParameters{
			Name: name + "-" + ns, Decision: "allow", Include: []v1alpha1.AccessRule{{EmailDomain: ptr.To("example.com")}},
		}},
	}
}

func application(ns, name string, pol v1alpha1.AccessApplicationPolicy) *v1alpha1.AccessApplication {
	return &v1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AccessApplicationSpec{ForProvider: v1alpha1.AccessApplicationParameters{
			Name: name + "-" + ns, Domain: name + "-" + ns + ".example.com", Policies: []v1alpha1.AccessApplicationPolicy{pol},
		}},
	}
}

func gone(t *testing.T, id string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "policy "+id+" deleted at Cloudflare", func() error {
		if _, err := p.Cloudflare.GetAccessPolicy(context.Background(), id); !cloudflare.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// An application of another namespace naming the policy by its raw ID (the
// issue named it by reference) is refused NotAllowed: it links nothing, so
// the policy's deletion does not wait for it, and nothing of it is named.
func TestARefusedApplicationDoesNotHoldAPolicy(t *testing.T) {
	owner, tenant := p.Namespace(t), p.Namespace(t)
	pol := policy(owner, "staff", nil)
	p.Create(t, pol)
	p.WaitReady(t, pol)
	id := pol.Status.AtProvider.ID

	wedge := application(tenant, "wedge", v1alpha1.AccessApplicationPolicy{PolicyID: ptr.To(id)})
	p.Create(t, wedge)
	p.WaitSynced(t, wedge, "the tenant's application refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNotAllowed
	})

	if err := p.Client.Delete(context.Background(), pol); err != nil {
		t.Fatal(err)
	}
	gone(t, id)
	p.DeleteAndWait(t, pol)
	p.DeleteAndWait(t, wedge)
}

// A policy shared with every namespace, linked by an application of its own
// namespace and one of another: its deletion waits for both, naming its own
// namespace's and only counting the other's; it goes once they do.
func TestASharedPolicyInUseNamesOnlyItsOwnNamespace(t *testing.T) {
	owner, tenant := p.Namespace(t), p.Namespace(t)
	pol := policy(owner, "staff", &v1alpha1.AllowedNamespaces{From: "All"})
	p.Create(t, pol)
	p.WaitReady(t, pol)
	id := pol.Status.AtProvider.ID
	ref := func(ns string) v1alpha1.AccessApplicationPolicy {
		return v1alpha1.AccessApplicationPolicy{PolicyIDRef: &xpv2.NamespacedReference{Namespace: ns, Name: "staff"}}
	}
	own, theirs := application(owner, "grafana", ref("")), application(tenant, "secret-project", ref(owner))
	p.Create(t, own)
	p.Create(t, theirs)
	p.WaitReady(t, own)
	p.WaitReady(t, theirs)

	if err := p.Client.Delete(context.Background(), pol); err != nil {
		t.Fatal(err)
	}
	c := p.WaitSynced(t, pol, "the deletion waiting", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonPolicyInUse && strings.Contains(c.Message, "AccessApplication "+owner+"/grafana")
	})
	if !strings.Contains(c.Message, "1 AccessApplication(s) of other namespaces") || strings.Contains(c.Message, tenant) || strings.Contains(c.Message, "secret-project") {
		t.Errorf("PolicyInUse says %q: want the own namespace's application named and the other's counted, not named", c.Message)
	}
	p.DeleteAndWait(t, own)
	p.WaitSynced(t, pol, "still waiting for the other namespace's", func(c xpv2.Condition) bool {
		return c.Reason == common.ReasonPolicyInUse && !strings.Contains(c.Message, "grafana") && strings.Contains(c.Message, "1 AccessApplication(s) of other namespaces")
	})
	if _, err := p.Cloudflare.GetAccessPolicy(context.Background(), id); err != nil {
		t.Fatalf("the policy in use is gone: %v", err)
	}
	p.DeleteAndWait(t, theirs)
	gone(t, id)
	p.DeleteAndWait(t, pol)
}
