package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestProviderPermissionsBySelfSubjectAccessReview asks the API server, as
// the provider (its ServiceAccount token, the identity it runs with here),
// what it may do: everything its controllers need and nothing beyond.
func TestProviderPermissionsBySelfSubjectAccessReview(t *testing.T) {
	ctx := context.Background()
	type access struct {
		verb, group, resource, sub, namespace, name string
	}
	may := []access{
		{verb: "watch", group: "networking.k8s.io", resource: "ingresses"},
		{verb: "update", group: "networking.k8s.io", resource: "ingresses", sub: "status", namespace: "team-a"},
		{verb: "patch", group: "networking.k8s.io", resource: "ingresses", namespace: "team-a"},
		{verb: "patch", group: "networking.k8s.io", resource: "ingresses", sub: "status", namespace: "team-a"},
		{verb: "update", group: "networking.k8s.io", resource: "ingresses", sub: "finalizers", namespace: "team-a"},
		{verb: "list", group: "networking.k8s.io", resource: "ingressclasses"},
		{verb: "get", resource: "services", namespace: "team-a"},
		{verb: "create", resource: "secrets", namespace: "team-a"},
		{verb: "get", resource: "secrets", namespace: providerNamespace, name: "cloudflare-credentials"},
		{verb: "create", resource: "events", namespace: "team-a"},
		{verb: "create", group: "apps", resource: "deployments", namespace: "team-a"},
		{verb: "patch", group: "apps", resource: "deployments", namespace: "team-a"}, // server-side apply
		{verb: "update", group: "policy", resource: "poddisruptionbudgets", namespace: "team-a"},
		{verb: "patch", group: "policy", resource: "poddisruptionbudgets", namespace: "team-a"},
		{verb: "delete", group: "zerotrust.tunnels.cloudflare.com", resource: "hostnameroutes", namespace: "team-a"},
		{verb: "delete", group: "zerotrust.tunnels.cloudflare.com", resource: "networkroutes", namespace: "team-a"},
		{verb: "update", group: "zerotrust.tunnels.cloudflare.com", resource: "virtualnetworks", namespace: "team-a"},
		{verb: "watch", resource: "services"},
		{verb: "watch", group: "discovery.k8s.io", resource: "endpointslices"},
		{verb: "update", group: "dns.tunnels.cloudflare.com", resource: "dnsrecords", sub: "status", namespace: "team-a"},
		{verb: "update", group: "tunnels.cloudflare.com", resource: "cloudflaretunnels", sub: "status", namespace: "team-a"},
		// A Gateway of class cloudflare is a CloudflareTunnel made for it.
		{verb: "create", group: "tunnels.cloudflare.com", resource: "cloudflaretunnels", namespace: "team-a"},
		{verb: "update", group: "gateway.networking.k8s.io", resource: "gateways", sub: "status", namespace: "team-a"},
		// Its settings are GatewayParameters, read and never written.
		{verb: "watch", group: "tunnels.cloudflare.com", resource: "gatewayparameters"},
		// The reference resolver applies a policy's resolved service-token
		// and group IDs by patch.
		{verb: "patch", group: "zerotrust.tunnels.cloudflare.com", resource: "accesspolicies", namespace: "team-a"},
		{verb: "delete", group: "tunnels.cloudflare.com", resource: "publichostnames", namespace: "team-a"},
		{verb: "patch", group: "tunnels.cloudflare.com", resource: "publichostnames", sub: "status", namespace: "team-a"},
		// Composites name their children in spec.crossplane.resourceRefs
		// (what crossplane resource trace walks), by patch.
		{verb: "patch", group: "tunnels.cloudflare.com", resource: "publichostnames", namespace: "team-a"},
		{verb: "list", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
		{verb: "get", resource: "namespaces", name: "kube-system"},
		// Namespaces' labels decide who may use a shared tunnel.
		{verb: "list", resource: "namespaces"},
		{verb: "watch", resource: "namespaces"},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: providerNamespace},
	}
	mayNot := []access{
		{verb: "create", resource: "pods", namespace: "team-a"},
		{verb: "create", resource: "pods", sub: "exec", namespace: "team-a"},
		{verb: "get", resource: "configmaps", namespace: "kube-system"},
		{verb: "delete", resource: "namespaces", name: "team-a"},
		{verb: "update", resource: "namespaces", name: "team-a"},
		{verb: "patch", resource: "namespaces", name: "team-a"},
		{verb: "create", resource: "namespaces"},
		{verb: "list", resource: "nodes"},
		{verb: "create", resource: "serviceaccounts", sub: "token", namespace: providerNamespace, name: providerSA},
		{verb: "deletecollection", resource: "secrets", namespace: "team-a"},
		{verb: "delete", resource: "services", namespace: "team-a"},
		// Services routed privately carry no finalizer of ours.
		{verb: "update", resource: "services", namespace: "team-a"},
		{verb: "patch", resource: "services", namespace: "team-a"},
		// VirtualNetworks are made and deleted only by users.
		{verb: "create", group: "zerotrust.tunnels.cloudflare.com", resource: "virtualnetworks", namespace: "team-a"},
		{verb: "delete", group: "zerotrust.tunnels.cloudflare.com", resource: "virtualnetworks", namespace: "team-a"},
		{verb: "create", group: "networking.k8s.io", resource: "ingresses", namespace: "team-a"},
		{verb: "delete", group: "networking.k8s.io", resource: "ingresses", namespace: "team-a"},
		// Routes are users': only their status.parents entries are ours.
		{verb: "update", group: "gateway.networking.k8s.io", resource: "httproutes", namespace: "team-a"},
		{verb: "update", group: "tunnels.cloudflare.com", resource: "gatewayparameters", namespace: "team-a"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "impersonate", resource: "users"},
		{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system", name: "kube-controller-manager"},
		{verb: "*", group: "*", resource: "*"},
	}
	review := func(a access) (bool, string) {
		r, err := env.saClientset.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub, Namespace: a.namespace, Name: a.name,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectAccessReview: %v", err)
		}
		return r.Status.Allowed, r.Status.Reason
	}
	for _, a := range may {
		if ok, reason := review(a); !ok {
			t.Errorf("the provider may not %+v, which it needs (%s)", a, reason)
		}
	}
	for _, a := range mayNot {
		if ok, reason := review(a); ok {
			t.Errorf("the provider may %+v, which it must not (%s)", a, reason)
		}
	}
	// And it knows who it is: the review above was really made as the
	// ServiceAccount, not as the admin.
	self, err := env.saClientset.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "system:serviceaccount:" + providerNamespace + ":" + providerSA; self.Status.UserInfo.Username != want {
		t.Errorf("reviews were made as %q, want %q", self.Status.UserInfo.Username, want)
	}
}

