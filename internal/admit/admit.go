// Package admit is the provider's validating admission webhook. It refuses
// a token rotation request (spec.tokenRotation.requestedAt of a
// CloudflareTunnel, spec.forProvider.tokenRotation.requestedAt of a Tunnel,
// spec.forProvider.rotation.requestedAt of an AccessServiceToken) later
// than now plus rotation.MaxRequestSkew, which CEL cannot: it has no
// clock. (A request before rotation.Earliest is refused by the CRDs' CEL
// rules, and here too, the same way.) The rule is rotation.CheckRequest, the one the controllers apply;
// they keep applying it where the webhook did not run (not installed, or
// the provider down: the webhook's failurePolicy is Ignore).
package admit

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	xperrors "github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	zerotrustv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// The paths the handlers are served at: controller-runtime's, from each
// kind's group, version and kind. The webhook configurations in package/,
// cluster/install and the Helm chart name them.
const (
	CloudflareTunnelPath = "/validate-tunnels-cloudflare-com-v1alpha1-cloudflaretunnel"
	TunnelPath           = "/validate-zerotrust-tunnels-cloudflare-com-v1alpha1-tunnel"
	ServiceTokenPath     = "/validate-zerotrust-tunnels-cloudflare-com-v1alpha1-accessservicetoken"
)

// The request fields, as the refusal names them.
const (
	CloudflareTunnelField = "spec.tokenRotation.requestedAt"
	TunnelField           = "spec.forProvider.tokenRotation.requestedAt"
	ServiceTokenField     = "spec.forProvider.rotation.requestedAt"
)

// Setup serves the webhook's handlers on mgr's webhook server; now is the
// clock requests are checked against.
func Setup(mgr ctrl.Manager, now func() time.Time) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &tunnelsv1alpha1.CloudflareTunnel{}).WithValidator(CloudflareTunnelValidator(now)).Complete(); err != nil {
		return xperrors.Wrap(err, "cannot serve the CloudflareTunnel webhook")
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &zerotrustv1alpha1.Tunnel{}).WithValidator(TunnelValidator(now)).Complete(); err != nil {
		return xperrors.Wrap(err, "cannot serve the Tunnel webhook")
	}
	return xperrors.Wrap(ctrl.NewWebhookManagedBy(mgr, &zerotrustv1alpha1.AccessServiceToken{}).WithValidator(ServiceTokenValidator(now)).Complete(), "cannot serve the AccessServiceToken webhook")
}

// CloudflareTunnelValidator refuses a CloudflareTunnel's rotation request
// too far in the future.
func CloudflareTunnelValidator(now func() time.Time) admission.Validator[*tunnelsv1alpha1.CloudflareTunnel] {
	return rotationValidator[*tunnelsv1alpha1.CloudflareTunnel]{field: CloudflareTunnelField, now: now, request: func(t *tunnelsv1alpha1.CloudflareTunnel) *metav1.Time {
		if t.Spec.TokenRotation == nil {
			return nil
		}
		return &t.Spec.TokenRotation.RequestedAt
	}}
}

// TunnelValidator refuses a Tunnel's rotation request too far in the
// future.
func TunnelValidator(now func() time.Time) admission.Validator[*zerotrustv1alpha1.Tunnel] {
	return rotationValidator[*zerotrustv1alpha1.Tunnel]{field: TunnelField, now: now, request: func(t *zerotrustv1alpha1.Tunnel) *metav1.Time {
		if t.Spec.ForProvider.TokenRotation == nil {
			return nil
		}
		return &t.Spec.ForProvider.TokenRotation.RequestedAt
	}}
}

// ServiceTokenValidator refuses an AccessServiceToken's rotation request
// too far in the future.
func ServiceTokenValidator(now func() time.Time) admission.Validator[*zerotrustv1alpha1.AccessServiceToken] {
	return rotationValidator[*zerotrustv1alpha1.AccessServiceToken]{field: ServiceTokenField, now: now, request: func(t *zerotrustv1alpha1.AccessServiceToken) *metav1.Time {
		if t.Spec.ForProvider.Rotation == nil {
			return nil
		}
		return &t.Spec.ForProvider.Rotation.RequestedAt
	}}
}

// rotationValidator refuses a rotation request, read by request (nil:
// none), that is set or changed and later than now plus
// rotation.MaxRequestSkew.
type rotationValidator[T runtime.Object] struct {
	field   string
	request func(T) *metav1.Time
	now     func() time.Time
}

func (v rotationValidator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, v.check(nil, v.request(obj))
}

func (v rotationValidator[T]) ValidateUpdate(_ context.Context, old, obj T) (admission.Warnings, error) {
	return nil, v.check(v.request(old), v.request(obj))
}

func (v rotationValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// check refuses req unless it is unset or unchanged from old: an object
// stored with a future request (before the webhook existed, or while it was
// down) must still take every other edit; the controller reports that
// request.
func (v rotationValidator[T]) check(old, req *metav1.Time) error {
	if req == nil || (old != nil && old.Equal(req)) {
		return nil
	}
	err := rotation.CheckRequest(v.field, req.Time, v.now())
	if fe := (*rotation.FutureRequestError)(nil); errors.As(err, &fe) {
		return errors.New(fe.AtAdmission())
	}
	return err
}
