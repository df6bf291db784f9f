package accessservicetoken

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

const secret = "s3cr3t-s3cr3t-s3cr3t"

// fakeTokens is a ServiceTokenAPI whose calls are function fields; a call
// left nil fails the test.
type fakeTokens struct {
	t       *testing.T
	create  func(cloudflare.ServiceTokenInput) (*cloudflare.IssuedServiceToken, error)
	get     func(string) (*cloudflare.ServiceToken, error)
	list    func() ([]cloudflare.ServiceToken, error)
	update  func(string, cloudflare.ServiceTokenInput) (*cloudflare.ServiceToken, error)
	del     func(string) error
	rotate  func(string, *time.Time) (*cloudflare.IssuedServiceToken, error)
	refresh func(string) (*cloudflare.ServiceToken, error)
}

func (f *fakeTokens) CreateServiceToken(_ context.Context, in cloudflare.ServiceTokenInput) (*cloudflare.IssuedServiceToken, error) {
	f.must(f.create != nil, "create")
	return f.create(in)
}
func (f *fakeTokens) GetServiceToken(_ context.Context, id string) (*cloudflare.ServiceToken, error) {
	f.must(f.get != nil, "get")
	return f.get(id)
}
func (f *fakeTokens) ListServiceTokens(context.Context) ([]cloudflare.ServiceToken, error) {
	f.must(f.list != nil, "list")
	return f.list()
}
func (f *fakeTokens) UpdateServiceToken(_ context.Context, id string, in cloudflare.ServiceTokenInput) (*cloudflare.ServiceToken, error) {
	f.must(f.update != nil, "update")
	return f.update(id, in)
}
func (f *fakeTokens) DeleteServiceToken(_ context.Context, id string) error {
	f.must(f.del != nil, "delete")
	return f.del(id)
}
func (f *fakeTokens) RotateServiceToken(_ context.Context, id string, prev *time.Time) (*cloudflare.IssuedServiceToken, error) {
	f.must(f.rotate != nil, "rotate")
	return f.rotate(id, prev)
}
func (f *fakeTokens) RefreshServiceToken(_ context.Context, id string) (*cloudflare.ServiceToken, error) {
	f.must(f.refresh != nil, "refresh")
	return f.refresh(id)
}
func (f *fakeTokens) must(ok bool, call string) {
	if !ok {
		f.t.Fatalf("unexpected %s call", call)
	}
}

func token(id string) cloudflare.ServiceToken {
	return cloudflare.ServiceToken{ID: id, Name: "ci", ClientID: id + ".access", Duration: "8760h", CreatedAt: now.Add(-time.Hour)}
}

func resource(id string) *v1alpha1.AccessServiceToken {
	cr := &v1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ci", UID: "uid-1"}}
	cr.Spec.ForProvider = v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}
	if id != "" {
		meta.SetExternalName(cr, id)
	}
	return cr
}

// noSecret fails if the secret shows anywhere in v, formatted or encoded.
func noSecret(t *testing.T, what string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if s := fmt.Sprintf("%+v %#v %s", v, v, b); strings.Contains(s, secret) {
		t.Errorf("%s holds the client secret", what)
	}
}

