package cloudflaretunnel

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/connector"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Names and keys of the objects a CloudflareTunnel owns.
const (
	TokenKey            = "token"
	AnnotationTokenHash = "tunnels.cloudflare.com/token-checksum"
	metricsPort         = 2000
)

// TokenSecretName is the Secret the Tunnel MR publishes the run token to.
func TokenSecretName(cr *v1alpha1.CloudflareTunnel) string { return cr.Name + "-token" }

// DeploymentName is the cloudflared Deployment's name.
func DeploymentName(cr *v1alpha1.CloudflareTunnel) string { return cr.Name + "-cloudflared" }

// ProviderConfigName is the ProviderConfig managed for credentialsSecretRef.
func ProviderConfigName(cr *v1alpha1.CloudflareTunnel) string { return cr.Name + "-credentials" }

// TunnelName is the Cloudflare-side name.
func TunnelName(cr *v1alpha1.CloudflareTunnel) string {
	return ptr.Deref(cr.Spec.TunnelName, cr.Name)
}

// Replicas is the desired cloudflared replica count.
func Replicas(cr *v1alpha1.CloudflareTunnel) int32 { return ptr.Deref(cr.Spec.Replicas, 2) }

// TokenChecksum fingerprints the token for the pod template, so a rotated
// token rolls the pods without the token itself appearing anywhere.
func TokenChecksum(token []byte) string {
	sum := sha256.Sum256(token)
	return hex.EncodeToString(sum[:])
}

func selectorLabels(cr *v1alpha1.CloudflareTunnel) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "cloudflared",
		"app.kubernetes.io/instance": cr.Name,
	}
}

func labels(cr *v1alpha1.CloudflareTunnel) map[string]string {
	l := selectorLabels(cr)
	l["app.kubernetes.io/managed-by"] = "provider-cloudflare-tunnel"
	l["app.kubernetes.io/component"] = "tunnel-connector"
	return l
}

// DesiredDeployment is the hardened cloudflared Deployment for cr: the token
// comes from the Secret through TUNNEL_TOKEN (never argv), the pod passes
// the restricted Pod Security Standard, and the CA Secrets the published
// hostnames' rules name are mounted read-only where the rules say. Then
// spec.connector tunes it, its pod template patch last; a connector the
// provider refuses (a *connector.Error) yields no Deployment.
func DesiredDeployment(cr *v1alpha1.CloudflareTunnel, token []byte, caPools ...v1alpha1.LocalSecretKeySelector) (*appsv1.Deployment, error) {
	image := ptr.Deref(cr.Spec.Image, v1alpha1.DefaultCloudflaredImage)
	if err := connector.CheckImage(image); err != nil {
		return nil, err
	}
	args, err := connector.Args(cr.Spec.Connector)
	if err != nil {
		return nil, err
	}
	if err := connector.CheckPodMetadata(cr.Spec.Connector); err != nil {
		return nil, err
	}
	dep := hardenedDeployment(cr, image, args, TokenChecksum(token), caPools)
	c := cr.Spec.Connector
	if c == nil || c.PodTemplatePatch == nil || len(c.PodTemplatePatch.Raw) == 0 {
		return dep, nil
	}
	patched, err := connector.Patch(dep.Spec.Template, c.PodTemplatePatch.Raw)
	if err != nil {
		return nil, err
	}
	if err := connector.CheckHardening(&dep.Spec.Template, &patched, token); err != nil {
		return nil, err
	}
	dep.Spec.Template = patched
	return dep, nil
}

