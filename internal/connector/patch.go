package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
)

// ContainerName is the cloudflared container's name in the pod template.
const ContainerName = "cloudflared"

// Patch applies a strategic-merge patch to the pod template, as kubectl
// patch --type=strategic would. A field the pod template does not have (a
// typo) is refused rather than silently dropped.
func Patch(base corev1.PodTemplateSpec, patch []byte) (corev1.PodTemplateSpec, error) {
	orig, err := json.Marshal(base)
	if err != nil {
		return corev1.PodTemplateSpec{}, invalidPatch("cannot encode the pod template: %v", err)
	}
	merged, err := strategicMerge(orig, patch)
	if err != nil {
		return corev1.PodTemplateSpec{}, invalidPatch("it is not a strategic-merge patch of a pod template: %v", err)
	}
	var out corev1.PodTemplateSpec
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return corev1.PodTemplateSpec{}, invalidPatch("the patched pod template is not a pod template: %v", err)
	}
	return out, nil
}

// strategicMerge is strategicpatch.StrategicMergePatch, with its panics on
// malformed patches (a merge key that is an object: {"containers":[{"name":{}}]})
// turned into errors: they come from user input.
func strategicMerge(orig, patch []byte) (merged []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			merged, err = nil, fmt.Errorf("malformed patch: %v", p)
		}
	}()
	return strategicpatch.StrategicMergePatch(orig, patch, corev1.PodTemplateSpec{})
}

// CheckHardening refuses a patched template that weakens the hardened base
// one, saying how, all of it at once (see Weakened).
func CheckHardening(base, patched *corev1.PodTemplateSpec, token []byte) error {
	if v := Weakened(base, patched, token); len(v) > 0 {
		return invalidPatch("the patched pod would %s", strings.Join(v, "; "))
	}
	return nil
}

// Weakened says how a pod template weakens the hardened base one (nothing
// when it does not): the pod passes the restricted Pod Security Standard,
// every container runs as non-root without privilege escalation or
// capabilities on a read-only root file system, no host namespace, port or
// path is used, no service account token is mounted, the selector labels
// and the token checksum stay, and the cloudflared container keeps its
// image and command line and gets the token only from the token Secret. The
// token must appear in no argument, command or literal environment value of
// any container, nor can it be brought there: no $( (Expansion) in any of
// them, and no container but cloudflared reads the token Secret, nor sees
// its processes. Each answer completes "the pod would ...".
func Weakened(base, pod *corev1.PodTemplateSpec, token []byte) []string {
	var v violations
	checkMetadata(&v, base, pod)
	checkPod(&v, &pod.Spec)
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		checkContainer(&v, &c, token)
		checkExpansion(&v, &c)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		v.add("have ephemeral container %s (a pod template may not)", c.Name)
	}
	checkCloudflared(&v, base, pod)
	checkTokenSecret(&v, tokenSecretName(base), &pod.Spec)
	return v
}

type violations []string

func (v *violations) add(format string, args ...any) { *v = append(*v, fmt.Sprintf(format, args...)) }

func checkMetadata(v *violations, base, patched *corev1.PodTemplateSpec) {
	for k, want := range base.Labels {
		if patched.Labels[k] != want && (k == "app.kubernetes.io/name" || k == "app.kubernetes.io/instance") {
			v.add("change the selector label %s", k)
		}
	}
	for k, want := range base.Annotations {
		if patched.Annotations[k] != want {
			v.add("change the annotation %s (it rolls the pods when the token changes)", k)
		}
	}
}

func checkPod(v *violations, p *corev1.PodSpec) {
	if p.HostNetwork || p.HostPID || p.HostIPC {
		v.add("use the host's network, PID or IPC namespace")
	}
	if ptr.Deref(p.ShareProcessNamespace, false) {
		v.add("share one process namespace between its containers (shareProcessNamespace): another container could read cloudflared's environment, which holds the run token")
	}
	if ptr.Deref(p.AutomountServiceAccountToken, true) {
		v.add("mount a service account token (automountServiceAccountToken must stay false)")
	}
	for _, vol := range p.Volumes {
		if vol.HostPath != nil {
			v.add("mount the host path %s (volume %s)", vol.HostPath.Path, vol.Name)
		}
	}
	sc := p.SecurityContext
	if sc == nil {
		v.add("have no pod security context (runAsNonRoot, a non-root runAsUser and the RuntimeDefault seccomp profile)")
		return
	}
	if !ptr.Deref(sc.RunAsNonRoot, false) {
		v.add("not require a non-root user (pod securityContext.runAsNonRoot must stay true)")
	}
	if sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		v.add("not run as a non-root user id (pod securityContext.runAsUser must be set and not 0)")
	}
	if !confinedSeccomp(sc.SeccompProfile, false) {
		v.add("not use the RuntimeDefault (or a Localhost) seccomp profile")
	}
	if sc.WindowsOptions != nil && ptr.Deref(sc.WindowsOptions.HostProcess, false) {
		v.add("run as a Windows host process")
	}
	if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
		v.add("run without AppArmor confinement")
	}
}