// An Observe publishes the client ID alone: the merge into the Secret
// keeps the secret a create or a rotation published.
func TestObservePublishesNoSecret(t *testing.T) {
	tok := token("t-1")
	e := &external{tokens: &fakeTokens{t: t, get: func(string) (*cloudflare.ServiceToken, error) { return &tok, nil }}, now: func() time.Time { return now }}
	cr := resource("t-1")
	obs, err := e.Observe(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	want := managed.ConnectionDetails{v1alpha1.KeyServiceTokenClientID: []byte("t-1.access")}
	if diff := cmp.Diff(want, obs.ConnectionDetails); diff != "" || !obs.ResourceExists || !obs.ResourceUpToDate {
		t.Errorf("Observe() = %+v; connection details -want +got:\n%s", obs, diff)
	}
	if cr.Status.AtProvider.ClientID != "t-1.access" || cr.Status.AtProvider.ID != "t-1" {
		t.Errorf("status %+v", cr.Status.AtProvider)
	}
}

// A create deletes what a lost create of this resource left (whose secret
// no one has) and publishes the new token's secret from the answer; a
// token of the name another resource holds is left alone.
func TestCreateReplacesWhatALostCreateLeft(t *testing.T) {
	began := now.Add(-time.Minute)
	orphan, held, older := token("orphan"), token("held"), token("older")
	orphan.CreatedAt, held.CreatedAt, older.CreatedAt = began.Add(time.Second), began.Add(time.Second), began.Add(-time.Hour)
	var deleted []string
	fake := &fakeTokens{t: t,
		list: func() ([]cloudflare.ServiceToken, error) { return []cloudflare.ServiceToken{orphan, held, older}, nil },
		del:  func(id string) error { deleted = append(deleted, id); return nil },
		create: func(in cloudflare.ServiceTokenInput) (*cloudflare.IssuedServiceToken, error) {
			return &cloudflare.IssuedServiceToken{ServiceToken: token("new"), ClientSecret: secret}, nil
		},
	}
	kube := &test.MockClient{MockList: func(_ context.Context, l client.ObjectList, opts ...client.ListOption) error {
		// The external-name index answers for "held" with another resource.
		lo := &client.ListOptions{}
		lo.ApplyOptions(opts)
		if lo.FieldSelector != nil && strings.Contains(lo.FieldSelector.String(), "held") {
			other := resource("held")
			other.UID = "uid-2"
			l.(*v1alpha1.AccessServiceTokenList).Items = []v1alpha1.AccessServiceToken{*other}
		}
		return nil
	}}
	e := &external{tokens: fake, kube: kube, now: func() time.Time { return now }}
	cr := resource("")
	meta.SetExternalCreatePending(cr, began)
	if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
		t.Fatalf("Observe() = %+v, %v; want not existing, so it is made anew", obs, err)
	}
	cre, err := e.Create(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"orphan"}, deleted); diff != "" {
		t.Errorf("deleted: -want +got:\n%s", diff)
	}
	want := managed.ConnectionDetails{v1alpha1.KeyServiceTokenClientID: []byte("new.access"), v1alpha1.KeyServiceTokenClientSecret: []byte(secret)}
	if diff := cmp.Diff(want, cre.ConnectionDetails); diff != "" {
		t.Errorf("connection details: -want +got:\n%s", diff)
	}
	if meta.GetExternalName(cr) != "new" {
		t.Errorf("external-name %q, want new", meta.GetExternalName(cr))
	}
	noSecret(t, "status", cr.Status)
}

