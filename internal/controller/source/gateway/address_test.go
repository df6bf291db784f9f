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

// hostnameOf is the PublicHostname of ns publishing host.
func hostnameOf(t *testing.T, ns, host string) (*v1alpha1.PublicHostname, error) {
	t.Helper()
	l := &v1alpha1.PublicHostnameList{}
	if err := p.Client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range l.Items {
		if l.Items[i].Spec.Hostname == host {
			return &l.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no PublicHostname of %s", host)
}

// A route replaced by another (deleted, and a new one made at once, as an
// apply tool or the conformance suite does) on the Gateway's own hostname:
// the hostname's rules go with the old route at once, but its
// PublicHostname and DNS record are kept for the new one (the same record
// in Cloudflare, never deleted and made again), still the Gateway's. A
// hostname no route wants any more goes after the grace, DNS record
// included.
func TestAHostnameWantedAgainKeepsItsDNSRecord(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		p.Create(t, &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: gw.Namespace, Name: "addressed"},
			Spec: v1alpha1.GatewayParametersSpec{AddressDomain: ptr.To("gw.example.com")}})
		gw.Spec.Infrastructure = parametersRef("addressed")
	})
	ns := w.ns
	host := "public." + ns + ".gw.example.com"
	p.Create(t, service(ns, "old", 8080))
	p.Create(t, service(ns, "new", 8080))
	old := route(ns, ns, "old", nil, pathRule(gwv1.PathMatchPathPrefix, "/", backend("old", 8080)))
	p.Create(t, old)
	waitRules(t, w.tunnelID, ns, map[string]string{host + " ": "http://old." + ns + ".svc.cluster.local:8080"})
	waitRecords(t, host, 1)
	record := records(t, host)[0].ID
	ph, err := hostnameOf(t, ns, host)
	if err != nil {
		t.Fatal(err)
	}

	if err := p.Client.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	waitRules(t, w.tunnelID, ns, map[string]string{})
	wait.Eventually(t, wait.Patience, "the Gateway has given the hostname up", func() error {
		cur, err := hostnameOf(t, ns, host)
		switch {
		case err != nil:
			return nil // deleted already
		case cur.DeletionTimestamp != nil || cur.Annotations[v1alpha1.AnnotationUnwantedSince] != "":
			return nil
		}
		return fmt.Errorf("PublicHostname %s is neither deleted nor marked unwanted", cur.Name)
	})
	p.Create(t, route(ns, ns, "new", nil, pathRule(gwv1.PathMatchPathPrefix, "/", backend("new", 8080))))
	waitRules(t, w.tunnelID, ns, map[string]string{host + " ": "http://new." + ns + ".svc.cluster.local:8080"})
	if rs := records(t, host); len(rs) != 1 || rs[0].ID != record {
		t.Errorf("DNS records of %s: %+v, want the one it had (%s), never deleted", host, rs, record)
	}
	cur, err := hostnameOf(t, ns, host)
	if err != nil {
		t.Fatal(err)
	}
	if cur.UID != ph.UID || cur.DeletionTimestamp != nil || !metav1.IsControlledBy(cur, w.gateway) {
		t.Errorf("PublicHostname %s (UID %s, deleting %v, owners %+v): want the same one (UID %s), the Gateway's, not deleted", cur.Name, cur.UID, cur.DeletionTimestamp, cur.OwnerReferences, ph.UID)
	}
	if _, marked := cur.Annotations[v1alpha1.AnnotationUnwantedSince]; marked {
		t.Errorf("PublicHostname %s is still marked unwanted: %v", cur.Name, cur.Annotations)
	}

	if err := p.Client.Delete(context.Background(), &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "new"}}); err != nil {
		t.Fatal(err)
	}
	waitRules(t, w.tunnelID, ns, map[string]string{})
	gone(t, cur)
	waitRecords(t, host, 0)
}
