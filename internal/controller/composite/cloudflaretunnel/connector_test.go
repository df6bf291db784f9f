package cloudflaretunnel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/connector"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func patchOf(t *testing.T, raw string) *v1alpha1.PodTemplatePatch {
	t.Helper()
	p, err := v1alpha1.NewPodTemplatePatch([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// editConnector changes the CloudflareTunnel's spec.connector, retrying
// conflicts with the controller's status writes.
func editConnector(t *testing.T, cr *v1alpha1.CloudflareTunnel, edit func(c *v1alpha1.ConnectorSpec)) error {
	t.Helper()
	var err error
	wait.Eventually(t, wait.Patience, "edit spec.connector", func() error {
		if gerr := p.Get(cr); gerr != nil {
			return gerr
		}
		if cr.Spec.Connector == nil {
			cr.Spec.Connector = &v1alpha1.ConnectorSpec{}
		}
		edit(cr.Spec.Connector)
		err = p.Client.Update(context.Background(), cr)
		if kerrors.IsConflict(err) {
			return err
		}
		return nil
	})
	return err
}

func cloudflaredOf(t *testing.T, dep *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name == "cloudflared" {
			return c
		}
	}
	t.Fatalf("no cloudflared container in %v", dep.Spec.Template.Spec.Containers)
	return corev1.Container{}
}

// TestConnectorCustomisation: spec.connector reaches the Deployment, patch
// included, and the pod still passes the restricted Pod Security Standard; a
// patch that would break the hardening is refused at admission, or (what
// CEL cannot see) by the controller, which leaves the running Deployment as
// it was; fields other writers set on the Deployment survive reconciles.
func TestConnectorCustomisation(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tuned"},
		Spec: v1alpha1.CloudflareTunnelSpec{
			TunnelName: ptr.To("tuned-" + ns),
			Replicas:   ptr.To[int32](1),
			Connector: &v1alpha1.ConnectorSpec{
				Protocol:                      ptr.To(v1alpha1.ConnectorProtocolHTTP2),
				ExtraArgs:                     []string{"--loglevel=debug", "--post-quantum", "--grace-period=50s"},
				TerminationGracePeriodSeconds: ptr.To[int64](60),
				TopologySpreadConstraints:     []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}},
				PodLabels:                     map[string]string{"team": "edge"},
				PodAnnotations:                map[string]string{"prometheus.io/scrape": "true"},
				PriorityClassName:             ptr.To("system-cluster-critical"),
				PodTemplatePatch: patchOf(t, `{"spec":{"dnsConfig":{"options":[{"name":"ndots","value":"1"}]},
					"containers":[{"name":"cloudflared","env":[{"name":"GOMAXPROCS","value":"2"}],"resources":{"limits":{"memory":"256Mi"}}}]}}`),
			},
		},
	}
	p.Create(t, cr)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tuned-cloudflared"}}
	wait.Eventually(t, wait.Patience, "cloudflared Deployment", func() error { return p.Get(dep) })

	t.Run("ThePatchIsStoredAsWritten", func(t *testing.T) {
		// The controller's own updates (the finalizer) write the whole
		// patch back, not only the fields admission checks.
		if err := p.Get(cr); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cr.Finalizers, "tunnels.cloudflare.com/cloudflaretunnel") || cr.Spec.Connector.PodTemplatePatch == nil ||
			!strings.Contains(string(cr.Spec.Connector.PodTemplatePatch.Raw), `"dnsConfig"`) || !strings.Contains(string(cr.Spec.Connector.PodTemplatePatch.Raw), `"GOMAXPROCS"`) {
			t.Errorf("finalizers %v, stored patch %s", cr.Finalizers, cr.Spec.Connector.PodTemplatePatch.Raw)
		}
	})

	t.Run("EveryFieldAndThePatchReachTheDeployment", func(t *testing.T) {
		pod := dep.Spec.Template
		c := cloudflaredOf(t, dep)
		wantArgs := append(connector.BaseArgs(), "--protocol", "http2", "--loglevel=debug", "--post-quantum", "--grace-period=50s")
		if !slices.Equal(c.Args, wantArgs) {
			t.Errorf("args %v, want %v", c.Args, wantArgs)
		}
		if c.Image != v1alpha1.DefaultCloudflaredImage || v1alpha1.DefaultCloudflaredImage != "cloudflare/cloudflared:2026.10.0" {
			t.Errorf("image %s, want the pinned default cloudflare/cloudflared:2026.10.0", c.Image)
		}
		if ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 0) != 60 || pod.Spec.PriorityClassName != "system-cluster-critical" {
			t.Errorf("terminationGracePeriodSeconds %v priorityClassName %q", pod.Spec.TerminationGracePeriodSeconds, pod.Spec.PriorityClassName)
		}
		if tsc := pod.Spec.TopologySpreadConstraints; len(tsc) != 1 || tsc[0].LabelSelector == nil || tsc[0].LabelSelector.MatchLabels["app.kubernetes.io/instance"] != "tuned" {
			t.Errorf("topology spread %+v, want the zone constraint over this tunnel's pods", tsc)
		}
		if pod.Labels["team"] != "edge" || pod.Labels["app.kubernetes.io/name"] != "cloudflared" || pod.Annotations["prometheus.io/scrape"] != "true" || pod.Annotations[cloudflaretunnel.AnnotationTokenHash] == "" {
			t.Errorf("pod metadata %+v", pod.ObjectMeta)
		}
		if pod.Spec.DNSConfig == nil || len(pod.Spec.DNSConfig.Options) != 1 || pod.Spec.DNSConfig.Options[0].Name != "ndots" {
			t.Errorf("dnsConfig %+v not patched in", pod.Spec.DNSConfig)
		}
		if c.Resources.Limits.Memory().String() != "256Mi" {
			t.Errorf("resources %+v not patched in", c.Resources)
		}
		var names []string
		for _, e := range c.Env {
			names = append(names, e.Name)
		}
		if slices.Sort(names); !slices.Equal(names, []string{"GOMAXPROCS", "TUNNEL_TOKEN"}) {
			t.Errorf("env %v, want the patch's GOMAXPROCS merged beside TUNNEL_TOKEN", names)
		}
		restricted := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-", Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest",
		}}}
		if err := p.Client.Create(ctx, restricted); err != nil {
			t.Fatal(err)
		}
		spec := *pod.Spec.DeepCopy()
		spec.PriorityClassName = "" // the priority admission plugin is not what is tested here
		if err := p.Client.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: restricted.Name, Name: "cloudflared"}, Spec: spec}, client.DryRunAll); err != nil {
			t.Errorf("the restricted Pod Security Standard rejects the patched cloudflared pod: %v", err)
		}
	})

	t.Run("OtherWritersFieldsSurviveReconciles", func(t *testing.T) {
		// A mutating webhook's (or kubectl's) annotation, and an
		// autoscaler-like writer's field the provider does not set.
		wait.Eventually(t, wait.Patience, "another writer's edit", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			patch := client.MergeFrom(dep.DeepCopy())
			metav1.SetMetaDataAnnotation(&dep.ObjectMeta, "webhook.example.com/injected", "yes")
			dep.Spec.RevisionHistoryLimit = ptr.To[int32](3)
			return p.Client.Patch(ctx, dep, patch, client.FieldOwner("mutating-webhook"))
		})
		if err := editConnector(t, cr, func(c *v1alpha1.ConnectorSpec) { c.PodLabels["tier"] = "1" }); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "the new pod label applied", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			if dep.Spec.Template.Labels["tier"] != "1" {
				return fmt.Errorf("pod labels %v", dep.Spec.Template.Labels)
			}
			return nil
		})
		if dep.Annotations["webhook.example.com/injected"] != "yes" || ptr.Deref(dep.Spec.RevisionHistoryLimit, 0) != 3 {
			t.Errorf("another writer's fields were taken away: annotations %v revisionHistoryLimit %v", dep.Annotations, dep.Spec.RevisionHistoryLimit)
		}
		managers := map[string]metav1.ManagedFieldsOperationType{}
		for _, m := range dep.ManagedFields {
			managers[m.Manager] = m.Operation
		}
		if managers[cloudflaretunnel.FieldOwner] != metav1.ManagedFieldsOperationApply || managers["mutating-webhook"] != metav1.ManagedFieldsOperationUpdate {
			t.Errorf("managers %v, want %s applying and mutating-webhook's update kept", managers, cloudflaretunnel.FieldOwner)
		}
	})

	t.Run("AdmissionRefusesWhatBreaksTheHardening", func(t *testing.T) {
		cases := map[string]struct {
			edit func(c *v1alpha1.ConnectorSpec)
			says string
		}{
			"Root": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"securityContext":{"runAsUser":0}}}`)
			}, "may not run the pod as root"},
			"PrivilegeEscalation": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"allowPrivilegeEscalation":true}}]}}`)
			}, "may not allow privilege escalation"},
			"Privileged": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"initContainers":[{"name":"x","securityContext":{"privileged":true}}]}}`)
			}, "may not make a container privileged"},
			"TokenInArgv": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","args":["tunnel","run","--token","eyJh"]}]}}`)
			}, "may not pass a token"},
			"TokenEnv": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"TUNNEL_TOKEN","value":"eyJh"}]}]}}`)
			}, "may not set TUNNEL_TOKEN"},
			"HostNetwork": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"hostNetwork":true}}`)
			}, "host's network"},
			"HostPath": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"volumes":[{"name":"h","hostPath":{"path":"/var/run"}}]}}`)
			}, "may not mount host paths"},
			"AddedCapability": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}]}}`)
			}, "may not add capabilities"},
			"SelectorLabelByPatch": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"metadata":{"labels":{"app.kubernetes.io/instance":"other"}}}`)
			}, "may not change the selector labels"},
			"TokenExtraArg":    {func(c *v1alpha1.ConnectorSpec) { c.ExtraArgs = []string{"--token=eyJh"} }, "extraArgs may not pass a token"},
			"UnlistedExtraArg": {func(c *v1alpha1.ConnectorSpec) { c.ExtraArgs = []string{"--metrics=0.0.0.0:9"} }, "extraArgs allows only"},
			"ProtocolExtraArg": {func(c *v1alpha1.ConnectorSpec) { c.ExtraArgs = []string{"--protocol=quic"} }, "spec.connector.protocol"},
			"UnknownProtocol":  {func(c *v1alpha1.ConnectorSpec) { c.Protocol = ptr.To(v1alpha1.ConnectorProtocol("h3")) }, "Unsupported value"},
			"SelectorPodLabel": {func(c *v1alpha1.ConnectorSpec) { c.PodLabels = map[string]string{"app.kubernetes.io/name": "x"} }, "podLabels may not set"},
			"ChecksumAnnotation": {func(c *v1alpha1.ConnectorSpec) {
				c.PodAnnotations = map[string]string{cloudflaretunnel.AnnotationTokenHash: "x"}
			}, "may not set tunnels.cloudflare.com/token-checksum"},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				err := editConnector(t, cr.DeepCopy(), tc.edit)
				if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("got %v, want an Invalid error saying %q", err, tc.says)
				}
			})
		}
		for _, arg := range []string{"--loglevel=warn", "--transport-loglevel=error", "--output=json", "--edge-ip-version=auto", "--edge-bind-address=10.1.2.3",
			"--region=us", "--retries=10", "--grace-period=1m", "--tag=env=prod", "--dns-resolver-addrs=10.96.0.10:53", "--post-quantum"} {
			probe := cr.DeepCopy()
			probe.ResourceVersion, probe.UID = "", ""
			probe.Name = "probe"
			probe.Spec.Connector = &v1alpha1.ConnectorSpec{ExtraArgs: []string{arg}}
			if err := p.Client.Create(ctx, probe, client.DryRunAll); err != nil {
				t.Errorf("the allowed extra argument %s was refused: %v", arg, err)
			}
		}
	})

	t.Run("TheControllerRefusesWhatAdmissionCannotSee", func(t *testing.T) {
		p.MarkDeploymentReady(t, dep)
		if err := p.Get(dep); err != nil {
			t.Fatal(err)
		}
		before := dep.DeepCopy()
		// Capabilities no longer dropped: only the patched template shows it.
		if err := editConnector(t, cr, func(c *v1alpha1.ConnectorSpec) {
			c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"capabilities":{"drop":["NET_RAW"]}}}]}}`)
		}); err != nil {
			t.Fatalf("admission refused a patch only the controller can judge: %v", err)
		}
		c := waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionFalse, connector.ReasonInvalidConnectorPatch)
		for _, want := range []string{"capabilities.drop must include ALL", "left as it was"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("DeploymentReady message %q does not say %q", c.Message, want)
			}
		}
		if r := cr.GetCondition(xpv2.TypeReady); r.Reason != connector.ReasonInvalidConnectorPatch {
			t.Errorf("Ready is %s/%s, want False/InvalidConnectorPatch", r.Status, r.Reason)
		}
		waitEventOn(t, ns, cr.Name, connector.ReasonInvalidConnectorPatch)
		if err := p.Get(dep); err != nil {
			t.Fatal(err)
		}
		if dep.Generation != before.Generation || dep.ResourceVersion != before.ResourceVersion {
			t.Errorf("the running Deployment was changed (generation %d → %d)", before.Generation, dep.Generation)
		}

		// Fixed, it is applied.
		if err := editConnector(t, cr, func(c *v1alpha1.ConnectorSpec) {
			c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"GOMAXPROCS","value":"4"}]}]}}`)
		}); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "the fixed patch applied", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			for _, e := range cloudflaredOf(t, dep).Env {
				if e.Name == "GOMAXPROCS" && e.Value == "4" {
					return nil
				}
			}
			return fmt.Errorf("env %v", cloudflaredOf(t, dep).Env)
		})
		if c := cloudflaredOf(t, dep); len(c.Resources.Limits) != 0 {
			t.Errorf("the memory limit of the earlier patch stayed after the patch dropped it: %v", c.Resources.Limits)
		}
		if dep.Spec.Template.Spec.DNSConfig != nil {
			t.Errorf("the dnsConfig of the earlier patch stayed after the patch dropped it: %+v", dep.Spec.Template.Spec.DNSConfig)
		}
		p.MarkDeploymentReady(t, dep)
		waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionTrue, cloudflaretunnel.ReasonReplicasReady)
	})

	t.Run("AHandEditThatBreaksTheHardeningIsTakenBack", func(t *testing.T) {
		evs := &corev1.EventList{}
		if err := p.Client.List(ctx, evs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			if e.Reason == cloudflaretunnel.ReasonConnectorTampered {
				t.Fatalf("a ConnectorTampered event before any tampering: %s", e.Message)
			}
		}
		wait.Eventually(t, wait.Patience, "a hand edit", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			dep.Spec.Template.Spec.HostNetwork = true
			dep.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
			return p.Client.Update(ctx, dep, client.FieldOwner("kubectl-edit"))
		})
		wait.Eventually(t, wait.Patience, "the hardening restored", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			if add := dep.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add; dep.Spec.Template.Spec.HostNetwork || len(add) > 0 {
				return fmt.Errorf("hostNetwork %v capabilities added %v", dep.Spec.Template.Spec.HostNetwork, add)
			}
			return nil
		})
		waitEventOn(t, ns, cr.Name, cloudflaretunnel.ReasonConnectorTampered)
		if dep.Annotations["webhook.example.com/injected"] != "yes" {
			t.Errorf("a writer that left the pod template alone lost its annotation: %v", dep.Annotations)
		}
	})
}

// TestAnOldCloudflaredIsRefused: an official image older than the first
// that resolves private hostname routes gets no Deployment, with the reason.
func TestAnOldCloudflaredIsRefused(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("old-" + ns), Replicas: ptr.To[int32](1), Image: ptr.To("cloudflare/cloudflared:2025.6.1")},
	}
	p.Create(t, cr)
	c := waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionFalse, connector.ReasonInvalidConnector)
	if !strings.Contains(c.Message, v1alpha1.MinimumCloudflaredVersion) || !strings.Contains(c.Message, "no cloudflared Deployment is created") {
		t.Errorf("DeploymentReady message %q", c.Message)
	}
	waitEventOn(t, ns, cr.Name, connector.ReasonInvalidConnector)
	if err := p.Get(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old-cloudflared"}}); !kerrors.IsNotFound(err) {
		t.Errorf("a Deployment exists for a refused image (%v)", err)
	}
}

// TestUpgradeFromAnUpdateWrittenDeployment: a Deployment that a previous
// version wrote with CreateOrUpdate (an Update manager owning every field,
// the controller reference to this CloudflareTunnel among them) is taken
// over by server-side apply: a field that version set and this one does
// not is removed, not left behind under the old manager, while another
// writer's annotation stays.
func TestUpgradeFromAnUpdateWrittenDeployment(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	// Refused, the controller writes no Deployment: the test writes it as
	// the previous version did.
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgraded"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("upgraded-" + ns), Replicas: ptr.To[int32](1), Image: ptr.To("cloudflare/cloudflared:2025.1.0")},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionFalse, connector.ReasonInvalidConnector)

	valid := cr.DeepCopy()
	valid.Spec.Image = nil
	old, err := cloudflaretunnel.DesiredDeployment(valid, []byte("token"))
	if err != nil {
		t.Fatal(err)
	}
	old.Spec.Template.Spec.NodeSelector = map[string]string{"legacy": "yes"}
	old.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.CloudflareTunnelKind, Name: cr.Name, UID: cr.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if err := p.Client.Create(ctx, old, client.FieldOwner("provider")); err != nil {
		t.Fatal(err)
	}
	annotate := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"webhook.example.com/injected":"yes"}}}`))
	if err := p.Client.Patch(ctx, old, annotate, client.FieldOwner("mutating-webhook")); err != nil {
		t.Fatal(err)
	}

	wait.Eventually(t, wait.Patience, "a valid image", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.Image = nil
		return p.Client.Update(ctx, cr)
	})
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgraded-cloudflared"}}
	wait.Eventually(t, wait.Patience, "the old version's field removed", func() error {
		if err := p.Get(dep); err != nil {
			return err
		}
		if len(dep.Spec.Template.Spec.NodeSelector) != 0 {
			return fmt.Errorf("nodeSelector %v", dep.Spec.Template.Spec.NodeSelector)
		}
		return nil
	})
	if dep.Annotations["webhook.example.com/injected"] != "yes" {
		t.Errorf("another writer's annotation was removed: %v", dep.Annotations)
	}
	for _, m := range dep.ManagedFields {
		if m.Manager == "provider" {
			t.Errorf("the previous version's manager still owns fields: %s", m.FieldsV1.Raw)
		}
	}
	if c := cloudflaredOf(t, dep); c.Image != v1alpha1.DefaultCloudflaredImage {
		t.Errorf("image %s", c.Image)
	}
}