// A rotation publishes the new secret at once and nothing else is done in
// that update (a later failure would lose the secret); its overlap is
// recorded in status, never the secret.
func TestUpdateRotatesFirst(t *testing.T) {
	tok := token("t-1")
	tok.Name = "drifted"
	var sentPrev *time.Time
	fake := &fakeTokens{t: t,
		get: func(string) (*cloudflare.ServiceToken, error) { return &tok, nil },
		rotate: func(_ string, prev *time.Time) (*cloudflare.IssuedServiceToken, error) {
			sentPrev = prev
			return &cloudflare.IssuedServiceToken{ServiceToken: tok, ClientSecret: secret}, nil
		},
	}
	e := &external{tokens: fake, now: func() time.Time { return now }}
	cr := resource("t-1")
	cr.Spec.ForProvider.Rotation = &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-time.Minute), PreviousSecretExpiresAfter: &metav1.Duration{Duration: time.Hour}}
	obs, err := e.Observe(context.Background(), cr)
	if err != nil || obs.ResourceUpToDate {
		t.Fatalf("Observe() = %+v, %v; want an update due", obs, err)
	}
	noSecret(t, "the diff", obs.Diff)
	upd, err := e.Update(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(upd.ConnectionDetails[v1alpha1.KeyServiceTokenClientSecret]); got != secret {
		t.Errorf("the rotated secret is not published")
	}
	hour := now.Add(time.Hour)
	if diff := cmp.Diff(&hour, sentPrev); diff != "" {
		t.Errorf("previous_client_secret_expires_at: -want +got:\n%s", diff)
	}
	rot := cr.Status.AtProvider.Rotation
	if rot == nil || !rot.RequestedAt.Equal(&cr.Spec.ForProvider.Rotation.RequestedAt) || !rot.PreviousSecretExpiresAt.Time.Equal(hour) {
		t.Errorf("status rotation %+v", rot)
	}
	noSecret(t, "status", cr.Status)
	// The next reconcile: the request is served; the name is corrected.
	var renamed cloudflare.ServiceTokenInput
	fake.rotate = nil
	fake.update = func(_ string, in cloudflare.ServiceTokenInput) (*cloudflare.ServiceToken, error) {
		renamed = in
		return &tok, nil
	}
	if _, err := e.Observe(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	if upd, err := e.Update(context.Background(), cr); err != nil || upd.ConnectionDetails != nil {
		t.Fatalf("Update() = %+v, %v; want the name corrected, nothing published", upd, err)
	}
	if diff := cmp.Diff(cloudflare.ServiceTokenInput{Name: "ci"}, renamed); diff != "" {
		t.Errorf("update: -want +got:\n%s", diff)
	}
}

// The secret type prints redacted, whatever the verb.
func TestClientSecretIsRedacted(t *testing.T) {
	issued := cloudflare.IssuedServiceToken{ServiceToken: token("t"), ClientSecret: secret}
	for _, s := range []string{fmt.Sprint(issued), fmt.Sprintf("%+v", issued), fmt.Sprintf("%#v", issued), fmt.Sprintf("%v", &issued)} {
		if strings.Contains(s, secret) {
			t.Errorf("formatted token holds the secret: %s", s)
		}
	}
}

// events records the events an external client sends.
type events struct{ got []event.Event }

func (r *events) Event(_ runtime.Object, e event.Event)    { r.got = append(r.got, e) }
func (r *events) WithAnnotations(...string) event.Recorder { return r }

type org struct {
	inactivity *cloudflare.ServiceTokenInactivity
}

func (o org) GetAccessOrganization(context.Context) (*cloudflare.AccessOrganization, error) {
	return &cloudflare.AccessOrganization{ServiceTokenInactivity: o.inactivity}, nil
}

var deleteAfter90 = &cloudflare.ServiceTokenInactivity{Enabled: true, InactivityThresholdDays: 90, Action: "delete"}

// A token this resource made and observed, deleted in Cloudflare: by
// default the resource waits, Synced=False with reason DeletedInCloudflare
// naming the likely cause (the account's cleanup) and what to do, Ready
// False, nothing made; set to Recreate, a Warning event says so, status
// records the old ID, and Create makes a new token and publishes it.
func TestATokenDeletedInCloudflare(t *testing.T) {
	notFound := func(string) (*cloudflare.ServiceToken, error) {
		return nil, &cloudflare.APIError{Operation: "cannot get Access service token", Status: 404}
	}
	gone := func() *v1alpha1.AccessServiceToken {
		cr := resource("t-1")
		cr.Status.AtProvider.ID = "t-1"
		cr.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "ci-credentials"}
		return cr
	}

	t.Run("Wait", func(t *testing.T) {
		rec := &events{}
		e := &external{tokens: &fakeTokens{t: t, get: notFound}, org: org{deleteAfter90}, recorder: rec, now: func() time.Time { return now }}
		cr := gone()
		_, err := e.Observe(context.Background(), cr)
		var deleted *DeletedInCloudflareError
		if !errors.As(err, &deleted) || mr.Reason(err) != common.ReasonDeletedInCloudflare {
			t.Fatalf("Observe() error %v; want a DeletedInCloudflareError", err)
		}
		for _, part := range []string{"t-1 was deleted in Cloudflare", "cleanup of inactive service tokens", "90 days", "Access group", "never authenticated", "Secret ci-credentials", "set it to Recreate"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("the message lacks %q: %s", part, err)
			}
		}
		if c := cr.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse {
			t.Errorf("Ready %+v, want False", c)
		}
		if meta.GetExternalName(cr) != "t-1" || len(rec.got) != 0 {
			t.Errorf("external-name %q, events %+v; want the ID kept and no event of its own (crossplane-runtime records the error)", meta.GetExternalName(cr), rec.got)
		}
	})

	t.Run("Recreate", func(t *testing.T) {
		rec := &events{}
		fake := &fakeTokens{t: t, get: notFound, create: func(in cloudflare.ServiceTokenInput) (*cloudflare.IssuedServiceToken, error) {
			return &cloudflare.IssuedServiceToken{ServiceToken: token("t-2"), ClientSecret: secret}, nil
		}}
		e := &external{tokens: fake, org: org{}, recorder: rec, now: func() time.Time { return now }}
		cr := gone()
		cr.Spec.OnDeletedInCloudflare = v1alpha1.OnDeletedInCloudflareRecreate
		obs, err := e.Observe(context.Background(), cr)
		if err != nil || obs.ResourceExists {
			t.Fatalf("Observe() = %+v, %v; want not existing, to be made", obs, err)
		}
		if len(rec.got) != 1 || rec.got[0].Type != event.TypeWarning || rec.got[0].Reason != EventRecreating || !strings.Contains(rec.got[0].Message, "making a new one") {
			t.Errorf("events %+v; want one Warning %s", rec.got, EventRecreating)
		}
		if r := Replaced(cr); r == nil || r.PreviousID != "t-1" || !r.At.Time.Equal(now) {
			t.Errorf("the replacement's record %+v", r)
		}
		cre, err := e.Create(context.Background(), cr)
		if err != nil || meta.GetExternalName(cr) != "t-2" || string(cre.ConnectionDetails[v1alpha1.KeyServiceTokenClientSecret]) != secret {
			t.Errorf("Create() = %v, external-name %q; want t-2 made and its secret published", err, meta.GetExternalName(cr))
		}
		for _, e := range rec.got {
			noSecret(t, "an event", e)
		}
	})

	t.Run("RecreateButObserveOnly", func(t *testing.T) {
		e := &external{tokens: &fakeTokens{t: t, get: notFound}, org: org{}, recorder: &events{}, now: func() time.Time { return now }}
		cr := gone()
		cr.Spec.OnDeletedInCloudflare = v1alpha1.OnDeletedInCloudflareRecreate
		cr.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
		if _, err := e.Observe(context.Background(), cr); mr.Reason(err) != common.ReasonDeletedInCloudflare {
			t.Errorf("Observe() error %v; an Observe-only resource cannot make one, so it reports", err)
		}
	})

	t.Run("NotYetObserved", func(t *testing.T) {
		e := &external{tokens: &fakeTokens{t: t, get: notFound}, org: org{}, recorder: &events{}, now: func() time.Time { return now }}
		cr := resource("t-1")
		if obs, err := e.Observe(context.Background(), cr); err != nil || obs.ResourceExists {
			t.Errorf("Observe() = %+v, %v; a token never observed is simply missing", obs, err)
		}
	})
}

