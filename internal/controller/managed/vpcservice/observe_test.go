package vpcservice

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

const (
	tunnelA = "11111111-1111-4111-8111-111111111111"
	tunnelB = "22222222-2222-4222-8222-222222222222"
	svcID   = "33333333-3333-4333-8333-333333333333"
)

// redis is the design's example: a tcp service found by hostname through a
// tunnel's resolver network.
func redis() v1alpha1.VPCServiceParameters {
	return v1alpha1.VPCServiceParameters{
		Name:    "redis-cache-dev",
		Type:    "tcp",
		TCPPort: ptr.To[int64](6379),
		Host: v1alpha1.ServiceHost{
			Hostname:        ptr.To("redis.team-a.svc.cluster.local"),
			ResolverNetwork: &v1alpha1.ResolverNetwork{TunnelID: ptr.To(tunnelA)},
		},
	}
}

func redisService() cloudflare.Service {
	return cloudflare.Service{
		Name:    "redis-cache-dev",
		Type:    "tcp",
		TCPPort: ptr.To[int64](6379),
		Host: cloudflare.ServiceHost{
			Hostname:        "redis.team-a.svc.cluster.local",
			ResolverNetwork: &cloudflare.ResolverNetwork{TunnelID: tunnelA},
		},
	}
}

func TestServiceFrom(t *testing.T) {
	cases := map[string]struct {
		in   func(p *v1alpha1.VPCServiceParameters)
		want func(s *cloudflare.Service)
	}{
		"MinimalTCPByHostname": {},
		"EverythingOnAResolverNetwork": {
			in: func(p *v1alpha1.VPCServiceParameters) {
				p.AppProtocol = ptr.To("postgresql")
				p.Host.ResolverNetwork.ResolverIPs = []string{"10.0.0.53", "10.0.0.54"}
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("verify_ca")}
			},
			want: func(s *cloudflare.Service) {
				s.AppProtocol = "postgresql"
				s.Host.ResolverNetwork.ResolverIPs = []string{"10.0.0.53", "10.0.0.54"}
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "verify_ca"}
			},
		},
		"HTTPByAddressOnANetwork": {
			in: func(p *v1alpha1.VPCServiceParameters) {
				p.Type, p.TCPPort, p.HTTPPort, p.HTTPSPort = "http", nil, ptr.To[int64](80), ptr.To[int64](443)
				p.Host = v1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), IPv6: ptr.To("2001:db8::7"), Network: &v1alpha1.ServiceNetwork{TunnelID: ptr.To(tunnelB)}}
			},
			want: func(s *cloudflare.Service) {
				s.Type, s.TCPPort, s.HTTPPort, s.HTTPSPort = "http", nil, ptr.To[int64](80), ptr.To[int64](443)
				s.Host = cloudflare.ServiceHost{IPv4: "10.0.0.7", IPv6: "2001:db8::7", Network: &cloudflare.ServiceNetwork{TunnelID: tunnelB}}
			},
		},
		"TLSSettingsWithoutAModeAreOmitted": {
			// cert_verification_mode is required inside tls_settings.
			in: func(p *v1alpha1.VPCServiceParameters) { p.TLSSettings = &v1alpha1.TLSSettings{} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, want := redis(), redisService()
			if tc.in != nil {
				tc.in(&in)
			}
			if tc.want != nil {
				tc.want(&want)
			}
			if diff := cmp.Diff(want, ServiceFrom(in)); diff != "" {
				t.Errorf("ServiceFrom(...): -want, +got:\n%s", diff)
			}
		})
	}

	t.Run("DoesNotAliasTheSpec", func(t *testing.T) {
		p := redis()
		p.Host.ResolverNetwork.ResolverIPs = []string{"10.0.0.53"}
		s := ServiceFrom(p)
		*s.TCPPort = 1
		s.Host.ResolverNetwork.ResolverIPs[0] = "x"
		if *p.TCPPort != 6379 || p.Host.ResolverNetwork.ResolverIPs[0] != "10.0.0.53" {
			t.Errorf("writing to the built service changed the spec: %+v", p)
		}
	})
}

