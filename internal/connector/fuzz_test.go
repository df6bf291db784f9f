package connector

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// FuzzPatchKeepsTheHardening: whatever the patch, what CheckHardening lets
// through runs non-root, unprivileged, off the host, with the token only
// from the Secret and nowhere in the pod spec; and nothing panics. The
// invariants are checked here independently of CheckHardening's code.
func FuzzPatchKeepsTheHardening(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"metadata":{"labels":{"team":"edge"}}}`,
		`{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"GOMAXPROCS","value":"2"}]}]}}`,
		`{"spec":{"containers":[` + hardenedSidecar + `]}}`,
		`{"spec":{"securityContext":{"runAsUser":0}}}`,
		`{"spec":{"containers":[{"name":"cloudflared","securityContext":{"$patch":"replace"}}]}}`,
		`{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"TUNNEL_TOKEN","$patch":"delete"}]}]}}`,
		`{"spec":{"$setElementOrder/containers":[{"name":"x"}],"containers":[{"name":"x","image":"y"}]}}`,
		`{"spec":{"initContainers":[{"name":"i","args":["` + testToken + `"]}]}}`,
		`{"spec":{"hostNetwork":true,"volumes":[{"name":"h","hostPath":{"path":"/"}}]}}`,
		`{"spec":{"containers":[{"name":"cloudflared","env":[{"name":"LEAK","value":"$(TUNNEL_TOKEN)"}]}]}}`,
		`{"spec":{"volumes":[{"name":"t","secret":{"secretName":"t-token"}}],"containers":[` + strings.Replace(hardenedSidecar, `"image"`, `"volumeMounts":[{"name":"t","mountPath":"/t"}],"image"`, 1) + `]}}`,
		`{"spec":{"shareProcessNamespace":true,"containers":[` + hardenedSidecar + `]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		base := hardened()
		got, err := Patch(base, patch)
		if err != nil {
			if Reason(err) != ReasonInvalidConnectorPatch {
				t.Fatalf("a patch failure without its reason: %v", err)
			}
			return
		}
		err = CheckHardening(&base, &got, []byte(testToken))
		if err != nil {
			if strings.Contains(err.Error(), testToken) {
				t.Fatal("a refusal repeats the token")
			}
			return
		}
		assertHardened(t, &got)
	})
}

func assertHardened(t *testing.T, p *corev1.PodTemplateSpec) {
	t.Helper()
	s := p.Spec
	if s.HostNetwork || s.HostPID || s.HostIPC || ptr.Deref(s.AutomountServiceAccountToken, true) {
		t.Fatalf("accepted a pod on the host or with a service account token: %+v", s)
	}
	if sc := s.SecurityContext; sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) == 0 {
		t.Fatalf("accepted a pod that may run as root: %+v", sc)
	}
	for _, v := range s.Volumes {
		if v.HostPath != nil {
			t.Fatalf("accepted a host path: %+v", v)
		}
	}
	raw, _ := json.Marshal(p)
	if strings.Contains(string(raw), testToken) {
		t.Fatal("accepted a pod spec holding the token")
	}
	var cloudflared int
	for _, c := range slices.Concat(s.InitContainers, s.Containers) {
		sc := c.SecurityContext
		if sc == nil || ptr.Deref(sc.Privileged, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) || ptr.Deref(sc.RunAsUser, 1) == 0 ||
			!ptr.Deref(sc.ReadOnlyRootFilesystem, false) || sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 {
			t.Fatalf("accepted container %s with security context %+v", c.Name, sc)
		}
		for _, a := range slices.Concat(c.Command, c.Args) {
			if strings.Contains(a, "--token") || strings.Contains(a, "$(") {
				t.Fatalf("accepted --token or $( on the command line of %s: %q", c.Name, a)
			}
		}
		for _, e := range c.Env {
			if strings.Contains(e.Value, "$(") {
				t.Fatalf("accepted $( in environment variable %s of %s", e.Name, c.Name)
			}
		}
		for _, m := range c.VolumeMounts {
			if strings.Contains(m.SubPathExpr, "$(") {
				t.Fatalf("accepted $( in a subPathExpr of %s", c.Name)
			}
		}
		if c.Name != ContainerName {
			assertNoTokenSecret(t, s, c)
			continue
		}
		cloudflared++
		if !slices.Equal(c.Args, BaseArgs()) || len(c.Command) != 0 {
			t.Fatalf("accepted cloudflared's command line changed: %v %v", c.Command, c.Args)
		}
		var tokens int
		for _, e := range c.Env {
			if e.Name == "TUNNEL_TOKEN" {
				tokens++
				if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "t-token" {
					t.Fatalf("accepted TUNNEL_TOKEN from elsewhere: %+v", e)
				}
			}
		}
		if tokens == 0 {
			t.Fatal("accepted cloudflared without its token")
		}
	}
	if cloudflared != 1 {
		t.Fatalf("accepted %d cloudflared containers", cloudflared)
	}
	if ptr.Deref(s.ShareProcessNamespace, false) {
		t.Fatal("accepted a shared process namespace")
	}
}

// assertNoTokenSecret: a container other than cloudflared has no way to the
// token Secret (t-token).
func assertNoTokenSecret(t *testing.T, s corev1.PodSpec, c corev1.Container) {
	t.Helper()
	raw, _ := json.Marshal(struct {
		Env     []corev1.EnvVar
		EnvFrom []corev1.EnvFromSource
	}{c.Env, c.EnvFrom})
	if strings.Contains(string(raw), `"t-token"`) {
		t.Fatalf("accepted container %s reading the token Secret: %s", c.Name, raw)
	}
	for _, m := range c.VolumeMounts {
		for _, v := range s.Volumes {
			vraw, _ := json.Marshal(v)
			if v.Name == m.Name && strings.Contains(string(vraw), `"t-token"`) {
				t.Fatalf("accepted the token Secret mounted into %s: %s", c.Name, vraw)
			}
		}
	}
}