// A token turned off in Cloudflare while the spec asks for it on is turned
// on again, and a Warning event says so, naming the likely cause.
func TestATokenTurnedOffInCloudflareIsTurnedOnWithAWarning(t *testing.T) {
	tok := token("t-1")
	tok.Enabled = ptr.To(false)
	var sent cloudflare.ServiceTokenInput
	fake := &fakeTokens{t: t,
		get: func(string) (*cloudflare.ServiceToken, error) { return &tok, nil },
		update: func(_ string, in cloudflare.ServiceTokenInput) (*cloudflare.ServiceToken, error) {
			sent = in
			on := tok
			on.Enabled = ptr.To(true)
			return &on, nil
		},
	}
	rec := &events{}
	e := &external{tokens: fake, org: org{&cloudflare.ServiceTokenInactivity{Enabled: true, InactivityThresholdDays: 30, Action: "disable"}}, recorder: rec, now: func() time.Time { return now }}
	cr := resource("t-1")
	obs, err := e.Observe(context.Background(), cr)
	if err != nil || obs.ResourceUpToDate || !strings.Contains(obs.Diff, "enabled: false in Cloudflare, true desired") {
		t.Fatalf("Observe() = %+v, %v; want the enabled drift", obs, err)
	}
	if _, err := e.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	if sent.Enabled == nil || !*sent.Enabled {
		t.Errorf("update sent %+v; want enabled true", sent)
	}
	if len(rec.got) != 1 || rec.got[0].Reason != EventTurningOn || !strings.Contains(rec.got[0].Message, "30 days are disabled") {
		t.Errorf("events %+v; want one %s naming the cleanup", rec.got, EventTurningOn)
	}
	if !ptr.Deref(cr.Status.AtProvider.Enabled, false) {
		t.Errorf("status.atProvider.enabled %v, want true", cr.Status.AtProvider.Enabled)
	}
}