func TestDiff(t *testing.T) {
	cases := map[string]struct {
		want func(p *v1alpha1.VPCServiceParameters)
		got  func(s *cloudflare.Service)
		diff string
	}{
		"Equal": {},
		"ServerFieldsAreIgnored": {
			got: func(s *cloudflare.Service) {
				s.ServiceID, s.CreatedAt, s.UpdatedAt = svcID, ptr.To(time.Now()), ptr.To(time.Now())
			},
		},
		"UnsetOptionalsAreDontCare": {
			got: func(s *cloudflare.Service) {
				s.AppProtocol = "mysql"
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "disabled"}
			},
		},
		"TLSSettingsWithoutModeAreDontCare": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.TLSSettings = &v1alpha1.TLSSettings{} },
			got: func(s *cloudflare.Service) {
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "verify_full"}
			},
		},
		"NameAndType": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.Name, p.Type = "new", "http" },
			diff: `name: "redis-cache-dev" in Cloudflare, "new" desired; type: "tcp" in Cloudflare, "http" desired`,
		},
		"Ports": {
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.TCPPort, p.HTTPSPort = ptr.To[int64](6380), ptr.To[int64](443)
			},
			got:  func(s *cloudflare.Service) { s.HTTPPort = ptr.To[int64](80) },
			diff: "tcpPort: 6379 in Cloudflare, 6380 desired; httpPort: 80 in Cloudflare, unset desired; httpsPort: unset in Cloudflare, 443 desired",
		},
		"PortRemoved": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.TCPPort = nil },
			diff: "tcpPort: 6379 in Cloudflare, unset desired",
		},
		"AppProtocolSet": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.AppProtocol = ptr.To("postgresql") },
			diff: `appProtocol: unset in Cloudflare, "postgresql" desired`,
		},
		"AppProtocolChanged": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.AppProtocol = ptr.To("postgresql") },
			got:  func(s *cloudflare.Service) { s.AppProtocol = "mysql" },
			diff: `appProtocol: "mysql" in Cloudflare, "postgresql" desired`,
		},
		"Hostname": {
			got:  func(s *cloudflare.Service) { s.Host.Hostname = "redis.team-b.svc.cluster.local" },
			diff: `host.hostname: "redis.team-b.svc.cluster.local" in Cloudflare, "redis.team-a.svc.cluster.local" desired`,
		},
		"HostnameCaseIsNoDifference": {
			got: func(s *cloudflare.Service) { s.Host.Hostname = "Redis.Team-A.svc.cluster.local" },
		},
		"ResolverTunnel": {
			got:  func(s *cloudflare.Service) { s.Host.ResolverNetwork.TunnelID = tunnelB },
			diff: `host.resolverNetwork.tunnelId: "` + tunnelB + `" in Cloudflare, "` + tunnelA + `" desired`,
		},
		"ResolverIPs": {
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.Host.ResolverNetwork.ResolverIPs = []string{"10.0.0.53", "10.0.0.54"}
			},
			got: func(s *cloudflare.Service) { s.Host.ResolverNetwork.ResolverIPs = []string{"10.0.0.54", "10.0.0.53"} },
			// The order is significant: the first resolver is tried first.
			diff: `host.resolverNetwork.resolverIps: ["10.0.0.54" "10.0.0.53"] in Cloudflare, ["10.0.0.53" "10.0.0.54"] desired`,
		},
		"EmptyResolverIPsEqualAbsent": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.Host.ResolverNetwork.ResolverIPs = []string{} },
		},
		"ResolverIPSpellingIsNoDifference": {
			want: func(p *v1alpha1.VPCServiceParameters) { p.Host.ResolverNetwork.ResolverIPs = []string{"2001:DB8::53"} },
			got:  func(s *cloudflare.Service) { s.Host.ResolverNetwork.ResolverIPs = []string{"2001:db8:0::53"} },
		},
		"HostnameToAddress": {
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.Host = v1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), Network: &v1alpha1.ServiceNetwork{TunnelID: ptr.To(tunnelA)}}
			},
			diff: `host.hostname: "redis.team-a.svc.cluster.local" in Cloudflare, unset desired; ` +
				`host.ipv4: unset in Cloudflare, "10.0.0.7" desired; ` +
				`host.network: unset in Cloudflare, set desired; ` +
				`host.resolverNetwork: tunnel "` + tunnelA + `" in Cloudflare, unset desired`,
		},
		"Addresses": {
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.Host = v1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), IPv6: ptr.To("2001:DB8::7"), Network: &v1alpha1.ServiceNetwork{TunnelID: ptr.To(tunnelA)}}
			},
			got: func(s *cloudflare.Service) {
				s.Host = cloudflare.ServiceHost{IPv4: "10.0.0.8", IPv6: "2001:db8::7", Network: &cloudflare.ServiceNetwork{TunnelID: tunnelB}}
			},
			diff: `host.ipv4: "10.0.0.8" in Cloudflare, "10.0.0.7" desired; host.network.tunnelId: "` + tunnelB + `" in Cloudflare, "` + tunnelA + `" desired`,
		},
		"TLSMode": {
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("verify_ca")}
			},
			got:  func(s *cloudflare.Service) { s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "disabled"} },
			diff: `tlsSettings.certVerificationMode: "disabled" in Cloudflare, "verify_ca" desired`,
		},
		"TLSModeMissingInCloudflare": {
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("verify_ca")}
			},
			diff: `tlsSettings.certVerificationMode: unset in Cloudflare, "verify_ca" desired`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want, got := redis(), redisService()
			if tc.want != nil {
				tc.want(&want)
			}
			if tc.got != nil {
				tc.got(&got)
			}
			if diff := cmp.Diff(tc.diff, Diff(want, got)); diff != "" {
				t.Errorf("Diff(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestLateInitialize(t *testing.T) {
	cases := map[string]struct {
		spec    func(p *v1alpha1.VPCServiceParameters)
		got     func(s *cloudflare.Service)
		want    func(p *v1alpha1.VPCServiceParameters)
		changed bool
	}{
		"NothingToTake": {},
		"TakesWhatIsUnset": {
			got: func(s *cloudflare.Service) {
				s.AppProtocol = "postgresql"
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "verify_full"}
			},
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.AppProtocol = ptr.To("postgresql")
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("verify_full")}
			},
			changed: true,
		},
		"FillsAnEmptyTLSBlock": {
			spec: func(p *v1alpha1.VPCServiceParameters) { p.TLSSettings = &v1alpha1.TLSSettings{} },
			got: func(s *cloudflare.Service) {
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "verify_ca"}
			},
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("verify_ca")}
			},
			changed: true,
		},
		"KeepsWhatIsSet": {
			spec: func(p *v1alpha1.VPCServiceParameters) {
				p.AppProtocol = ptr.To("mysql")
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("disabled")}
			},
			got: func(s *cloudflare.Service) {
				s.AppProtocol = "postgresql"
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "verify_full"}
			},
			want: func(p *v1alpha1.VPCServiceParameters) {
				p.AppProtocol = ptr.To("mysql")
				p.TLSSettings = &v1alpha1.TLSSettings{CertVerificationMode: ptr.To("disabled")}
			},
		},
		"EmptyTLSInCloudflareAddsNoBlock": {
			got: func(s *cloudflare.Service) { s.TLSSettings = &cloudflare.TLSSettings{} },
		},
		"NeverTouchesRequiredFields": {
			// Ports and host are the user's to set: a difference there is
			// drift to correct, not a default to take.
			got: func(s *cloudflare.Service) {
				s.TCPPort = ptr.To[int64](1)
				s.Host.Hostname = "elsewhere"
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec, got := redis(), redisService()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			if tc.got != nil {
				tc.got(&got)
			}
			want := *spec.DeepCopy()
			if tc.want != nil {
				want = redis()
				tc.want(&want)
			}
			changed := LateInitialize(&spec, got)
			if changed != tc.changed {
				t.Errorf("LateInitialize(...) = %t, want %t", changed, tc.changed)
			}
			if diff := cmp.Diff(want, spec); diff != "" {
				t.Errorf("spec after LateInitialize: -want, +got:\n%s", diff)
			}
			// What was late-initialised is no difference to correct.
			if d := Diff(spec, got); tc.changed && (strings.Contains(d, "appProtocol") || strings.Contains(d, "tlsSettings")) {
				t.Errorf("a late-initialised spec still differs: %s", d)
			}
		})
	}
}

