package v1alpha1

import (
	"bytes"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// MinimumCloudflaredVersion is the oldest cloudflared that resolves private
// hostname routes (every Ingress and Service hostname gets one), as
// year.month.patch.
const MinimumCloudflaredVersion = "2025.7.0"

// ConnectorProtocol is how cloudflared connects to Cloudflare's edge.
// +kubebuilder:validation:Enum=auto;quic;http2
type ConnectorProtocol string

// Protocols cloudflared speaks to the edge.
const (
	// ConnectorProtocolAuto is QUIC, falling back to HTTP/2 when UDP is
	// blocked (cloudflared's default).
	ConnectorProtocolAuto ConnectorProtocol = "auto"
	// ConnectorProtocolQUIC is QUIC only.
	ConnectorProtocolQUIC ConnectorProtocol = "quic"
	// ConnectorProtocolHTTP2 is HTTP/2 over TCP, for networks that block
	// outbound UDP 7844.
	ConnectorProtocolHTTP2 ConnectorProtocol = "http2"
)

// ConnectorExtraArgPattern is what an extra cloudflared argument may be: one
// of the allowed flags, as --flag=value (or the bare boolean --post-quantum).
// Everything else is refused: the token and credentials (they come from the
// token Secret only), the configuration, certificate, metrics, log file and
// update flags this provider owns or that cannot work on a read-only root
// file system, and --protocol (spec.connector.protocol). No value may hold
// "$(": Kubernetes expands $(VAR) in a container's arguments from its
// environment, and cloudflared's holds the run token (TUNNEL_TOKEN); "$$(",
// Kubernetes' escape, is refused too: one rule, the same everywhere in the
// pod, that no reader has to parse escapes to check.
const ConnectorExtraArgPattern = `^(--post-quantum|--loglevel=(debug|info|warn|error|fatal)|--transport-loglevel=(debug|info|warn|error|fatal)|--output=(default|json)|--edge-ip-version=(auto|4|6)|--edge-bind-address=[0-9A-Fa-f.:]+|--region=us|--retries=[0-9]{1,3}|--grace-period=([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+|--tag=[A-Za-z0-9_.-]+=([^\s$]|\$+[^\s$(])*\$*|--dns-resolver-addrs=[0-9A-Fa-f.:\[\]]+:[0-9]{1,5})$`

// ConnectorSpec tunes the cloudflared Deployment beyond the fields at the
// top of the spec (replicas, image, nodeSelector, tolerations, affinity,
// resources). Nothing here can weaken its hardening: cloudflared runs as a
// non-root user without privilege escalation or capabilities, on a
// read-only root file system, and receives its token only from the token
// Secret through the environment.
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !self.podLabels.exists(k, k in ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/component'])",message="podLabels may not set app.kubernetes.io/name, instance, managed-by or component: the provider sets them (name and instance select the pods)"
// +kubebuilder:validation:XValidation:rule="!has(self.podAnnotations) || !('tunnels.cloudflare.com/token-checksum' in self.podAnnotations)",message="podAnnotations may not set tunnels.cloudflare.com/token-checksum: it rolls the pods when the token changes"
type ConnectorSpec struct {
	// Protocol cloudflared uses to reach Cloudflare's edge (--protocol):
	// auto (QUIC, falling back to HTTP/2), quic, or http2 (when the network
	// blocks outbound UDP). Unset leaves cloudflared's default, auto.
	// +optional
	Protocol *ConnectorProtocol `json:"protocol,omitempty"`

	// ExtraArgs are further cloudflared flags, each as --flag=value, from an
	// allow list: --loglevel, --transport-loglevel (debug, info, warn,
	// error, fatal), --output (default, json), --edge-ip-version (auto, 4,
	// 6), --edge-bind-address (an IP), --region=us, --retries (a number),
	// --grace-period (a duration such as 30s), --tag (KEY=VALUE),
	// --dns-resolver-addrs (IP:PORT), and the bare flag --post-quantum.
	// Anything else, and --token above all, is refused, as is "$(" in any
	// value (Kubernetes would expand $(TUNNEL_TOKEN) into the command line).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.startsWith('--token') && !a.startsWith('-token') && !a.startsWith('--credentials') && !a.startsWith('-credentials'))",message="extraArgs may not pass a token or credentials: cloudflared reads its token from the token Secret (TUNNEL_TOKEN), never from its command line"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.startsWith('--protocol'))",message="set the protocol with spec.connector.protocol, not extraArgs"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.contains('$('))",message="extraArgs may not contain $(: Kubernetes expands $(VAR) in arguments from cloudflared's environment, which holds the run token (TUNNEL_TOKEN); $$( is refused too"
	// +kubebuilder:validation:XValidation:rule=`self.all(a, a.matches(r'^(--post-quantum|--loglevel=(debug|info|warn|error|fatal)|--transport-loglevel=(debug|info|warn|error|fatal)|--output=(default|json)|--edge-ip-version=(auto|4|6)|--edge-bind-address=[0-9A-Fa-f.:]+|--region=us|--retries=[0-9]{1,3}|--grace-period=([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+|--tag=[A-Za-z0-9_.-]+=([^\s$]|\$+[^\s$(])*\$*|--dns-resolver-addrs=[0-9A-Fa-f.:\[\]]+:[0-9]{1,5})$'))`,message="extraArgs allows only --flag=value of --loglevel, --transport-loglevel, --output, --edge-ip-version, --edge-bind-address, --region=us, --retries, --grace-period, --tag, --dns-resolver-addrs, and --post-quantum"
	ExtraArgs []string `json:"extraArgs,omitempty"`

	// TerminationGracePeriodSeconds of the cloudflared pods (default 30).
	// cloudflared drains in-flight requests for its --grace-period (default
	// 30s) on SIGTERM; keep this longer than that.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// TopologySpreadConstraints of the cloudflared pods. A constraint
	// without a labelSelector spreads this tunnel's cloudflared pods.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PodLabels are added to the cloudflared pods (not to their selector).
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to the cloudflared pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// PriorityClassName of the cloudflared pods.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	PriorityClassName *string `json:"priorityClassName,omitempty"`

	// PodTemplatePatch is a strategic-merge patch (as kubectl patch
	// --type=strategic takes it) of the cloudflared pod template, applied
	// after every other field: containers and env merge by name, for
	// example. Any pod template field may be patched, but the result must
	// keep the hardening: refused at admission are a root user,
	// privileged containers, privilege escalation, added capabilities,
	// host namespaces or paths, a shared process namespace, a TUNNEL_TOKEN
	// other than the provider's, a token or credentials on a command line,
	// and "$(" in any argument, command, environment value or subPathExpr
	// (Kubernetes expands $(VAR) from the container's environment, the run
	// token's included); the rest is checked on the patched template (no
	// container but cloudflared may read the token Secret, by env, envFrom
	// or a volume), and a patch that fails is not applied (a Warning event
	// and condition say why; the running Deployment is left as it was).
	// +optional
	PodTemplatePatch *PodTemplatePatch `json:"podTemplatePatch,omitempty"`
}

// PodTemplatePatch is a strategic-merge patch of a pod template, kept as
// written: every field survives (x-kubernetes-preserve-unknown-fields), so
// any pod template field may be patched. The typed fields are the ones
// admission checks; they are a view of the patch, which is the JSON it was
// decoded from (Raw).
//
// Why not a corev1.PodTemplateSpec: its schema (hundreds of kilobytes) would
// make containers and their names required in every patch, drop the
// strategic-merge directives ($patch, $retainKeys), and marshal unset lists
// as null, which a strategic merge reads as "delete". Why not a bare
// runtime.RawExtension: admission could then check none of it.
// +kubebuilder:object:generate=false
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.metadata) || !has(self.metadata.labels) || !self.metadata.labels.exists(k, k in ['app.kubernetes.io/name', 'app.kubernetes.io/instance'])",message="podTemplatePatch may not change the selector labels app.kubernetes.io/name and app.kubernetes.io/instance"
type PodTemplatePatch struct {
	// Metadata of the pod template: labels and annotations.
	// +optional
	Metadata *PodTemplatePatchMetadata `json:"metadata,omitempty"`

	// Spec of the pod template.
	// +optional
	Spec *PodSpecPatch `json:"spec,omitempty"`

	// Raw is the patch as written.
	Raw []byte `json:"-"`
}

// PodTemplatePatchMetadata is what admission checks of a patch's metadata.
// +kubebuilder:pruning:PreserveUnknownFields
type PodTemplatePatchMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// PodSpecPatch is what admission checks of a patch's pod spec.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!(has(self.hostNetwork) && self.hostNetwork) && !(has(self.hostPID) && self.hostPID) && !(has(self.hostIPC) && self.hostIPC)",message="podTemplatePatch may not use the host's network, PID or IPC namespace"
// +kubebuilder:validation:XValidation:rule="!(has(self.automountServiceAccountToken) && self.automountServiceAccountToken)",message="podTemplatePatch may not mount a service account token: cloudflared needs no Kubernetes API access"
// +kubebuilder:validation:XValidation:rule="!has(self.volumes) || self.volumes.all(v, !has(v.hostPath))",message="podTemplatePatch may not mount host paths"
// +kubebuilder:validation:XValidation:rule="!(has(self.shareProcessNamespace) && self.shareProcessNamespace)",message="podTemplatePatch may not share the process namespace: another container could read cloudflared's environment, which holds the run token"
type PodSpecPatch struct {
	// +optional
	ShareProcessNamespace *bool `json:"shareProcessNamespace,omitempty"`
	// +optional
	HostNetwork *bool `json:"hostNetwork,omitempty"`
	// +optional
	HostPID *bool `json:"hostPID,omitempty"`
	// +optional
	HostIPC *bool `json:"hostIPC,omitempty"`
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// +optional
	SecurityContext *PodSecurityContextPatch `json:"securityContext,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Containers []ContainerPatch `json:"containers,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=16
	InitContainers []ContainerPatch `json:"initContainers,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Volumes []VolumePatch `json:"volumes,omitempty"`
}

// PodSecurityContextPatch is what admission checks of a patch's pod
// security context.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!(has(self.runAsUser) && self.runAsUser == 0)",message="podTemplatePatch may not run the pod as root (runAsUser 0)"
// +kubebuilder:validation:XValidation:rule="!(has(self.runAsNonRoot) && !self.runAsNonRoot)",message="podTemplatePatch may not set runAsNonRoot to false"
// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || !has(self.seccompProfile.type) || self.seccompProfile.type != 'Unconfined'",message="podTemplatePatch may not make the seccomp profile Unconfined"
type PodSecurityContextPatch struct {
	// +optional
	RunAsUser *int64 `json:"runAsUser,omitempty"`
	// +optional
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`
	// +optional
	SeccompProfile *SeccompProfilePatch `json:"seccompProfile,omitempty"`
}

// SeccompProfilePatch is what admission checks of a patch's seccomp
// profile.
// +kubebuilder:pruning:PreserveUnknownFields
type SeccompProfilePatch struct {
	// +optional
	Type *string `json:"type,omitempty"`
}

// ContainerPatch is what admission checks of a patch's container.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.args) || self.args.all(a, !a.contains('--token') && !a.contains('--credentials') && !a.startsWith('-token') && !a.startsWith('-credentials'))",message="podTemplatePatch may not pass a token or credentials as arguments: cloudflared reads its token from the token Secret (TUNNEL_TOKEN)"
// +kubebuilder:validation:XValidation:rule="!has(self.command) || self.command.all(a, !a.contains('--token') && !a.contains('--credentials') && !a.startsWith('-token') && !a.startsWith('-credentials'))",message="podTemplatePatch may not pass a token or credentials in a command: cloudflared reads its token from the token Secret (TUNNEL_TOKEN)"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.all(e, !has(e.name) || e.name != 'TUNNEL_TOKEN')",message="podTemplatePatch may not set TUNNEL_TOKEN: the provider sets it from the token Secret"
// +kubebuilder:validation:XValidation:rule="!has(self.args) || self.args.all(a, !a.contains('$('))",message="podTemplatePatch may not put $( in arguments: Kubernetes expands $(VAR) from the container's environment, and cloudflared's holds the run token; $$( is refused too"
// +kubebuilder:validation:XValidation:rule="!has(self.command) || self.command.all(a, !a.contains('$('))",message="podTemplatePatch may not put $( in a command: Kubernetes expands $(VAR) from the container's environment, and cloudflared's holds the run token; $$( is refused too"
type ContainerPatch struct {
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	Command []string `json:"command,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	Args []string `json:"args,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Env []EnvVarPatch `json:"env,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	VolumeMounts []VolumeMountPatch `json:"volumeMounts,omitempty"`
	// +optional
	SecurityContext *SecurityContextPatch `json:"securityContext,omitempty"`
}

// EnvVarPatch is what admission checks of a patch's environment variable.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.value) || !self.value.contains('$(')",message="podTemplatePatch may not put $( in an environment value: Kubernetes expands $(VAR) from the container's environment, and cloudflared's holds the run token; $$( is refused too"
type EnvVarPatch struct {
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Name string `json:"name,omitempty"`
	// Value of the variable: at most 4096 characters in a patch, which
	// keeps admission's check of every value within the API server's cost
	// budget; it may not hold "$(".
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value,omitempty"`
}

// VolumeMountPatch is what admission checks of a patch's volume mount.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.subPathExpr) || !self.subPathExpr.contains('$(')",message="podTemplatePatch may not put $( in a subPathExpr: Kubernetes expands $(VAR) from the container's environment, and cloudflared's holds the run token"
type VolumeMountPatch struct {
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	SubPathExpr string `json:"subPathExpr,omitempty"`
}

// SecurityContextPatch is what admission checks of a patch's container
// security context.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!(has(self.privileged) && self.privileged)",message="podTemplatePatch may not make a container privileged"
// +kubebuilder:validation:XValidation:rule="!(has(self.allowPrivilegeEscalation) && self.allowPrivilegeEscalation)",message="podTemplatePatch may not allow privilege escalation"
// +kubebuilder:validation:XValidation:rule="!(has(self.runAsUser) && self.runAsUser == 0)",message="podTemplatePatch may not run a container as root (runAsUser 0)"
// +kubebuilder:validation:XValidation:rule="!(has(self.runAsNonRoot) && !self.runAsNonRoot)",message="podTemplatePatch may not set runAsNonRoot to false"
// +kubebuilder:validation:XValidation:rule="!(has(self.readOnlyRootFilesystem) && !self.readOnlyRootFilesystem)",message="podTemplatePatch may not make the root file system writable"
// +kubebuilder:validation:XValidation:rule="!has(self.capabilities) || !has(self.capabilities.add) || size(self.capabilities.add) == 0",message="podTemplatePatch may not add capabilities"
// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || !has(self.seccompProfile.type) || self.seccompProfile.type != 'Unconfined'",message="podTemplatePatch may not make the seccomp profile Unconfined"
type SecurityContextPatch struct {
	// +optional
	Privileged *bool `json:"privileged,omitempty"`
	// +optional
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation,omitempty"`
	// +optional
	RunAsUser *int64 `json:"runAsUser,omitempty"`
	// +optional
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`
	// +optional
	ReadOnlyRootFilesystem *bool `json:"readOnlyRootFilesystem,omitempty"`
	// +optional
	Capabilities *CapabilitiesPatch `json:"capabilities,omitempty"`
	// +optional
	SeccompProfile *SeccompProfilePatch `json:"seccompProfile,omitempty"`
}

// CapabilitiesPatch is what admission checks of a patch's capabilities.
// +kubebuilder:pruning:PreserveUnknownFields
type CapabilitiesPatch struct {
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	Add []string `json:"add,omitempty"`
}

// VolumePatch is what admission checks of a patch's volume.
// +kubebuilder:pruning:PreserveUnknownFields
type VolumePatch struct {
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`
	// HostPath is refused; its presence is all admission looks at.
	// +optional
	HostPath *HostPathPatch `json:"hostPath,omitempty"`
}

// HostPathPatch stands for a hostPath volume source (refused).
// +kubebuilder:pruning:PreserveUnknownFields
type HostPathPatch struct {
	// +optional
	Path string `json:"path,omitempty"`
}

// podTemplatePatchView decodes the typed view without PodTemplatePatch's
// own UnmarshalJSON.
type podTemplatePatchView struct {
	Metadata *PodTemplatePatchMetadata `json:"metadata,omitempty"`
	Spec     *PodSpecPatch             `json:"spec,omitempty"`
}

// NewPodTemplatePatch is the patch of this JSON.
func NewPodTemplatePatch(raw []byte) (*PodTemplatePatch, error) {
	p := &PodTemplatePatch{}
	return p, p.UnmarshalJSON(raw)
}

// UnmarshalJSON keeps the whole patch in Raw and decodes the view.
func (p *PodTemplatePatch) UnmarshalJSON(b []byte) error {
	var v podTemplatePatchView
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.Metadata, p.Spec, p.Raw = v.Metadata, v.Spec, bytes.Clone(b)
	return nil
}

// MarshalJSON writes the patch as written; a patch made in Go without Raw
// is its view.
func (p PodTemplatePatch) MarshalJSON() ([]byte, error) {
	if p.Raw != nil {
		return p.Raw, nil
	}
	return json.Marshal(podTemplatePatchView{Metadata: p.Metadata, Spec: p.Spec})
}

// DeepCopyInto copies the patch and its view.
func (p *PodTemplatePatch) DeepCopyInto(out *PodTemplatePatch) {
	*out = PodTemplatePatch{Metadata: p.Metadata.DeepCopy(), Spec: p.Spec.DeepCopy(), Raw: bytes.Clone(p.Raw)}
}

// DeepCopy copies the patch.
func (p *PodTemplatePatch) DeepCopy() *PodTemplatePatch {
	if p == nil {
		return nil
	}
	out := new(PodTemplatePatch)
	p.DeepCopyInto(out)
	return out
}
