package admit

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	// certValidity is how long a generated CA and serving certificate are
	// valid: they are regenerated only when a provider starts within
	// renewBefore of the end, so a short life would let a long-running
	// provider serve an expired certificate.
	certValidity = 10 * 365 * 24 * time.Hour
	// renewBefore: a certificate that expires sooner is replaced at start.
	renewBefore = 30 * 24 * time.Hour

	// The keys of the certificate Secret (type kubernetes.io/tls) and the
	// files the webhook server reads (controller-runtime's defaults).
	keyCA   = "ca.crt"
	keyCert = corev1.TLSCertKey
	keyKey  = corev1.TLSPrivateKeyKey
)

// SelfSigned provisions the webhook's serving certificate where nothing
// else does (the plain manifests and the Helm chart; Crossplane mounts one
// of its own and injects its CA): a CA and a serving certificate for the
// webhook's Service, kept in a Secret so that every replica serves the same
// one, and the CA put into the caBundle of the webhook configuration.
type SelfSigned struct {
	// Client reads and writes the Secret and the configuration directly:
	// this runs before the manager's caches start.
	Client client.Client
	// Namespace of the Service and the Secret.
	Namespace string
	// Service in front of the webhook server: the certificate is for
	// <Service>.<Namespace>.svc, the name the API server calls.
	Service string
	// Secret holding the certificate.
	Secret string
	// Configuration is the ValidatingWebhookConfiguration whose caBundle
	// is set.
	Configuration string
	// Hosts are more names or IP addresses the certificate is for (a test
	// serving on 127.0.0.1).
	Hosts []string
	// Now is the clock.
	Now func() time.Time
}

// Provision makes sure the Secret holds a certificate that is valid for
// the Service for longer than renewBefore (generating one when it does
// not), writes it to dir as tls.crt and tls.key for the webhook server,
// and puts its CA into the configuration's caBundle.
func (s SelfSigned) Provision(ctx context.Context, dir string) error {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := s.Client.Get(ctx, client.ObjectKey{Name: s.Configuration}, vwc); err != nil {
		return errors.Wrapf(err, "cannot get ValidatingWebhookConfiguration %s to set its caBundle", s.Configuration)
	}
	sec, err := s.secret(ctx, vwc)
	if err != nil {
		return err
	}
	for _, k := range []string{keyCert, keyKey} {
		if err := os.WriteFile(filepath.Join(dir, k), sec.Data[k], 0o600); err != nil {
			return errors.Wrapf(err, "cannot write the webhook's %s", k)
		}
	}
	return s.patchCABundle(ctx, vwc, sec.Data[keyCA])
}

// secret returns the certificate Secret, creating or replacing it when it
// holds no usable certificate. Of replicas starting together, the first to
// write wins and the others take its certificate. A Secret it creates is
// owned by the configuration, so it goes when the install does (helm
// uninstall, kubectl delete -k).
func (s SelfSigned) secret(ctx context.Context, owner *admissionregistrationv1.ValidatingWebhookConfiguration) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: s.Namespace, Name: s.Secret}
	cur := &corev1.Secret{}
	err := s.Client.Get(ctx, key, cur)
	if err != nil && !kerrors.IsNotFound(err) {
		return nil, errors.Wrapf(err, "cannot get the webhook certificate Secret %s", key)
	}
	if err == nil && s.usable(cur.Data) {
		return cur, nil
	}
	data, genErr := s.generate()
	if genErr != nil {
		return nil, genErr
	}
	want := cur.DeepCopy()
	want.Data = data
	if kerrors.IsNotFound(err) {
		want = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: s.Namespace, Name: s.Secret,
				Labels: map[string]string{"app.kubernetes.io/name": "provider-cloudflare-tunnel"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration",
					Name: owner.Name, UID: owner.UID,
				}},
			},
			Type: corev1.SecretTypeTLS,
			Data: data,
		}
		err = s.Client.Create(ctx, want)
	} else {
		// The optimistic lock makes a replica that replaces it at the same
		// time lose, and take the winner's.
		err = s.Client.Patch(ctx, want, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{}))
	}
	if kerrors.IsAlreadyExists(err) || kerrors.IsConflict(err) {
		won := &corev1.Secret{}
		if err := s.Client.Get(ctx, key, won); err != nil {
			return nil, errors.Wrapf(err, "cannot get the webhook certificate Secret %s", key)
		}
		if !s.usable(won.Data) {
			return nil, errors.Errorf("the webhook certificate Secret %s another replica wrote holds no usable certificate", key)
		}
		return won, nil
	}
	return want, errors.Wrapf(err, "cannot write the webhook certificate Secret %s", key)
}

// usable says whether data holds a key pair whose certificate the CA
// signed for the Service and that is valid for longer than renewBefore.
func (s SelfSigned) usable(data map[string][]byte) bool {
	pair, err := tls.X509KeyPair(data[keyCert], data[keyKey])
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[keyCA]) {
		return false
	}
	for _, h := range s.names() {
		opts := x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: s.Now().Add(renewBefore), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := leaf.Verify(opts); err != nil {
			return false
		}
	}
	return true
}

// names are what the serving certificate is for: the Service's names
// (the API server calls <service>.<namespace>.svc) and Hosts.
func (s SelfSigned) names() []string {
	svc := s.Service + "." + s.Namespace
	return append([]string{s.Service, svc, svc + ".svc"}, s.Hosts...)
}

// generate makes a CA and a serving certificate it signs, PEM-encoded
// under the Secret's keys.
func (s SelfSigned) generate() (map[string][]byte, error) {
	now := s.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate the webhook CA key")
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: s.Service + "-webhook-ca"},
		NotBefore:             now.Add(-time.Hour), // clocks a little behind ours
		NotAfter:              now.Add(certValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, errors.Wrap(err, "cannot make the webhook CA")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate the webhook serving key")
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.Service + "." + s.Namespace + ".svc"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range s.names() {
		if ip := net.ParseIP(n); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
			continue
		}
		leaf.DNSNames = append(leaf.DNSNames, n)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, errors.Wrap(err, "cannot parse the webhook CA")
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, errors.Wrap(err, "cannot make the webhook serving certificate")
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode the webhook serving key")
	}
	return map[string][]byte{
		keyCA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		keyCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		keyKey:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) // never fails: crypto/rand panics instead
	return n
}

// patchCABundle puts ca into the caBundle of every webhook of the
// configuration; unchanged, it writes nothing.
func (s SelfSigned) patchCABundle(ctx context.Context, vwc *admissionregistrationv1.ValidatingWebhookConfiguration, ca []byte) error {
	orig := vwc.DeepCopy()
	changed := false
	for i := range vwc.Webhooks {
		if !bytes.Equal(vwc.Webhooks[i].ClientConfig.CABundle, ca) {
			vwc.Webhooks[i].ClientConfig.CABundle = ca
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return errors.Wrapf(s.Client.Patch(ctx, vwc, client.MergeFrom(orig)), "cannot set the caBundle of ValidatingWebhookConfiguration %s", s.Configuration)
}