func TestReferences(t *testing.T) {
	cr := &v1alpha1.VPCService{Spec: v1alpha1.VPCServiceSpec{ForProvider: v1alpha1.VPCServiceParameters{Host: v1alpha1.ServiceHost{
		Network:         &v1alpha1.ServiceNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "a", Namespace: "other"}},
		ResolverNetwork: &v1alpha1.ResolverNetwork{TunnelIDSelector: &xpv2.NamespacedSelector{Namespace: "third"}},
	}}}}
	var got []string
	for _, ns := range references(cr) {
		if ns != nil {
			got = append(got, *ns)
		}
	}
	// Selectors stay in the namespace; a reference may name a shared
	// tunnel's, which mr checks (tunnelRefs).
	if diff := cmp.Diff([]string{"third"}, got); diff != "" {
		t.Errorf("references(...): -want, +got:\n%s", diff)
	}
	if refs := tunnelRefs(cr); len(refs) != 2 || refs[0].Namespace != "other" || refs[1] != nil {
		t.Errorf("tunnelRefs(...): %+v, want the network's reference and the resolver network's none", refs)
	}
	if refs := references(&v1alpha1.VPCService{}); len(refs) != 0 {
		t.Errorf("references of a service without networks: %v", refs)
	}
}

// fakeServices answers the external client's calls; calls a case does not
// expect panic on the nil embedded interface.
type fakeServices struct {
	cloudflare.ServicesAPI
	list   func() ([]cloudflare.Service, error)
	get    func(id string) (*cloudflare.Service, error)
	create func(s cloudflare.Service) (*cloudflare.Service, error)
	delete func(id string) error
}

