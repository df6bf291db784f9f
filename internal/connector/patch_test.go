package connector

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const testToken = "eyJhIjoiYWNjb3VudCIsInQiOiJ0dW5uZWwiLCJzIjoic2VjcmV0In0="

// hardened is a template shaped as the controller's DesiredDeployment makes
// it (the controller's tests check that one against Pod Security admission).
func hardened() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app.kubernetes.io/name": "cloudflared", "app.kubernetes.io/instance": "t", "app.kubernetes.io/managed-by": "provider-cloudflare-tunnel"},
			Annotations: map[string]string{"tunnels.cloudflare.com/token-checksum": "abc"},
		},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:  ContainerName,
				Image: "cloudflare/cloudflared:2026.10.0",
				Args:  BaseArgs(),
				Env: []corev1.EnvVar{{Name: "TUNNEL_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "t-token"}, Key: "token",
				}}}},
				Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 2000}},
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}},
		},
	}
}

const hardenedSidecar = `{"name":"sidecar","image":"busybox","securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}}}`

func TestPatchKeepsTheHardening(t *testing.T) {
	cases := map[string]struct {
		patch string
		// refused: what the refusal must say; "" when the patch is applied.
		refused string
		check   func(t *testing.T, got corev1.PodTemplateSpec)
	}{
		"LabelsAndAnnotationsMerge": {
			patch: `{"metadata":{"labels":{"team":"edge"},"annotations":{"prometheus.io/scrape":"true"}}}`,
			check: func(t *testing.T, got corev1.PodTemplateSpec) {
				if got.Labels["team"] != "edge" || got.Labels["app.kubernetes.io/name"] != "cloudflared" || got.Annotations["prometheus.io/scrape"] != "true" || got.Annotations["tunnels.cloudflare.com/token-checksum"] != "abc" {
					t.Errorf("metadata %+v", got.ObjectMeta)
				}
			},
		},
		"EnvMergesByNameKeepingTheToken": {
			patch: `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"GOMAXPROCS","value":"2"}]}]}}`,
			check: func(t *testing.T, got corev1.PodTemplateSpec) {
				env := got.Spec.Containers[0].Env
				if len(env) != 2 || env[0].Name != "GOMAXPROCS" && env[1].Name != "GOMAXPROCS" {
					t.Errorf("env %+v", env)
				}
			},
		},
		"ResourcesAndDNSConfig": {
			patch: `{"spec":{"dnsConfig":{"options":[{"name":"ndots","value":"1"}]},"containers":[{"name":"cloudflared","resources":{"limits":{"memory":"256Mi"}}}]}}`,
			check: func(t *testing.T, got corev1.PodTemplateSpec) {
				if got.Spec.DNSConfig == nil || got.Spec.DNSConfig.Options[0].Name != "ndots" || got.Spec.Containers[0].Resources.Limits.Memory().String() != "256Mi" {
					t.Errorf("spec %+v", got.Spec)
				}
			},
		},
		"AHardenedSidecar": {
			patch: `{"spec":{"containers":[` + hardenedSidecar + `]}}`,
			check: func(t *testing.T, got corev1.PodTemplateSpec) {
				if len(got.Spec.Containers) != 2 {
					t.Errorf("%d containers", len(got.Spec.Containers))
				}
			},
		},
		"AnEmptyDirVolume": {
			patch: `{"spec":{"volumes":[{"name":"tmp","emptyDir":{}}],"containers":[{"name":"cloudflared","volumeMounts":[{"name":"tmp","mountPath":"/tmp"}]}]}}`,
		},
		"ASidecarWithItsOwnSecret": {
			patch: `{"spec":{"volumes":[{"name":"c","secret":{"secretName":"other"}}],"containers":[` +
				strings.Replace(hardenedSidecar, `"image"`, `"env":[{"name":"K","valueFrom":{"secretKeyRef":{"name":"other","key":"k"}}},{"name":"P","value":"$HOME and $5"}],"volumeMounts":[{"name":"c","mountPath":"/c"}],"image"`, 1) + `]}}`,
		},
		"ALocalhostSeccompProfile": {
			patch: `{"spec":{"securityContext":{"seccompProfile":{"type":"Localhost","localhostProfile":"cloudflared.json"}}}}`,
		},
		"RunAsRoot":               {patch: `{"spec":{"securityContext":{"runAsUser":0}}}`, refused: "runAsUser must be set and not 0"},
		"ContainerRunAsRoot":      {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"runAsUser":0}}]}}`, refused: "run container cloudflared as root"},
		"RunAsNonRootFalse":       {patch: `{"spec":{"securityContext":{"runAsNonRoot":false}}}`, refused: "runAsNonRoot must stay true"},
		"PodSecurityContextGone":  {patch: `{"spec":{"securityContext":null}}`, refused: "no pod security context"},
		"RunAsUserDeleted":        {patch: `{"spec":{"securityContext":{"runAsUser":null}}}`, refused: "runAsUser must be set"},
		"PrivilegeEscalation":     {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"allowPrivilegeEscalation":true}}]}}`, refused: "allow privilege escalation"},
		"Privileged":              {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"privileged":true}}]}}`, refused: "privileged"},
		"SecurityContextReplaced": {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"$patch":"replace","runAsNonRoot":true}}]}}`, refused: "allowPrivilegeEscalation must be false"},
		"AddedCapability":         {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}]}}`, refused: "add capabilities"},
		"DropAllRemoved":          {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"capabilities":{"drop":["NET_RAW"]}}}]}}`, refused: "drop must include ALL"},
		"WritableRoot":            {patch: `{"spec":{"containers":[{"name":"cloudflared","securityContext":{"readOnlyRootFilesystem":false}}]}}`, refused: "writable root file system"},
		"Unconfined":              {patch: `{"spec":{"securityContext":{"seccompProfile":{"type":"Unconfined"}}}}`, refused: "seccomp"},
		"HostNetwork":             {patch: `{"spec":{"hostNetwork":true}}`, refused: "host's network"},
		"HostPath":                {patch: `{"spec":{"volumes":[{"name":"root","hostPath":{"path":"/"}}]}}`, refused: "host path /"},
		"HostPort":                {patch: `{"spec":{"containers":[{"name":"cloudflared","ports":[{"containerPort":2000,"hostPort":2000}]}]}}`, refused: "host port 2000"},
		"ServiceAccountToken":     {patch: `{"spec":{"automountServiceAccountToken":true}}`, refused: "service account token"},
		"UnhardenedSidecar":       {patch: `{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}`, refused: "container sidecar without a security context"},
		"RootInitContainer": {
			patch:   `{"spec":{"initContainers":[{"name":"init","image":"busybox","securityContext":{"runAsUser":0,"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}}}]}}`,
			refused: "run container init as root",
		},
		"TokenFlag":                 {patch: `{"spec":{"containers":[{"name":"cloudflared","args":["tunnel","run","--token","x"]}]}}`, refused: "token or credentials on the command line"},
		"TokenInACommand":           {patch: `{"spec":{"containers":[{"name":"cloudflared","command":["sh","-c","cloudflared tunnel run --token=$T"]}]}}`, refused: "token or credentials on the command line"},
		"TokenValueInArgs":          {patch: `{"spec":{"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"args":["`+testToken+`"],"image"`, 1) + `]}}`, refused: "command line of container sidecar"},
		"TokenValueInEnv":           {patch: `{"spec":{"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"env":[{"name":"T","value":"`+testToken+`"}],"image"`, 1) + `]}}`, refused: "token in the pod spec"},
		"ExpansionInCloudflaredEnv": {patch: `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"LEAK","value":"$(TUNNEL_TOKEN)"}]}]}}`, refused: "expand $( in environment variable LEAK of container cloudflared"},
		"ExpansionInASidecarArg":    {patch: `{"spec":{"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"args":["--x=$(TUNNEL_TOKEN)"],"image"`, 1) + `]}}`, refused: "expand $( in the command line of container sidecar"},
		"EscapedExpansion":          {patch: `{"spec":{"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"command":["echo","$$(TUNNEL_TOKEN)"],"image"`, 1) + `]}}`, refused: "expand $( in the command line of container sidecar"},
		"ExpansionInAnInitContainer": {
			patch:   `{"spec":{"initContainers":[` + strings.Replace(hardenedSidecar, `"image"`, `"env":[{"name":"X","value":"a$(B)"}],"image"`, 1) + `]}}`,
			refused: "expand $( in environment variable X of container sidecar",
		},
		"ExpansionInASubPathExpr": {
			patch:   `{"spec":{"volumes":[{"name":"tmp","emptyDir":{}}],"containers":[{"name":"cloudflared","volumeMounts":[{"name":"tmp","mountPath":"/tmp","subPathExpr":"$(TUNNEL_TOKEN)"}]}]}}`,
			refused: "subPathExpr of volume mount tmp of container cloudflared",
		},
		"SidecarReadsTheTokenSecret": {
			patch:   `{"spec":{"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"env":[{"name":"NOT_A_TOKEN","valueFrom":{"secretKeyRef":{"name":"t-token","key":"token"}}}],"image"`, 1) + `]}}`,
			refused: "give container sidecar the token Secret t-token (environment variable NOT_A_TOKEN)",
		},
		"SidecarLoadsTheTokenSecret": {
			patch:   `{"spec":{"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"envFrom":[{"secretRef":{"name":"t-token"}}],"image"`, 1) + `]}}`,
			refused: "give container sidecar the token Secret t-token (envFrom)",
		},
		"SidecarMountsTheTokenSecret": {
			patch:   `{"spec":{"volumes":[{"name":"creds","secret":{"secretName":"t-token"}}],"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"volumeMounts":[{"name":"creds","mountPath":"/creds"}],"image"`, 1) + `]}}`,
			refused: "mount the token Secret t-token into container sidecar (volume creds)",
		},
		"InitContainerMountsTheTokenSecretProjected": {
			patch:   `{"spec":{"volumes":[{"name":"p","projected":{"sources":[{"secret":{"name":"t-token"}}]}}],"initContainers":[` + strings.Replace(hardenedSidecar, `"image"`, `"volumeMounts":[{"name":"p","mountPath":"/p"}],"image"`, 1) + `]}}`,
			refused: "mount the token Secret t-token into container sidecar (volume p)",
		},
		"SharedProcessNamespace": {patch: `{"spec":{"shareProcessNamespace":true,"containers":[` + hardenedSidecar + `]}}`, refused: "shareProcessNamespace"},
		"TokenFromElsewhere":     {patch: `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"TUNNEL_TOKEN","value":"x"}]}]}}`, refused: "TUNNEL_TOKEN from elsewhere"},
		"TokenDeleted":           {patch: `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"TUNNEL_TOKEN","$patch":"delete"}]}]}}`, refused: "not give cloudflared its token"},
		"TunnelFlagsByEnv":       {patch: `{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"TUNNEL_METRICS","value":"0.0.0.0:9"}]}]}}`, refused: "set TUNNEL_METRICS"},
		"EnvFrom":                {patch: `{"spec":{"containers":[{"name":"cloudflared","envFrom":[{"configMapRef":{"name":"x"}}]}]}}`, refused: "envFrom"},
		"OtherArgs":              {patch: `{"spec":{"containers":[{"name":"cloudflared","args":["tunnel","--metrics","0.0.0.0:9","run"]}]}}`, refused: "command line"},
		"OtherImage":             {patch: `{"spec":{"containers":[{"name":"cloudflared","image":"evil/cloudflared"}]}}`, refused: "set spec.image"},
		"CloudflaredRemoved":     {patch: `{"spec":{"containers":[{"name":"cloudflared","$patch":"delete"}]}}`, refused: "have no cloudflared container"},
		"SelectorLabel":          {patch: `{"metadata":{"labels":{"app.kubernetes.io/instance":"other"}}}`, refused: "selector label app.kubernetes.io/instance"},
		"ChecksumAnnotation":     {patch: `{"metadata":{"annotations":{"tunnels.cloudflare.com/token-checksum":null}}}`, refused: "tunnels.cloudflare.com/token-checksum"},
		"ATypo":                  {patch: `{"spec":{"dnsConfg":{}}}`, refused: "dnsConfg"},
		"NotJSON":                {patch: `{"spec":`, refused: "not a strategic-merge patch"},
		"NotAnObject":            {patch: `["spec"]`, refused: "not a strategic-merge patch"},
		"EveryViolationAtOnce": {
			patch:   `{"spec":{"hostPID":true,"containers":[{"name":"cloudflared","securityContext":{"privileged":true}}]}}`,
			refused: "host's network, PID or IPC namespace; run container cloudflared privileged",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := hardened()
			got, err := Patch(base, []byte(tc.patch))
			if err == nil {
				err = CheckHardening(&base, &got, []byte(testToken))
			}
			if tc.refused != "" {
				if Reason(err) != ReasonInvalidConnectorPatch || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("got %v, want an InvalidConnectorPatch refusal saying %q", err, tc.refused)
				}
				if !strings.HasPrefix(err.Error(), "spec.connector.podTemplatePatch is not applied") {
					t.Errorf("%q does not name the field", err)
				}
				if strings.Contains(err.Error(), testToken) {
					t.Error("the refusal repeats the token")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestTheHardenedTemplatePasses(t *testing.T) {
	base := hardened()
	if err := CheckHardening(&base, &base, []byte(testToken)); err != nil {
		t.Fatal(err)
	}
	// An empty patch changes nothing.
	got, err := Patch(base, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckHardening(&base, &got, []byte(testToken)); err != nil {
		t.Fatal(err)
	}
}
