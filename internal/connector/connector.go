// Package connector decides the cloudflared pod of a CloudflareTunnel from
// its spec.connector: the command line from the protocol and the allowed
// extra flags, the image's version check, and the pod template patch with
// the hardening check of what it produces. Pure functions: the controller
// builds the hardened template, this package tunes and checks it.
package connector

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// An Error is a spec.connector field the provider refuses: its reason
// becomes the condition's.
type Error struct {
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Reasons of the Errors.
const (
	ReasonInvalidConnector      = "InvalidConnector"
	ReasonInvalidConnectorPatch = "InvalidConnectorPatch"
)

func invalid(format string, args ...any) error {
	return &Error{Reason: ReasonInvalidConnector, Message: fmt.Sprintf(format, args...)}
}

func invalidPatch(format string, args ...any) error {
	return &Error{Reason: ReasonInvalidConnectorPatch, Message: "spec.connector.podTemplatePatch is not applied: " + fmt.Sprintf(format, args...)}
}

// BaseArgs are the arguments every cloudflared runs with: no self-update
// (the image is the version), and the metrics and readiness endpoint the
// probes use.
func BaseArgs() []string {
	return []string{"tunnel", "--no-autoupdate", "--metrics", "0.0.0.0:2000", "run"}
}

var extraArg = regexp.MustCompile(v1alpha1.ConnectorExtraArgPattern)

// Expansion starts what Kubernetes replaces in a container's command,
// arguments, environment values and subPathExpr: $(VAR) becomes the value of
// the container's variable VAR, and cloudflared's environment holds the run
// token. It is refused everywhere in the pod, its escape $$( included: $$(
// would be harmless, but a rule without exceptions is the same at
// admission (CEL's contains) and here, and no reader has to count dollars
// ($$$(VAR) expands) to check it. Nothing the pod needs is written with it.
const Expansion = "$("

// Args are cloudflared's arguments: the base ones, then --protocol, then the
// extra flags (after run: the run command takes every tunnel flag, and some,
// such as --post-quantum, only there). The token is never among them: it
// comes from the environment (TUNNEL_TOKEN).
func Args(c *v1alpha1.ConnectorSpec) ([]string, error) {
	args := BaseArgs()
	if c == nil {
		return args, nil
	}
	if c.Protocol != nil {
		switch p := *c.Protocol; p {
		case v1alpha1.ConnectorProtocolAuto, v1alpha1.ConnectorProtocolQUIC, v1alpha1.ConnectorProtocolHTTP2:
			args = append(args, "--protocol", string(p))
		default:
			return nil, invalid("spec.connector.protocol %q is not auto, quic or http2", p)
		}
	}
	for _, a := range c.ExtraArgs {
		if err := CheckExtraArg(a); err != nil {
			return nil, err
		}
	}
	return append(args, c.ExtraArgs...), nil
}

// CheckExtraArg refuses an extra argument the allow list does not name (as
// admission does; checked again here, since a CRD older than this provider
// may have let it in).
func CheckExtraArg(a string) error {
	switch {
	case strings.Contains(a, Expansion):
		return invalid("spec.connector.extraArgs: %q contains %s: Kubernetes expands $(VAR) in arguments from cloudflared's environment, which holds the run token (TUNNEL_TOKEN); %s is refused too", a, Expansion, "$"+Expansion)
	case strings.HasPrefix(strings.TrimLeft(a, "-"), "token"), strings.HasPrefix(strings.TrimLeft(a, "-"), "credentials"):
		return invalid("spec.connector.extraArgs may not pass a token or credentials: cloudflared reads its token from the token Secret (TUNNEL_TOKEN), never from its command line")
	case strings.HasPrefix(a, "--protocol"):
		return invalid("spec.connector.extraArgs: set the protocol with spec.connector.protocol")
	case !extraArg.MatchString(a):
		return invalid("spec.connector.extraArgs: %q is not allowed; allowed are --flag=value of --loglevel, --transport-loglevel, --output, --edge-ip-version, --edge-bind-address, --region=us, --retries, --grace-period, --tag, --dns-resolver-addrs, and --post-quantum", a)
	}
	return nil
}

// officialTag is an official cloudflared image's calendar version tag.
var officialTag = regexp.MustCompile(`^(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)/)?cloudflare/cloudflared:(\d{4})\.(\d{1,2})\.(\d+)(?:-[0-9A-Za-z.-]+)?(?:@sha256:[0-9a-f]{64})?$`)

// CheckImage refuses an official cloudflared image whose tag is older than
// v1alpha1.MinimumCloudflaredVersion: it would run, but not resolve the
// private hostname routes every published hostname gets. Other images (a
// mirror, a digest, latest) cannot be told apart and are the user's call.
func CheckImage(image string) error {
	m := officialTag.FindStringSubmatch(image)
	if m == nil {
		return nil
	}
	if !older(m[1:4], strings.Split(v1alpha1.MinimumCloudflaredVersion, ".")) {
		return nil
	}
	return invalid("spec.image %s is older than cloudflared %s, the first that resolves private hostname routes; use %s or later (the default is %s)", image, v1alpha1.MinimumCloudflaredVersion, v1alpha1.MinimumCloudflaredVersion, v1alpha1.DefaultCloudflaredImage)
}

// older compares two year.month.patch versions.
func older(v, than []string) bool {
	for i := range 3 {
		a, _ := strconv.Atoi(v[i])
		b, _ := strconv.Atoi(than[i])
		if a != b {
			return a < b
		}
	}
	return false
}

// Reason is the condition reason of err: an Error's, or "" for any other.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// reservedLabels and reservedAnnotations are the provider's on the pods.
var (
	reservedLabels      = []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/component"}
	reservedAnnotations = []string{"tunnels.cloudflare.com/token-checksum"}
)

// CheckPodMetadata refuses pod labels and annotations that are not valid
// Kubernetes ones, or that set the provider's own (as admission does for
// the latter; the former would otherwise surface as the API server's
// refusal of the whole Deployment).
func CheckPodMetadata(c *v1alpha1.ConnectorSpec) error {
	if c == nil {
		return nil
	}
	errs := metav1validation.ValidateLabels(c.PodLabels, field.NewPath("spec", "connector", "podLabels"))
	errs = append(errs, apivalidation.ValidateAnnotations(c.PodAnnotations, field.NewPath("spec", "connector", "podAnnotations"))...)
	if len(errs) > 0 {
		return invalid("%s", errs.ToAggregate().Error())
	}
	for _, k := range reservedLabels {
		if _, ok := c.PodLabels[k]; ok {
			return invalid("spec.connector.podLabels may not set %s: the provider sets it", k)
		}
	}
	for _, k := range reservedAnnotations {
		if _, ok := c.PodAnnotations[k]; ok {
			return invalid("spec.connector.podAnnotations may not set %s: the provider sets it", k)
		}
	}
	return nil
}
