package accessapplication

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func params(mod ...func(*v1alpha1.AccessApplicationParameters)) v1alpha1.AccessApplicationParameters {
	p := v1alpha1.AccessApplicationParameters{
		Name: "grafana", Domain: "grafana.example.com",
		Policies: []v1alpha1.AccessApplicationPolicy{{PolicyID: ptr.To("p-employees")}, {PolicyID: ptr.To("p-ci"), Precedence: ptr.To[int64](5)}},
	}
	for _, m := range mod {
		m(&p)
	}
	return p
}

func TestInput(t *testing.T) {
	cases := map[string]struct {
		p    v1alpha1.AccessApplicationParameters
		want cloudflare.AccessApplicationInput
	}{
		"DomainIsTheFirstDestination": {
			p: params(),
			want: cloudflare.AccessApplicationInput{
				Name: "grafana", Domain: "grafana.example.com", AppLauncherVisible: true,
				Destinations: []cloudflare.AccessDestination{{Type: "public", URI: "grafana.example.com"}},
				Policies:     []cloudflare.AccessPolicyRef{{ID: "p-employees", Precedence: 1}, {ID: "p-ci", Precedence: 5}},
			},
		},
		"PrecedenceOrdersPolicies": {
			p: params(func(p *v1alpha1.AccessApplicationParameters) { p.Policies[0].Precedence = ptr.To[int64](9) }),
			want: cloudflare.AccessApplicationInput{
				Name: "grafana", Domain: "grafana.example.com", AppLauncherVisible: true,
				Destinations: []cloudflare.AccessDestination{{Type: "public", URI: "grafana.example.com"}},
				Policies:     []cloudflare.AccessPolicyRef{{ID: "p-ci", Precedence: 5}, {ID: "p-employees", Precedence: 9}},
			},
		},
		"MoreDestinationsWithoutRepeats": {
			p: params(func(p *v1alpha1.AccessApplicationParameters) {
				p.Destinations = []string{"Grafana.example.com", "grafana.example.com/api"}
				p.SessionDuration = ptr.To("8h")
				p.AppLauncherVisible = ptr.To(false)
				p.AllowedIdentityProviders = []string{"idp-1"}
			}),
			want: cloudflare.AccessApplicationInput{
				Name: "grafana", Domain: "grafana.example.com", SessionDuration: "8h", AllowedIdPs: []string{"idp-1"},
				Destinations: []cloudflare.AccessDestination{{Type: "public", URI: "grafana.example.com"}, {Type: "public", URI: "grafana.example.com/api"}},
				Policies:     []cloudflare.AccessPolicyRef{{ID: "p-employees", Precedence: 1}, {ID: "p-ci", Precedence: 5}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Input(tc.p)); diff != "" {
				t.Errorf("Input() -want +got:\n%s", diff)
			}
		})
	}
}

func TestUnresolvedPoliciesAreNamedAndNeverWritten(t *testing.T) {
	p := params(func(p *v1alpha1.AccessApplicationParameters) {
		p.Policies = append(p.Policies, v1alpha1.AccessApplicationPolicy{PolicyIDRef: nil})
	})
	if got := Unresolved(p); !cmp.Equal(got, []string{"spec.forProvider.policies[2]"}) {
		t.Errorf("Unresolved() = %v", got)
	}
	cr := &v1alpha1.AccessApplication{Spec: v1alpha1.AccessApplicationSpec{ForProvider: p}}
	if err := resolved(cr); err == nil || !strings.Contains(err.Error(), "policies[2]") {
		t.Errorf("resolved() = %v, want a refusal naming policies[2]", err)
	}
}

func TestDiff(t *testing.T) {
	held := func(mod ...func(*cloudflare.AccessApplication)) cloudflare.AccessApplication {
		a := cloudflare.AccessApplication{
			ID: "a-1", AUD: strings.Repeat("a", 64), Name: "grafana", Type: "self_hosted", Domain: "Grafana.example.com",
			Destinations: []cloudflare.AccessDestination{{Type: "public", URI: "grafana.example.com"}}, SessionDuration: "24h", AppLauncherVisible: true,
			Policies: []cloudflare.AccessPolicyRef{{ID: "p-ci", Precedence: 5}, {ID: "p-employees", Precedence: 1}},
		}
		for _, m := range mod {
			m(&a)
		}
		return a
	}
	cases := map[string]struct {
		got  cloudflare.AccessApplication
		want string // a line the diff must hold; "" means up to date
	}{
		"UpToDate":            {got: held()},
		"PolicyRemovedByHand": {got: held(func(a *cloudflare.AccessApplication) { a.Policies = a.Policies[:1] }), want: "policies: [p-ci] in Cloudflare, [p-employees p-ci] desired"},
		"PoliciesReordered":   {got: held(func(a *cloudflare.AccessApplication) { a.Policies[1].Precedence = 7 }), want: "policies: [p-ci p-employees] in Cloudflare"},
		"DestinationAddedByHand": {got: held(func(a *cloudflare.AccessApplication) {
			a.Destinations = append(a.Destinations, cloudflare.AccessDestination{Type: "public", URI: "other.example.com"})
		}), want: "destinations:"},
		"HiddenFromTheLauncher": {got: held(func(a *cloudflare.AccessApplication) { a.AppLauncherVisible = false }), want: "appLauncherVisible: false in Cloudflare, true desired"},
		"Renamed":               {got: held(func(a *cloudflare.AccessApplication) { a.Name = "x" }), want: `name: "x" in Cloudflare, "grafana" desired`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Diff(params(), tc.got)
			if tc.want == "" && d != "" || !strings.Contains(d, tc.want) {
				t.Errorf("Diff() = %q, want %q", d, tc.want)
			}
		})
	}
}

// A policy listed twice is refused before any write, naming both places,
// instead of meeting Cloudflare's refusal.
func TestARepeatedPolicyIsNamedAndNeverWritten(t *testing.T) {
	if r := Repeated(params()); r != "" {
		t.Errorf("Repeated() = %q for distinct policies", r)
	}
	p := params(func(p *v1alpha1.AccessApplicationParameters) {
		p.Policies = append(p.Policies, v1alpha1.AccessApplicationPolicy{PolicyID: ptr.To("p-employees")})
	})
	cr := &v1alpha1.AccessApplication{Spec: v1alpha1.AccessApplicationSpec{ForProvider: p}}
	err := resolved(cr)
	if err == nil || !strings.Contains(err.Error(), "policies[0] and [2]") || !strings.Contains(err.Error(), "p-employees") {
		t.Errorf("resolved() = %v, want a refusal naming policies[0] and [2]", err)
	}
}