// TestPodsPassRestrictedPodSecurity runs the provider's own Deployment
// (cluster/install/deployment.yaml) and a CloudflareTunnel's cloudflared in
// namespaces that enforce the restricted Pod Security Standard: the API
// server's admission would refuse their pods otherwise.
func TestPodsPassRestrictedPodSecurity(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "pss")

	// The provider's Deployment, moved into the restricted namespace.
	b, err := os.ReadFile(filepath.Join(env.root, "cluster", "install", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.kube.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: providerSA}}); err != nil {
		t.Fatal(err)
	}
	env.applyYAML(t, strings.ReplaceAll(string(b), "namespace: "+providerNamespace, "namespace: "+ns))

	if err := env.kube.Create(ctx, &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-pss"), Replicas: ptr.To[int32](2)},
	}); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 2*time.Minute, "the provider's pod and 2 cloudflared pods admitted and running", func() error {
		pods := &corev1.PodList{}
		if err := env.kube.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		provider, cloudflared := 0, 0
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				continue
			}
			switch {
			case p.Labels["app.kubernetes.io/name"] == "provider-cloudflare-tunnel":
				provider++
			case strings.HasPrefix(p.Name, "edge-cloudflared-"):
				cloudflared++
			}
		}
		if provider != 1 || cloudflared != 2 {
			// Say why: admission refusals show up as FailedCreate events.
			evs := &corev1.EventList{}
			_ = env.kube.List(ctx, evs, client.InNamespace(ns))
			var why []string
			for _, e := range evs.Items {
				if e.Reason == "FailedCreate" {
					why = append(why, e.Message)
				}
			}
			return fmt.Errorf("running: %d provider pods, %d cloudflared pods; FailedCreate: %v", provider, cloudflared, why)
		}
		return nil
	})
	// The Deployment's status (and the condition made from it) follows the
	// pods by a moment.
	cft := &v1alpha1.CloudflareTunnel{}
	wait.Eventually(t, 30*time.Second, "DeploymentReady", func() error {
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
			return err
		}
		if c := cft.GetCondition("DeploymentReady"); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("DeploymentReady: %s %s", c.Reason, c.Message)
		}
		return nil
	})
	// A pod that does not pass is refused by the same namespace: the check is on.
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "privileged"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
	}}}}
	if err := env.kube.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "restricted") {
		t.Errorf("a privileged pod in the restricted namespace: %v, want refused", err)
	}
	if err := env.kube.Delete(ctx, cft); err != nil {
		t.Fatal(err)
	}
	// Two minutes: a tunnel deleted within the creation grace period (mr.DefaultCreationGracePeriod, 30 s)
	// of its creation is confirmed gone only after crossplane-runtime's
	// backoff passes that period, up to a minute later.
	wait.Eventually(t, 2*time.Minute, "the CloudflareTunnel gone", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cft), cft); err == nil {
			return fmt.Errorf("still there: %v", cft.GetCondition(xpv2.TypeReady).Message)
		}
		return nil
	})
}

