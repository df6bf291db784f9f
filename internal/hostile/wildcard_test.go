package hostile

// Issue 51: wildcard hostnames against names another namespace holds, and
// a namespace's own wildcard, which never keeps it from the names below.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func wildcardEntries() []entry {
	return []entry{
		{name: "AccessApplication/AWildcardOverAnotherNamespacesName", answer: custom, run: gatesAWildcardOverAName},
		{name: "AccessApplication/ANameUnderTheOwnWildcard", answer: custom, run: gatesUnderTheOwnWildcard},
		{name: "AccessApplication/DomainWithTwoWildcards", answer: rejected, want: []string{"spec.forProvider.domain", "should match"},
			obj: func(c *corpus) client.Object { return accessApp(c.ns, "two-wildcards", "*.*.example.com") }},
		{name: "Valid/AccessApplicationWildcardDomain", answer: valid,
			obj: func(c *corpus) client.Object { return accessApp(c.ns, "valid-wildcard", "*.Apps.example.com/admin") }},
	}
}

func accessApp(ns, name, domain string) *ztv1alpha1.AccessApplication {
	return &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: name, Domain: domain}},
	}
}

// madeRecordIn creates a DNS record of the corpus's kind in namespace ns
// and waits until it is made in Cloudflare.
func (c *corpus) madeRecordIn(t *testing.T, ns, name, recordName string) *dnsv1alpha1.DNSRecord {
	t.Helper()
	rec := c.record(name, recordName)
	rec.Namespace = ns
	p.Create(t, rec)
	wait.Eventually(t, 60*time.Second, "record "+recordName+" made", func() error {
		if err := p.Get(rec); err != nil {
			return err
		}
		if meta.GetExternalName(rec) == "" || rec.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return fmt.Errorf("not made: %+v", rec.GetCondition(xpv2.TypeSynced))
		}
		return nil
	})
	return rec
}

// gatesAWildcardOverAName: another namespace's made DNS record is
// grafana.wide-<ns>.example.com; an AccessApplication of the corpus
// namespace for *.wide-<ns>.example.com would gate that name too. It is
// refused NotAllowed, naming neither the name below nor its namespace, and
// never made.
func gatesAWildcardOverAName(t *testing.T, c *corpus) string {
	zone := "wide-" + c.bare + ".example.com"
	rec := c.madeRecordIn(t, c.bare, "below", "grafana."+zone)
	app := accessApp(c.ns, "over-a-name", "*."+zone)
	p.Create(t, app)
	cond := p.WaitSynced(t, app, "Synced=False NotAllowed", func(s xpv2.Condition) bool {
		return s.Status == corev1.ConditionFalse && s.Reason == common.ReasonNotAllowed
	})
	answer := "Synced=False NotAllowed: " + oneLine(cond.Message)
	if strings.Contains(cond.Message, "grafana.") || strings.Contains(cond.Message, c.bare+"/") {
		answer = c.knownBug(t, "the refusal names the other namespace's name or namespace: %s", cond.Message)
	}
	if ids := cloudflareApps(t, "*."+zone); len(ids) != 0 || meta.GetExternalName(app) != "" {
		answer = c.knownBug(t, "an Access application was made over another namespace's name: %v", ids)
	}
	p.DeleteAndWait(t, app)
	p.DeleteAndWait(t, rec)
	c.allowMade(zone)
	return answer
}

// gatesUnderTheOwnWildcard: the corpus namespace's own made DNS record is
// *.own-<ns>.example.com; its AccessApplication for a name below is made:
// a namespace's wildcard never keeps it from its own names.
func gatesUnderTheOwnWildcard(t *testing.T, c *corpus) string {
	zone := "own-" + c.bare + ".example.com"
	rec := c.madeRecordIn(t, c.ns, "own-wildcard", "*."+zone)
	app := accessApp(c.ns, "under-own", "grafana."+zone)
	p.Create(t, app)
	answer := "made"
	wait.Eventually(t, 60*time.Second, "the application made", func() error {
		if err := p.Get(app); err != nil {
			return err
		}
		if s := app.GetCondition(xpv2.TypeSynced); s.Status != corev1.ConditionTrue || meta.GetExternalName(app) == "" {
			return fmt.Errorf("not made: %s %s %s", s.Status, s.Reason, s.Message)
		}
		return nil
	})
	if ids := cloudflareApps(t, "grafana."+zone); len(ids) != 1 {
		answer = c.knownBug(t, "the application under the own wildcard is not in Cloudflare: %v", ids)
	}
	p.DeleteAndWait(t, app)
	p.DeleteAndWait(t, rec)
	c.allowMade(zone)
	return answer
}
