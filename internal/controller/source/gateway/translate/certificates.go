package translate

import (
	"crypto/tls"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// CertificateRefs are the Secrets an HTTPS listener that terminates TLS
// names: the ones the reconciler reads for Input.Certificates. References of
// another group or kind are not read (they are refused as they are).
func CertificateRefs(gw *gwv1.Gateway) []types.NamespacedName {
	var out []types.NamespacedName
	for i := range gw.Spec.Listeners {
		for _, ref := range terminating(&gw.Spec.Listeners[i]) {
			if isSecret(ref) {
				out = append(out, secretKey(gw, ref))
			}
		}
	}
	return out
}

// terminating are the certificate references of a listener that
// terminates TLS.
func terminating(l *gwv1.Listener) []gwv1.SecretObjectReference {
	if l.Protocol != gwv1.HTTPSProtocolType || l.TLS == nil || ptr.Deref(l.TLS.Mode, gwv1.TLSModeTerminate) != gwv1.TLSModeTerminate {
		return nil
	}
	return l.TLS.CertificateRefs
}

func isSecret(ref gwv1.SecretObjectReference) bool {
	return ptr.Deref(ref.Group, "") == "" && ptr.Deref(ref.Kind, "Secret") == "Secret"
}

func secretKey(gw *gwv1.Gateway, ref gwv1.SecretObjectReference) types.NamespacedName {
	return types.NamespacedName{Namespace: string(ptr.Deref(ref.Namespace, gwv1.Namespace(gw.Namespace))), Name: string(ref.Name)}
}

// certificateProblem says why a listener's certificate references do not
// resolve, with the ResolvedRefs reason, or "" when they do. The provider
// never uses the certificates (Cloudflare's edge terminates TLS with the
// zone's edge certificates), but Gateway API requires a listener to say
// when what it names is wrong: a user who names a certificate expects it to
// be one.
func certificateProblem(in Input, l *gwv1.Listener) (string, string) {
	var problems []string
	reason := ""
	for _, ref := range terminating(l) {
		key := secretKey(in.Gateway, ref)
		msg, r := certificateRefProblem(in, ref, key)
		if msg == "" {
			continue
		}
		problems = append(problems, msg)
		if reason == "" || r == string(gwv1.ListenerReasonRefNotPermitted) {
			reason = r
		}
	}
	if len(problems) == 0 {
		return "", ""
	}
	return strings.Join(problems, "; "), reason
}

func certificateRefProblem(in Input, ref gwv1.SecretObjectReference, key types.NamespacedName) (string, string) {
	invalid := string(gwv1.ListenerReasonInvalidCertificateRef)
	if !isSecret(ref) {
		return fmt.Sprintf("certificateRefs names %s of group %q: only Secrets (core group) are certificates", publish.Clip(string(ptr.Deref(ref.Kind, "Secret"))), ptr.Deref(ref.Group, "")), invalid
	}
	if key.Namespace != in.Gateway.Namespace &&
		!sharing.CoreGrantedTo(in.Grants[key.Namespace], sharing.From{Group: gatewayapi.Group, Kind: "Gateway", Namespace: in.Gateway.Namespace}, "Secret", key.Name) {
		return fmt.Sprintf("certificateRefs names Secret %s of another namespace, and no ReferenceGrant of that namespace lets Gateways of %s use it", publish.Clip(key.String()), in.Gateway.Namespace), string(gwv1.ListenerReasonRefNotPermitted)
	}
	s := in.Certificates[key]
	if s == nil {
		return fmt.Sprintf("certificateRefs names Secret %s, which does not exist", publish.Clip(key.String())), invalid
	}
	if why := tlsSecretProblem(s); why != "" {
		return fmt.Sprintf("certificateRefs names Secret %s, which is not a TLS certificate: %s", publish.Clip(key.String()), why), invalid
	}
	return "", ""
}

// tlsSecretProblem says why a Secret is not a certificate and its key, as
// a kubernetes.io/tls Secret holds them.
func tlsSecretProblem(s *corev1.Secret) string {
	if s.Type != corev1.SecretTypeTLS {
		return fmt.Sprintf("its type is %q, not %s", s.Type, corev1.SecretTypeTLS)
	}
	if _, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return fmt.Sprintf("%s and %s are not a PEM certificate and its key", corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	return ""
}
