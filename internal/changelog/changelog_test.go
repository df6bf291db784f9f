package changelog_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/changelog"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var (
	p *providertest.Provider
	// received is what the receiver got over the socket, one JSON line
	// per entry, as the changelogs sidecar writes them.
	received = &lines{}
)

const providerVersion = "provider-cloudflare-tunnel:test"

// lines is a writer tests read back while the receiver writes.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestMain runs the provider as main does with --enable-changelogs: its
// change logger sends over a Unix socket, to a receiver serving there.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	// Not under the test's temporary directory: a socket's path is
	// limited to 107 bytes.
	dir, err := os.MkdirTemp("", "changelog-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	socket := filepath.Join(dir, "changelogs.sock")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- changelog.NewReceiver(received).Serve(ctx, socket) }()
	logger, closeLog, err := changelog.Logger(socket, providerVersion)
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	code := providertest.RunWithOptions(m, &p, providertest.Options{ChangeLogger: logger})
	_ = closeLog()
	cancel()
	if err := <-served; err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the receiver:", err)
		return 1
	}
	return code
}

// entry is what a test reads of a change log entry.
type entry struct {
	Provider     string         `json:"provider"`
	Kind         string         `json:"kind"`
	Name         string         `json:"name"`
	ExternalName string         `json:"externalName"`
	Operation    string         `json:"operation"`
	ErrorMessage string         `json:"errorMessage"`
	Snapshot     map[string]any `json:"snapshot"`
}

// entriesOf are the entries received for the kind and name, with their
// lines as received.
func entriesOf(t *testing.T, kind, name string) ([]entry, []string) {
	t.Helper()
	var es []entry
	var raw []string
	for _, l := range strings.Split(strings.TrimSpace(received.String()), "\n") {
		if l == "" {
			continue
		}
		var e entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("a line the receiver wrote is not an entry: %v: %s", err, l)
		}
		if e.Kind == kind && e.Name == name {
			es, raw = append(es, e), append(raw, l)
		}
	}
	return es, raw
}

// recorded waits for a successful entry of the operation for the kind and
// name, holding the resource's snapshot from before the operation, and
// naming the Cloudflare object it changed (a create's snapshot is from
// before Cloudflare assigned the ID).
func recorded(t *testing.T, kind, name, op string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, kind+" "+name+" "+op+" in the change log", func() error {
		es, _ := entriesOf(t, kind, name)
		for _, e := range es {
			if e.Operation != op || e.ErrorMessage != "" {
				continue
			}
			if e.Provider != providerVersion || (e.ExternalName == "") != (op == "OPERATION_TYPE_CREATE") || e.Snapshot["spec"] == nil {
				return fmt.Errorf("entry %+v has the wrong provider, external-name or no snapshot", e)
			}
			return nil
		}
		return fmt.Errorf("%d entries, none a successful %s", len(es), op)
	})
}

func ready(t *testing.T, mg resource.Managed) {
	t.Helper()
	wait.Eventually(t, wait.Patience, mg.GetName()+" Ready", func() error {
		if err := p.Get(mg); err != nil {
			return err
		}
		if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

// secretValue waits for key in the Secret ns/name and returns it.
func secretValue(t *testing.T, ns, name, key string, not ...string) string {
	t.Helper()
	var v string
	wait.Eventually(t, wait.Patience, "Secret "+name+" holds "+key, func() error {
		s := &corev1.Secret{}
		if err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return err
		}
		v = string(s.Data[key])
		if v == "" {
			return fmt.Errorf("no %s yet", key)
		}
		for _, old := range not {
			if v == old {
				return fmt.Errorf("%s not replaced yet", key)
			}
		}
		return nil
	})
	return v
}

func gone(t *testing.T, mg client.Object) {
	t.Helper()
	if err := p.Client.Delete(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, mg.GetName()+" gone", func() error {
		if err := p.Get(mg); client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// TestChangeLogWithoutSecrets: a Tunnel and an Access service token, each
// created, updated (a new client secret among the updates) and deleted:
// every change is in the change log, and no secret is (the API token, the
// tunnel's run token, either client secret; as they are or base64-encoded,
// as a Secret's data would carry them).
func TestChangeLogWithoutSecrets(t *testing.T) {
	ns := p.Namespace(t)
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "logged"}}
	tun.Spec.ForProvider = ztv1alpha1.TunnelParameters{Name: "logged-" + ns, ConfigSrc: ptr.To("cloudflare"), Config: &ztv1alpha1.TunnelConfig{
		Ingress: []ztv1alpha1.IngressRule{{Hostname: ptr.To("logged.example.com"), Service: "http://web." + ns + ".svc.cluster.local:80"}, {Service: "http_status:404"}},
	}}
	tun.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "logged-token"}
	sat := &ztv1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "logged"}}
	sat.Spec.ForProvider = ztv1alpha1.AccessServiceTokenParameters{Name: "logged-" + ns, Duration: "8760h"}
	sat.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "logged-credentials"}
	p.Create(t, tun)
	p.Create(t, sat)
	ready(t, tun)
	ready(t, sat)
	recorded(t, ztv1alpha1.TunnelKind, tun.Name, "OPERATION_TYPE_CREATE")
	recorded(t, ztv1alpha1.AccessServiceTokenKind, sat.Name, "OPERATION_TYPE_CREATE")
	secrets := []string{providertest.Token,
		secretValue(t, ns, "logged-token", "token"),
		secretValue(t, ns, "logged-credentials", ztv1alpha1.KeyServiceTokenClientSecret)}

	p.Edit(t, tun, func() {
		tun.Spec.ForProvider.Config.Ingress[0].Service = "http://web." + ns + ".svc.cluster.local:8080"
	})
	p.Edit(t, sat, func() {
		// A second ahead: the request is stored to the second, and the
		// token may have been made within this one.
		sat.Spec.ForProvider.Rotation = &ztv1alpha1.AccessServiceTokenRotation{RequestedAt: metav1.NewTime(time.Now().Add(time.Second))}
	})
	recorded(t, ztv1alpha1.TunnelKind, tun.Name, "OPERATION_TYPE_UPDATE")
	recorded(t, ztv1alpha1.AccessServiceTokenKind, sat.Name, "OPERATION_TYPE_UPDATE")
	secrets = append(secrets, secretValue(t, ns, "logged-credentials", ztv1alpha1.KeyServiceTokenClientSecret, secrets[2]))

	gone(t, tun)
	gone(t, sat)
	recorded(t, ztv1alpha1.TunnelKind, tun.Name, "OPERATION_TYPE_DELETE")
	recorded(t, ztv1alpha1.AccessServiceTokenKind, sat.Name, "OPERATION_TYPE_DELETE")

	for _, kind := range []string{ztv1alpha1.TunnelKind, ztv1alpha1.AccessServiceTokenKind} {
		_, raw := entriesOf(t, kind, "logged")
		for _, l := range raw {
			for i, s := range secrets {
				if strings.Contains(l, s) || strings.Contains(l, base64.StdEncoding.EncodeToString([]byte(s))) {
					t.Errorf("a %s entry holds secret #%d: %s", kind, i, l)
				}
			}
		}
	}
}
