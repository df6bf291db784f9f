// Package clients turns provider configuration into Cloudflare credentials.
package clients

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// Config is everything needed to call the Cloudflare API for one account.
// Its String and GoString methods redact the token so a Config can be logged.
type Config struct {
	Token     string
	AccountID string
	Endpoint  string

	// Source names the provider config, for messages ("ClusterProviderConfig
	// default").
	Source string
	// Owner is the config's owner ID for ownership markers; "" means the
	// cluster's default.
	Owner string
	// Allow holds the config's tenant guardrails.
	Allow v1alpha1.Allowances
	// Namespaced is true for a ProviderConfig, false for a
	// ClusterProviderConfig: some guardrails default differently.
	Namespaced bool
}

func (c Config) String() string {
	return fmt.Sprintf("{AccountID:%s Endpoint:%s Token:<redacted> Source:%s Owner:%s}", c.AccountID, c.Endpoint, c.Source, c.Owner)
}

// GoString keeps %#v from printing the token.
func (c Config) GoString() string { return c.String() }

// Reasons why credentials cannot be resolved. They are condition reasons a
// user can act on.
const (
	ReasonSecretNotFound      = "SecretNotFound"
	ReasonSecretKeyMissing    = "SecretKeyMissing"
	ReasonEnvironmentMissing  = "EnvironmentVariableMissing"
	ReasonAccountIDMissing    = "AccountIDMissing"
	ReasonInvalidCredentials  = "InvalidCredentialsSource"
	ReasonConfigNotFound      = "ProviderConfigNotFound"
	ReasonUnsupportedRefKind  = "UnsupportedProviderConfigKind"
	ReasonCredentialsInternal = "CredentialsUnavailable"
)

// CredentialsError says why credentials could not be resolved, with a reason
// fit for a condition.
type CredentialsError struct {
	Reason  string
	Message string
}

func (e *CredentialsError) Error() string { return e.Message }