// secretsNeverLeak runs after every test (TestMain), whatever their order:
// every API token and tunnel run token the suite used must appear nowhere in
// the provider's log (written at debug level), in any Event, in the status
// of any object, or in any process's command line. It returns what it
// found, and logs where it looked.
func secretsNeverLeak() (failures []string) {
	ctx := context.Background()
	errorf := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }
	runTokens, clientSecrets := env.sim.RunTokens(), env.sim.ClientSecrets()
	secrets := append(append([]string{env.token}, runTokens...), clientSecrets...)
	if len(secrets) < 3 {
		if subset := flag.Lookup("test.run").Value.String(); subset != "" {
			// A test chosen with -run may make no tunnel in the shared
			// cluster (the upgrade test brings its own): nothing to look for.
			fmt.Printf("secrets never leak: -run %q made no tunnel in the shared cluster; nothing to look for\n", subset)
			return nil
		}
		return []string{fmt.Sprintf("only %d secrets to look for; the suite made no tunnels?", len(secrets))}
	}
	var places []place

	logBytes, err := os.ReadFile(env.provider.Log)
	if err != nil {
		return []string{err.Error()}
	}
	if !strings.Contains(string(logBytes), `"level":"debug"`) && !strings.Contains(string(logBytes), "DEBUG") {
		errorf("the provider's log has no debug lines: the check would not cover debug logging")
	}
	places = append(places, place{"provider log (debug)", string(logBytes)})

	events := &corev1.EventList{}
	if err := env.kube.List(ctx, events); err != nil {
		return []string{err.Error()}
	}
	var ev strings.Builder
	for _, e := range events.Items {
		fmt.Fprintf(&ev, "%s %s\n", e.Reason, e.Message)
	}
	places = append(places, place{fmt.Sprintf("%d events", len(events.Items)), ev.String()})

	// The status of every object of every kind the provider writes.
	for _, gvk := range []string{
		"tunnels.cloudflare.com/v1alpha1/CloudflareTunnelList", "tunnels.cloudflare.com/v1alpha1/PublicHostnameList", "tunnels.cloudflare.com/v1alpha1/ClusterProviderConfigList",
		"tunnels.cloudflare.com/v1alpha1/ProviderConfigList", "zerotrust.tunnels.cloudflare.com/v1alpha1/TunnelList",
		"zerotrust.tunnels.cloudflare.com/v1alpha1/HostnameRouteList", "connectivity.tunnels.cloudflare.com/v1alpha1/VPCServiceList",
		"dns.tunnels.cloudflare.com/v1alpha1/DNSRecordList", "networking.k8s.io/v1/IngressList", "apps/v1/DeploymentList",
		"zerotrust.tunnels.cloudflare.com/v1alpha1/AccessServiceTokenList", "zerotrust.tunnels.cloudflare.com/v1alpha1/AccessPolicyList",
		"zerotrust.tunnels.cloudflare.com/v1alpha1/AccessApplicationList",
	} {
		parts := strings.Split(gvk, "/")
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(strings.Join(parts[:len(parts)-1], "/"))
		l.SetKind(parts[len(parts)-1])
		if err := env.kube.List(ctx, l); err != nil {
			return append(failures, fmt.Sprintf("list %s: %v", gvk, err))
		}
		var sb strings.Builder
		for _, o := range l.Items {
			fmt.Fprintf(&sb, "%v\n%v\n", o.Object["status"], o.GetAnnotations())
		}
		places = append(places, place{gvk + " status and annotations", sb.String()})
	}

	// Every process's command line (the provider's included).
	var cmdlines strings.Builder
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil {
			cmdlines.Write(b)
			cmdlines.WriteByte('\n')
		}
	}
	if pid := env.provider.pid(); pid != 0 && !strings.Contains(cmdlines.String(), env.provider.Bin) {
		errorf("the provider's command line (pid %d) was not among those read", pid)
	}
	places = append(places, place{fmt.Sprintf("%d process command lines", len(procs)), cmdlines.String()})

	for _, p := range places {
		for i, s := range secrets {
			if strings.Contains(p.text, s) {
				what := "tunnel run token"
				switch {
				case i == 0:
					what = "the Cloudflare API token"
				case i > len(runTokens):
					what = "an Access service token's client secret"
				}
				errorf("%s found in %s", what, p.name)
			}
		}
	}
	fmt.Printf("secrets never leak: looked for %d secrets (1 API token, %d tunnel run tokens, %d service-token client secrets) in: %s", len(secrets), len(runTokens), len(clientSecrets), placeNames(places))
	return failures
}

// place is where a secret must not appear, and what it holds.
type place struct{ name, text string }

func placeNames(ps []place) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.name)
	}
	return strings.Join(names, "; ")
}