func TestLegacyManagers(t *testing.T) {
	const uid = "ce3475c7-65a2-4c2f-95ba-5f4ac2750ae8"
	owned := func(uid string) *metav1.FieldsV1 {
		return &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:ownerReferences":{".":{},"k:{\"uid\":\"` + uid + `\"}":{}}},"f:spec":{"f:replicas":{}}}`)}
	}
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "provider", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: owned(uid)},
		{Manager: "cloudflaretunnel.test", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: owned(uid)},
		{Manager: cloudflaretunnel.FieldOwner, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: owned(uid)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:x":{}}}}`)}},
		{Manager: "other-controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: owned("another-uid")},
		{Manager: "status-writer", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: owned(uid)},
		{Manager: "garbage", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`[`)}},
		{Manager: "empty", Operation: metav1.ManagedFieldsOperationUpdate},
	}
	got := sets.List(cloudflaretunnel.LegacyManagers(entries, uid))
	if want := []string{"cloudflaretunnel.test", "provider"}; !slices.Equal(got, want) {
		t.Errorf("LegacyManagers = %v, want %v", got, want)
	}
}

func TestTemplateWriters(t *testing.T) {
	fields := func(raw string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(raw)} }
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:spec":{"f:template":{"f:spec":{"f:hostNetwork":{}}}}}`)},
		{Manager: cloudflaretunnel.FieldOwner, Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:spec":{"f:template":{}}}`)},
		{Manager: "mutating-webhook", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:metadata":{"f:annotations":{"f:x":{}}},"f:spec":{"f:revisionHistoryLimit":{}}}`)},
		{Manager: "someone-applying", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(`{"f:spec":{"f:template":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(`{"f:status":{}}`)},
	}
	if got := sets.List(cloudflaretunnel.TemplateWriters(entries)); !slices.Equal(got, []string{"kubectl-edit"}) {
		t.Errorf("TemplateWriters = %v, want [kubectl-edit]", got)
	}
}

// TestTheRunTokenReachesOnlyCloudflared: nothing in spec.connector can bring
// the run token onto a command line or into another container. $( in an
// extra argument, or in a patched argument, command or environment value,
// is refused at admission (Kubernetes would expand $(TUNNEL_TOKEN) from
// cloudflared's environment); a sidecar that reads the token Secret under
// another name, which admission cannot see (it does not know the Secret's
// name), is refused by the controller, and the running Deployment is left
// as it was.
func TestTheRunTokenReachesOnlyCloudflared(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("guarded-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded-cloudflared"}}
	wait.Eventually(t, wait.Patience, "cloudflared Deployment", func() error { return p.Get(dep) })
	p.MarkDeploymentReady(t, dep)
	waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionTrue, cloudflaretunnel.ReasonReplicasReady)

	t.Run("AdmissionRefusesExpansion", func(t *testing.T) {
		cases := map[string]struct {
			edit func(c *v1alpha1.ConnectorSpec)
			says string
		}{
			"ExtraArgTag":     {func(c *v1alpha1.ConnectorSpec) { c.ExtraArgs = []string{"--tag=leak=$(TUNNEL_TOKEN)"} }, "extraArgs may not contain $("},
			"ExtraArgEscaped": {func(c *v1alpha1.ConnectorSpec) { c.ExtraArgs = []string{"--tag=leak=$$(TUNNEL_TOKEN)"} }, "extraArgs may not contain $("},
			"PatchedEnvValue": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"LEAK","value":"$(TUNNEL_TOKEN)"}]}]}}`)
			}, "may not put $( in an environment value"},
			"PatchedInitArgs": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"initContainers":[{"name":"i","args":["$(TUNNEL_TOKEN)"]}]}}`)
			}, "may not put $( in arguments"},
			"PatchedCommand": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"s","command":["sh","-c","echo $(TUNNEL_TOKEN)"]}]}}`)
			}, "may not put $( in a command"},
			"PatchedSubPathExpr": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","volumeMounts":[{"name":"t","mountPath":"/t","subPathExpr":"$(TUNNEL_TOKEN)"}]}]}}`)
			}, "may not put $( in a subPathExpr"},
			"SharedProcesses": {func(c *v1alpha1.ConnectorSpec) {
				c.PodTemplatePatch = patchOf(t, `{"spec":{"shareProcessNamespace":true}}`)
			}, "may not share the process namespace"},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				err := editConnector(t, cr.DeepCopy(), tc.edit)
				if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("got %v, want an Invalid error saying %q", err, tc.says)
				}
			})
		}
		// A dollar without a parenthesis is no expansion.
		probe := cr.DeepCopy()
		probe.ResourceVersion, probe.UID, probe.Name = "", "", "probe"
		probe.Spec.Connector = &v1alpha1.ConnectorSpec{ExtraArgs: []string{"--tag=price=$5"}, PodTemplatePatch: patchOf(t, `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"HOME_DIR","value":"$HOME"}]}]}}`)}
		if err := p.Client.Create(context.Background(), probe, client.DryRunAll); err != nil {
			t.Errorf("a $ that expands nothing was refused: %v", err)
		}
	})

	t.Run("TheControllerRefusesASidecarReadingTheTokenSecret", func(t *testing.T) {
		if err := p.Get(dep); err != nil {
			t.Fatal(err)
		}
		before := dep.DeepCopy()
		sidecar := `{"name":"exfil","image":"busybox","securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}},` +
			`"env":[{"name":"NOT_A_TOKEN","valueFrom":{"secretKeyRef":{"name":"guarded-token","key":"token"}}}]}`
		if err := editConnector(t, cr, func(c *v1alpha1.ConnectorSpec) {
			c.PodTemplatePatch = patchOf(t, `{"spec":{"containers":[`+sidecar+`]}}`)
		}); err != nil {
			t.Fatalf("admission refused a patch only the controller can judge: %v", err)
		}
		c := waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionFalse, connector.ReasonInvalidConnectorPatch)
		for _, want := range []string{"give container exfil the token Secret guarded-token (environment variable NOT_A_TOKEN)", "only cloudflared may read it", "left as it was"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("DeploymentReady message %q does not say %q", c.Message, want)
			}
		}
		if r := cr.GetCondition(xpv2.TypeReady); r.Status != corev1.ConditionFalse || r.Reason != connector.ReasonInvalidConnectorPatch {
			t.Errorf("Ready is %s/%s, want False/InvalidConnectorPatch", r.Status, r.Reason)
		}
		waitEventOn(t, ns, cr.Name, connector.ReasonInvalidConnectorPatch)
		if err := p.Get(dep); err != nil {
			t.Fatal(err)
		}
		if dep.Generation != before.Generation || dep.ResourceVersion != before.ResourceVersion || len(dep.Spec.Template.Spec.Containers) != 1 {
			t.Errorf("the running Deployment was changed (generation %d → %d, %d containers)", before.Generation, dep.Generation, len(dep.Spec.Template.Spec.Containers))
		}
	})
}