// confinedSeccomp: RuntimeDefault or Localhost; unset only where the pod's
// profile applies (a container's).
func confinedSeccomp(p *corev1.SeccompProfile, unsetOK bool) bool {
	if p == nil {
		return unsetOK
	}
	return p.Type == corev1.SeccompProfileTypeRuntimeDefault || p.Type == corev1.SeccompProfileTypeLocalhost
}

func checkContainer(v *violations, c *corev1.Container, token []byte) {
	sc := c.SecurityContext
	if sc == nil {
		v.add("run container %s without a security context (it needs allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities drop ALL)", c.Name)
	} else {
		if ptr.Deref(sc.Privileged, false) {
			v.add("run container %s privileged", c.Name)
		}
		if ptr.Deref(sc.AllowPrivilegeEscalation, true) {
			v.add("allow privilege escalation in container %s (allowPrivilegeEscalation must be false)", c.Name)
		}
		if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
			v.add("let container %s run as root (runAsNonRoot false)", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			v.add("run container %s as root (runAsUser 0)", c.Name)
		}
		if !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
			v.add("give container %s a writable root file system (readOnlyRootFilesystem must be true)", c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			v.add("keep capabilities in container %s (capabilities.drop must include ALL)", c.Name)
		} else if len(sc.Capabilities.Add) > 0 {
			v.add("add capabilities %v to container %s", sc.Capabilities.Add, c.Name)
		}
		if !confinedSeccomp(sc.SeccompProfile, true) {
			v.add("run container %s without the RuntimeDefault (or a Localhost) seccomp profile", c.Name)
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			v.add("unmask /proc in container %s", c.Name)
		}
		if sc.WindowsOptions != nil && ptr.Deref(sc.WindowsOptions.HostProcess, false) {
			v.add("run container %s as a Windows host process", c.Name)
		}
	}
	for _, p := range c.Ports {
		if p.HostPort != 0 {
			v.add("open host port %d for container %s", p.HostPort, c.Name)
		}
	}
	for _, a := range slices.Concat(c.Command, c.Args) {
		if tokenFlag(a) || (len(token) > 0 && strings.Contains(a, string(token))) {
			v.add("put a token or credentials on the command line of container %s", c.Name)
			break
		}
	}
	for _, e := range c.Env {
		if len(token) > 0 && strings.Contains(e.Value, string(token)) {
			v.add("put the token in the pod spec (environment variable %s of container %s)", e.Name, c.Name)
		}
	}
}

// checkExpansion: Kubernetes replaces $(VAR) in these fields with the
// container's variable VAR; in cloudflared's, $(TUNNEL_TOKEN) would put the
// run token on its command line (and, in a --tag, in what it reports to
// Cloudflare), or name a directory after it (subPathExpr).
func checkExpansion(v *violations, c *corev1.Container) {
	if slices.ContainsFunc(slices.Concat(c.Command, c.Args), expands) {
		v.add("let Kubernetes expand %s in the command line of container %s (it substitutes the container's environment, the run token included; %s is refused too)", Expansion, c.Name, "$"+Expansion)
	}
	for _, e := range c.Env {
		if expands(e.Value) {
			v.add("let Kubernetes expand %s in environment variable %s of container %s (it substitutes the container's environment, the run token included)", Expansion, e.Name, c.Name)
		}
	}
	for _, m := range c.VolumeMounts {
		if expands(m.SubPathExpr) {
			v.add("let Kubernetes expand %s in the subPathExpr of volume mount %s of container %s (it substitutes the container's environment, the run token included)", Expansion, m.Name, c.Name)
		}
	}
}