func (f *fakeServices) ListServices(context.Context) ([]cloudflare.Service, error) { return f.list() }

// ListServicesSince is ListServices: the fake holds no snapshot to be stale.
func (f *fakeServices) ListServicesSince(context.Context, time.Time) ([]cloudflare.Service, error) {
	return f.list()
}
func (f *fakeServices) GetService(_ context.Context, id string) (*cloudflare.Service, error) {
	return f.get(id)
}
func (f *fakeServices) CreateService(_ context.Context, s cloudflare.Service) (*cloudflare.Service, error) {
	return f.create(s)
}
func (f *fakeServices) DeleteService(_ context.Context, id string) error { return f.delete(id) }

var (
	errBoom     = errors.New("boom")
	errNotFound = &cloudflare.APIError{Operation: "cannot get service", Status: http.StatusNotFound}
	errConflict = &cloudflare.APIError{Operation: "cannot create service", Status: http.StatusConflict, Codes: []int{1014}, Messages: []string{"exists"}}
)

func withID(s cloudflare.Service, id string) cloudflare.Service {
	s.ServiceID = id
	return s
}

func newCR(externalName string) *v1alpha1.VPCService {
	cr := &v1alpha1.VPCService{Spec: v1alpha1.VPCServiceSpec{ForProvider: redis()}}
	if externalName != "" {
		meta.SetExternalName(cr, externalName)
	}
	return cr
}