// hardenedDeployment is the Deployment before the pod template patch.
func hardenedDeployment(cr *v1alpha1.CloudflareTunnel, image string, args []string, tokenChecksum string, caPools []v1alpha1.LocalSecretKeySelector) *appsv1.Deployment {
	volumes, mounts := caPoolVolumes(caPools)
	probe := func(failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(metricsPort)}},
			PeriodSeconds:    10,
			FailureThreshold: failures,
		}
	}
	affinity := cr.Spec.Affinity
	if affinity == nil {
		// Spread replicas over nodes so one node's loss keeps the tunnel up.
		affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{
					TopologyKey:   "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: selectorLabels(cr)},
				},
			}},
		}}
	}
	var resources corev1.ResourceRequirements
	if cr.Spec.Resources != nil {
		resources = *cr.Spec.Resources
	}
	c := ptr.Deref(cr.Spec.Connector, v1alpha1.ConnectorSpec{})
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: DeploymentName(cr), Labels: labels(cr)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(Replicas(cr)),
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(cr)},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				// Bring a new connector up before taking an old one down.
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					// Ours last: admission refuses user keys among them.
					Labels:      merged(c.PodLabels, labels(cr)),
					Annotations: merged(c.PodAnnotations, map[string]string{AnnotationTokenHash: tokenChecksum}),
				},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](65532),
						RunAsGroup:     ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					NodeSelector:                  cr.Spec.NodeSelector,
					Tolerations:                   cr.Spec.Tolerations,
					Affinity:                      affinity,
					TopologySpreadConstraints:     spreadConstraints(cr, c.TopologySpreadConstraints),
					PriorityClassName:             ptr.Deref(c.PriorityClassName, ""),
					TerminationGracePeriodSeconds: ptr.To(ptr.Deref(c.TerminationGracePeriodSeconds, 30)),
					Volumes:                       volumes,
					Containers: []corev1.Container{{
						VolumeMounts: mounts,
						Name:         connector.ContainerName,
						Image:        image,
						Args:         args,
						Env: []corev1.EnvVar{{
							Name: "TUNNEL_TOKEN",
							ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
								LocalObjectReference: corev1.LocalObjectReference{Name: TokenSecretName(cr)},
								Key:                  TokenKey,
							}},
						}},
						Ports:          []corev1.ContainerPort{{Name: "metrics", ContainerPort: metricsPort, Protocol: corev1.ProtocolTCP}},
						ReadinessProbe: probe(3),
						LivenessProbe:  probe(6),
						Resources:      resources,
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot:             ptr.To(true),
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
				},
			},
		},
	}
}

// merged is a copy of base with over's entries on top; nil when empty.
func merged(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}

// spreadConstraints: one without a labelSelector spreads this tunnel's
// cloudflared pods (what a user almost always means).
func spreadConstraints(cr *v1alpha1.CloudflareTunnel, cs []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
	out := make([]corev1.TopologySpreadConstraint, 0, len(cs))
	for _, c := range cs {
		c = *c.DeepCopy()
		if c.LabelSelector == nil {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: selectorLabels(cr)}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// caPoolVolumes mounts each CA Secret at publish.CAPoolDir/<secret>, with
// only the keys the rules name. A Secret that is missing keeps new pods from
// starting while the old ones serve (the rollout never takes a connector
// down first), rather than starting cloudflared without the CA its rules
// verify origins against.
func caPoolVolumes(pools []v1alpha1.LocalSecretKeySelector) ([]corev1.Volume, []corev1.VolumeMount) {
	keys := map[string][]string{}
	var names []string
	for _, p := range pools {
		if _, ok := keys[p.Name]; !ok {
			names = append(names, p.Name)
		}
		if !slices.Contains(keys[p.Name], p.Key) {
			keys[p.Name] = append(keys[p.Name], p.Key)
		}
	}
	slices.Sort(names)
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, name := range names {
		sum := sha256.Sum256([]byte(name))
		vol := "ca-" + hex.EncodeToString(sum[:])[:12]
		ks := keys[name]
		slices.Sort(ks)
		items := make([]corev1.KeyToPath, 0, len(ks))
		for _, k := range ks {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
		volumes = append(volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, Items: items, DefaultMode: ptr.To[int32](0o444), Optional: ptr.To(false),
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: vol, MountPath: publish.CAPoolDir + "/" + name, ReadOnly: true})
	}
	return volumes, mounts
}

// DesiredPDB keeps at least one connector up through voluntary
// disruptions; nil when there is a single replica (a PDB would block node
// drains forever).
func DesiredPDB(cr *v1alpha1.CloudflareTunnel) *policyv1.PodDisruptionBudget {
	if Replicas(cr) <= 1 {
		return nil
	}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: DeploymentName(cr), Labels: labels(cr)},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: selectorLabels(cr)},
		},
	}
}