func expands(s string) bool { return strings.Contains(s, Expansion) }

// tokenSecretName is the Secret the base template gives cloudflared its
// token from ("" when it names none).
func tokenSecretName(base *corev1.PodTemplateSpec) string {
	c := container(base.Spec.Containers, ContainerName)
	if c == nil {
		return ""
	}
	if e := env(c.Env, "TUNNEL_TOKEN"); e != nil && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
		return e.ValueFrom.SecretKeyRef.Name
	}
	return ""
}

// checkTokenSecret: the token Secret reaches cloudflared only. Another
// container (a sidecar, an init container) may not read it under any name:
// by an environment variable, envFrom, or a mounted volume of it.
func checkTokenSecret(v *violations, secret string, p *corev1.PodSpec) {
	if secret == "" {
		return
	}
	volumes := tokenVolumes(p.Volumes, secret)
	for _, c := range slices.Concat(p.InitContainers, p.Containers) {
		if c.Name == ContainerName {
			continue
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secret {
				v.add("give container %s the token Secret %s (environment variable %s): only cloudflared may read it", c.Name, secret, e.Name)
			}
		}
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil && e.SecretRef.Name == secret {
				v.add("give container %s the token Secret %s (envFrom): only cloudflared may read it", c.Name, secret)
			}
		}
		for _, m := range c.VolumeMounts {
			if volumes[m.Name] {
				v.add("mount the token Secret %s into container %s (volume %s): only cloudflared may read it", secret, c.Name, m.Name)
			}
		}
	}
}

// tokenVolumes are the names of the volumes that hold the Secret, whole or
// projected.
func tokenVolumes(vols []corev1.Volume, secret string) map[string]bool {
	out := map[string]bool{}
	for _, vol := range vols {
		if vol.Secret != nil && vol.Secret.SecretName == secret {
			out[vol.Name] = true
		}
		if vol.Projected == nil {
			continue
		}
		for _, src := range vol.Projected.Sources {
			if src.Secret != nil && src.Secret.Name == secret {
				out[vol.Name] = true
			}
		}
	}
	return out
}

func tokenFlag(a string) bool {
	return strings.Contains(a, "--token") || strings.Contains(a, "--credentials") ||
		strings.HasPrefix(a, "-token") || strings.HasPrefix(a, "-credentials")
}

// checkCloudflared: the cloudflared container keeps what the provider
// decides for it. Its image (spec.image), command line (protocol and
// extraArgs) and TUNNEL_ configuration are not the patch's to change:
// cloudflared reads TUNNEL_* variables as flags, so they would bypass the
// flags' allow list.
func checkCloudflared(v *violations, base, patched *corev1.PodTemplateSpec) {
	want := container(base.Spec.Containers, ContainerName)
	got := container(patched.Spec.Containers, ContainerName)
	if want == nil {
		return
	}
	if got == nil {
		v.add("have no %s container", ContainerName)
		return
	}
	if got.Image != want.Image {
		v.add("run image %s instead of %s (set spec.image)", got.Image, want.Image)
	}
	if !slices.Equal(got.Command, want.Command) || !slices.Equal(got.Args, want.Args) {
		v.add("change cloudflared's command line (set spec.connector.protocol and spec.connector.extraArgs)")
	}
	if len(got.EnvFrom) > 0 {
		v.add("load cloudflared's environment from a ConfigMap or Secret (envFrom): it could set TUNNEL_ flags")
	}
	wantToken := env(want.Env, "TUNNEL_TOKEN")
	for _, e := range got.Env {
		switch {
		case e.Name == "TUNNEL_TOKEN" && wantToken != nil && !equality.Semantic.DeepEqual(e, *wantToken):
			v.add("take TUNNEL_TOKEN from elsewhere than the token Secret")
		case e.Name != "TUNNEL_TOKEN" && (strings.HasPrefix(e.Name, "TUNNEL_") || e.Name == "NO_AUTOUPDATE"):
			v.add("set %s in cloudflared's environment (cloudflared reads it as a flag: use spec.connector.extraArgs)", e.Name)
		}
	}
	if wantToken != nil && env(got.Env, "TUNNEL_TOKEN") == nil {
		v.add("not give cloudflared its token (TUNNEL_TOKEN from the token Secret)")
	}
}

func container(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func env(es []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range es {
		if es[i].Name == name {
			return &es[i]
		}
	}
	return nil
}