func pendingSince(cr *v1alpha1.VPCService, t time.Time) *v1alpha1.VPCService {
	meta.SetExternalCreatePending(cr, t)
	return cr
}

func createdAt(s cloudflare.Service, t time.Time) cloudflare.Service {
	s.CreatedAt = &t
	return s
}

func TestObserve(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	other := withID(redisService(), "44444444-4444-4444-8444-444444444444")
	other.Name = "another"
	cases := map[string]struct {
		cr           *v1alpha1.VPCService
		svc          fakeServices
		want         managed.ExternalObservation
		err          error
		externalName string
		atProvider   v1alpha1.VPCServiceObservation
	}{
		"NoExternalNameAndNoneOfThatName": {
			cr:  newCR(""),
			svc: fakeServices{list: func() ([]cloudflare.Service, error) { return []cloudflare.Service{other}, nil }},
		},
		"NoExternalNameAdoptsWhatItsOwnCreateLeft": {
			// A create whose response was lost: the service appeared after
			// this resource began creating it.
			cr: pendingSince(newCR(""), created.Add(-time.Second)),
			svc: fakeServices{list: func() ([]cloudflare.Service, error) {
				return []cloudflare.Service{other, createdAt(withID(redisService(), svcID), created)}, nil
			}},
			want:         managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
			externalName: svcID,
			atProvider:   v1alpha1.VPCServiceObservation{ServiceID: svcID, CreatedAt: mr.Time(&created)},
		},
		"NoExternalNameRefusesOneMadeElsewhere": {
			// Same name, but it existed before this resource ever tried
			// to create it: someone else's.
			cr: pendingSince(newCR(""), created.Add(time.Hour)),
			svc: fakeServices{list: func() ([]cloudflare.Service, error) {
				return []cloudflare.Service{createdAt(withID(redisService(), svcID), created)}, nil
			}},
			err: errors.Wrap(&mr.NameTakenError{Kind: "VPC service", Name: "redis-cache-dev", ID: svcID, Created: created}, "cannot look for an existing service"),
		},
		"NoExternalNameNeverCreatedRefuses": {
			cr: newCR(""),
			svc: fakeServices{list: func() ([]cloudflare.Service, error) {
				return []cloudflare.Service{createdAt(withID(redisService(), svcID), created)}, nil
			}},
			err: errors.Wrap(&mr.NameTakenError{Kind: "VPC service", Name: "redis-cache-dev", ID: svcID, Created: created}, "cannot look for an existing service"),
		},
		"NoExternalNameAndSeveralOfThatName": {
			cr: newCR(""),
			svc: fakeServices{list: func() ([]cloudflare.Service, error) {
				return []cloudflare.Service{withID(redisService(), svcID), withID(redisService(), "x")}, nil
			}},
			err: errors.Wrap(errors.New(`2 services are named "redis-cache-dev"; set the external-name to the ID of the one to manage`), "cannot look for an existing service"),
		},
		"ListFails": {
			cr:  newCR(""),
			svc: fakeServices{list: func() ([]cloudflare.Service, error) { return nil, errBoom }},
			err: errors.Wrap(errBoom, "cannot look for an existing service"),
		},
		"GoneInCloudflare": {
			cr:           newCR(svcID),
			svc:          fakeServices{get: func(string) (*cloudflare.Service, error) { return nil, errNotFound }},
			externalName: svcID,
		},
		"GetFails": {
			cr:           newCR(svcID),
			svc:          fakeServices{get: func(string) (*cloudflare.Service, error) { return nil, errBoom }},
			err:          errors.Wrap(errBoom, "cannot get service"),
			externalName: svcID,
		},
		"UpToDateWithLateInit": {
			cr: newCR(svcID),
			svc: fakeServices{get: func(id string) (*cloudflare.Service, error) {
				s := withID(redisService(), id)
				s.CreatedAt, s.UpdatedAt = &created, &created
				s.TLSSettings = &cloudflare.TLSSettings{CertVerificationMode: "verify_full"}
				return &s, nil
			}},
			want:         managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
			externalName: svcID,
			atProvider:   v1alpha1.VPCServiceObservation{ServiceID: svcID, CreatedAt: ptr.To(metav1.NewTime(created)), UpdatedAt: ptr.To(metav1.NewTime(created))},
		},
		"Drifted": {
			cr: newCR(svcID),
			svc: fakeServices{get: func(id string) (*cloudflare.Service, error) {
				s := withID(redisService(), id)
				s.TCPPort = ptr.To[int64](1)
				return &s, nil
			}},
			want:         managed.ExternalObservation{ResourceExists: true, Diff: "tcpPort: 1 in Cloudflare, 6379 desired"},
			externalName: svcID,
			atProvider:   v1alpha1.VPCServiceObservation{ServiceID: svcID},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := &external{services: &tc.svc}
			got, err := e.Observe(context.Background(), tc.cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Errorf("Observe(...): -want error, +got error:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Observe(...): -want, +got:\n%s", diff)
			}
			if en := meta.GetExternalName(tc.cr); en != tc.externalName {
				t.Errorf("external-name %q, want %q", en, tc.externalName)
			}
			if diff := cmp.Diff(tc.atProvider, tc.cr.Status.AtProvider); diff != "" {
				t.Errorf("atProvider: -want, +got:\n%s", diff)
			}
			if avail := tc.cr.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable; avail != tc.want.ResourceExists {
				t.Errorf("Available %t, want %t", avail, tc.want.ResourceExists)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		svc          fakeServices
		err          error
		externalName string
	}{
		"Created": {
			svc: fakeServices{create: func(s cloudflare.Service) (*cloudflare.Service, error) {
				if diff := cmp.Diff(redisService(), s); diff != "" {
					t.Errorf("CreateService(...): -want, +got:\n%s", diff)
				}
				return ptr.To(withID(s, svcID)), nil
			}},
			externalName: svcID,
		},
		"AlreadyExistsIsNameTaken": {
			// Observe missed it (a listing older than the service): it was
			// there before this create began, so it is not this one's, and
			// no later Observe may take it for what this create left.
			svc: fakeServices{
				create: func(cloudflare.Service) (*cloudflare.Service, error) { return nil, errConflict },
				list:   func() ([]cloudflare.Service, error) { return []cloudflare.Service{withID(redisService(), svcID)}, nil },
			},
			err: errors.Wrap(&mr.NameTakenError{Kind: "VPC service", Name: "redis-cache-dev", ID: svcID}, "cannot create service"),
		},
		"Fails": {
			svc: fakeServices{create: func(cloudflare.Service) (*cloudflare.Service, error) { return nil, errBoom }},
			err: errors.Wrap(errBoom, "cannot create service"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := newCR("")
			_, err := (&external{services: &tc.svc}).Create(context.Background(), cr)
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Errorf("Create(...): -want error, +got error:\n%s", diff)
			}
			if tc.err != nil && strings.Contains(tc.err.Error(), "name taken") && cr.GetAnnotations()[mr.AnnotationCreateRefusedBy] != svcID {
				t.Errorf("the service that refused the create is not remembered: annotations %v", cr.GetAnnotations())
			}
			if en := meta.GetExternalName(cr); en != tc.externalName {
				t.Errorf("external-name %q, want %q", en, tc.externalName)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		err  error
		want error
	}{
		"Deleted":        {},
		"AlreadyGone":    {err: errNotFound},
		"FailsOtherwise": {err: errBoom, want: errors.Wrap(errBoom, "cannot delete service")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeServices{delete: func(id string) error {
				if id != svcID {
					t.Errorf("DeleteService(%q), want %q", id, svcID)
				}
				return tc.err
			}}
			_, err := (&external{services: f}).Delete(context.Background(), newCR(svcID))
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("Delete(...): -want error, +got error:\n%s", diff)
			}
		})
	}
}