// Reason returns the condition reason for err, or "" if err is not a
// CredentialsError.
func Reason(err error) string {
	var ce *CredentialsError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

func credErr(reason, format string, args ...any) error {
	return &CredentialsError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Env looks up the provider's environment variables (os.LookupEnv in the
// provider; tests pass their own).
type Env func(key string) (string, bool)

// ResolveSpec turns a ProviderConfig spec into a Config. defaultNamespace is
// the namespace a namespaced ProviderConfig lives in (its Secret must be
// there too); it is "" for a ClusterProviderConfig.
func ResolveSpec(ctx context.Context, kube client.Reader, spec v1alpha1.ProviderConfigSpec, defaultNamespace string, env Env) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	cfg := &Config{AccountID: spec.AccountID, Endpoint: v1alpha1.DefaultEndpoint, Owner: spec.OwnerID, Namespaced: defaultNamespace != ""}
	if spec.Allow != nil {
		cfg.Allow = *spec.Allow
	}
	if spec.Endpoint != nil && *spec.Endpoint != "" {
		cfg.Endpoint = *spec.Endpoint
	}

	switch spec.Credentials.Source {
	case v1alpha1.CredentialsSourceSecret, "":
		ref := spec.Credentials.SecretRef
		if ref == nil {
			return nil, credErr(ReasonInvalidCredentials, "spec.credentials.secretRef is required when the source is Secret")
		}
		ns := ref.Namespace
		if defaultNamespace != "" {
			if ns != "" && ns != defaultNamespace {
				return nil, credErr(ReasonInvalidCredentials, "a ProviderConfig may only read Secrets in its own namespace %q, not %q", defaultNamespace, ns)
			}
			ns = defaultNamespace
		}
		if ns == "" {
			return nil, credErr(ReasonInvalidCredentials, "spec.credentials.secretRef.namespace is required for a ClusterProviderConfig")
		}
		key := ref.Key
		if key == "" {
			key = v1alpha1.DefaultTokenKey
		}
		s := &corev1.Secret{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, s); err != nil {
			if kerrors.IsNotFound(err) {
				return nil, credErr(ReasonSecretNotFound, "credentials Secret %s/%s does not exist", ns, ref.Name)
			}
			return nil, errors.Wrapf(err, "cannot get credentials Secret %s/%s", ns, ref.Name)
		}
		token := strings.TrimSpace(string(s.Data[key]))
		if token == "" {
			return nil, credErr(ReasonSecretKeyMissing, "credentials Secret %s/%s has no non-empty key %q", ns, ref.Name, key)
		}
		cfg.Token = token
		if ep := strings.TrimSpace(string(s.Data[v1alpha1.EndpointKey])); ep != "" && (spec.Endpoint == nil || *spec.Endpoint == "") {
			cfg.Endpoint = ep
		}
		if cfg.AccountID == "" {
			cfg.AccountID = strings.TrimSpace(string(s.Data[v1alpha1.DefaultAccountIDKey]))
			if cfg.AccountID == "" {
				return nil, credErr(ReasonAccountIDMissing, "spec.accountID is empty and credentials Secret %s/%s has no %s key", ns, ref.Name, v1alpha1.DefaultAccountIDKey)
			}
		}
	case v1alpha1.CredentialsSourceEnvironment:
		token, _ := env(v1alpha1.DefaultTokenKey)
		if strings.TrimSpace(token) == "" {
			return nil, credErr(ReasonEnvironmentMissing, "the provider's environment has no %s", v1alpha1.DefaultTokenKey)
		}
		cfg.Token = strings.TrimSpace(token)
		if cfg.AccountID == "" {
			acc, _ := env(v1alpha1.DefaultAccountIDKey)
			if cfg.AccountID = strings.TrimSpace(acc); cfg.AccountID == "" {
				return nil, credErr(ReasonAccountIDMissing, "spec.accountID is empty and the provider's environment has no %s", v1alpha1.DefaultAccountIDKey)
			}
		}
	default:
		return nil, credErr(ReasonInvalidCredentials, "credentials source %q is not supported: use Secret or Environment", spec.Credentials.Source)
	}
	return cfg, nil
}

// ConfigFor records that mg uses its provider config, then resolves that
// config (a namespaced ProviderConfig in mg's namespace, or a
// ClusterProviderConfig) into Cloudflare credentials. Every managed resource
// controller connects through it.
func ConfigFor(ctx context.Context, kube client.Client, usage *resource.ProviderConfigUsageTracker, mg resource.ModernManaged, env Env) (*Config, error) {
	ref := mg.GetProviderConfigReference()
	if ref == nil {
		return nil, credErr(ReasonConfigNotFound, "no providerConfigRef is set")
	}
	if usage != nil {
		if err := usage.Track(ctx, mg); err != nil && !deletingInTerminatingNamespace(mg, err) {
			return nil, errors.Wrap(err, "cannot track provider config usage")
		}
	}
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
			if kerrors.IsNotFound(err) {
				return nil, credErr(ReasonConfigNotFound, "ProviderConfig %s/%s does not exist", mg.GetNamespace(), ref.Name)
			}
			return nil, errors.Wrap(err, "cannot get ProviderConfig")
		}
		return named(ResolveSpec(ctx, kube, pc.Spec, pc.GetNamespace(), env))(fmt.Sprintf("ProviderConfig %s/%s", pc.GetNamespace(), pc.GetName()))
	case v1alpha1.ClusterProviderConfigKind:
		cpc := &v1alpha1.ClusterProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, cpc); err != nil {
			if kerrors.IsNotFound(err) {
				return nil, credErr(ReasonConfigNotFound, "ClusterProviderConfig %s does not exist", ref.Name)
			}
			return nil, errors.Wrap(err, "cannot get ClusterProviderConfig")
		}
		return named(ResolveSpec(ctx, kube, cpc.Spec, "", env))("ClusterProviderConfig " + cpc.GetName())
	default:
		return nil, credErr(ReasonUnsupportedRefKind, "providerConfigRef kind %q is not supported: use ProviderConfig or ClusterProviderConfig", ref.Kind)
	}
}

// deletingInTerminatingNamespace reports whether err is the API server
// refusing a usage record because mg's namespace is being deleted, while mg
// itself is being deleted. The namespace controller deletes the usage
// records with everything else in the namespace, and nothing new may be
// created there, so insisting on the record would block mg's deletion, and
// with it the namespace's, forever (crossplane-runtime issue 1150). A
// resource on its way out needs its config for one more call, not a record
// that keeps the config alive.
func deletingInTerminatingNamespace(mg resource.ModernManaged, err error) bool {
	return mg.GetDeletionTimestamp() != nil && kerrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// named sets the Source of a resolved config.
func named(cfg *Config, err error) func(source string) (*Config, error) {
	return func(source string) (*Config, error) {
		if err != nil {
			return nil, err
		}
		cfg.Source = source
		return cfg, nil
	}
}
