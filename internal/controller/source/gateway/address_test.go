package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// A Gateway given a hostname of its own by its parameters: it is the
// Gateway's address, and a route naming no hostname is published on it,
// with its DNS record.
func TestARouteWithoutHostnamesIsPublishedOnTheGatewaysHostname(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		p.Create(t, &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: gw.Namespace, Name: "addressed"},
			Spec: v1alpha1.GatewayParametersSpec{AddressDomain: ptr.To("gw.example.com")}})
		gw.Spec.Infrastructure = parametersRef("addressed")
	})
	ns := w.ns
	host := "public." + ns + ".gw.example.com"
	p.Create(t, service(ns, "web", 8080))
	p.Create(t, route(ns, ns, "anything", nil, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080))))
	waitRules(t, w.tunnelID, ns, map[string]string{host + " ": "http://web." + ns + ".svc.cluster.local:8080"})
	waitRecords(t, host, 1)
	wait.Eventually(t, wait.Patience, "the Gateway's address is its hostname", func() error {
		gw := &gwv1.Gateway{}
		if err := p.Client.Get(context.Background(), client.ObjectKeyFromObject(w.gateway), gw); err != nil {
			return err
		}
		if len(gw.Status.Addresses) != 1 || gw.Status.Addresses[0].Value != host {
			return fmt.Errorf("addresses %v, want %s", gw.Status.Addresses, host)
		}
		return nil
	})
}

// An HTTPS listener's certificate references are checked, although the
// certificate is never used: a missing Secret is said on the listener and
// the listener is not Programmed; once a certificate is made under that
// name (a change to a Secret, watched), it resolves.
func TestAListenersCertificateIsChecked(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gwv1.Listener{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType,
			TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "site-cert"}}}})
	})
	waitListener(t, w.gateway, "https", metav1.ConditionFalse, string(gwv1.ListenerReasonInvalidCertificateRef))
	crt, key := selfSigned(t)
	p.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "site-cert"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}})
	waitListener(t, w.gateway, "https", metav1.ConditionTrue, string(gwv1.ListenerReasonResolvedRefs))
}

// waitListener waits for the listener's ResolvedRefs to have the status
// and reason, and its Programmed to follow it.
func waitListener(t *testing.T, gw *gwv1.Gateway, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, fmt.Sprintf("listener %s ResolvedRefs=%s %s", name, status, reason), func() error {
		got := &gwv1.Gateway{}
		if err := p.Client.Get(context.Background(), client.ObjectKeyFromObject(gw), got); err != nil {
			return err
		}
		for _, l := range got.Status.Listeners {
			if string(l.Name) != name {
				continue
			}
			resolved, programmed := condition(l.Conditions, "ResolvedRefs"), condition(l.Conditions, "Programmed")
			if resolved.Status != status || resolved.Reason != reason {
				return fmt.Errorf("ResolvedRefs %s %s: %s", resolved.Status, resolved.Reason, resolved.Message)
			}
			if status == metav1.ConditionFalse && programmed.Status != metav1.ConditionFalse {
				return fmt.Errorf("Programmed %s with references that do not resolve", programmed.Status)
			}
			return nil
		}
		return fmt.Errorf("no status for listener %s", name)
	})
}

// selfSigned is a PEM certificate and its key.
func selfSigned(t *testing.T) ([]byte, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "site.example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// A rule whose backend Service does not exist is answered 500 (Gateway
// API), never passed to another rule; but a typo in a route already
// published loses nothing: its hostname keeps what it published.
func TestAMissingBackendAnswers500AndATypoLosesNothing(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ns := w.ns
	p.Create(t, service(ns, "web", 8080))
	site, fresh := "site-"+ns+".example.com", "fresh-"+ns+".example.com"
	webURL := "http://web." + ns + ".svc.cluster.local:8080"
	r := route(ns, ns, "site", []string{site}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, r)
	waitRules(t, w.tunnelID, ns, map[string]string{site + " ": webURL})

	p.Edit(t, r, func() { r.Spec.Rules[0].BackendRefs[0].Name = "wbe" })
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=False/BackendNotFound")
	p.Create(t, route(ns, ns, "fresh", []string{fresh}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("missing", 8080))))
	waitRules(t, w.tunnelID, ns, map[string]string{site + " ": webURL, fresh + " ": "http_status:500"})
}
