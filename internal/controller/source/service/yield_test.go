package service

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/service/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Issue 34, bug 5: a Service whose public claim on a hostname lost makes no
// private route for it, and drops the one it has even while a problem keeps
// the rest; its PublicHostname stays, waiting in line.
func TestDesiredExposureYieldsTheRouteOfALostPublicClaim(t *testing.T) {
	route := func(name, host string) *ztv1alpha1.HostnameRoute {
		return &ztv1alpha1.HostnameRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ztv1alpha1.HostnameRouteSpec{ForProvider: ztv1alpha1.HostnameRouteParameters{Hostname: host}}}
	}
	ph := &v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Name: "x-host"}, Spec: v1alpha1.PublicHostnameSpec{Hostname: "X.example.com"}}
	res := translate.Exposure{Wanted: true, Result: expose.Result{Routes: []*ztv1alpha1.HostnameRoute{route("x-route", "x.example.com")}, Published: []*v1alpha1.PublicHostname{ph}}}
	withProblem := res
	withProblem.Problems = []publish.Problem{{Field: "f", Message: "bad"}}
	cases := map[string]struct {
		res       translate.Exposure
		yielded   map[string]string
		undecided map[string]bool
		want      []string
		drops     bool
		awaits    bool
	}{
		"Held":                     {res: res, want: []string{"HostnameRoute/x-route", "PublicHostname/x-host"}},
		"Yielded":                  {res: res, yielded: map[string]string{"x.example.com": "team-a/x"}, want: []string{"PublicHostname/x-host"}, drops: true},
		"YieldedDespiteAProblem":   {res: withProblem, yielded: map[string]string{"x.example.com": "team-a/x"}, drops: true},
		"AnotherHostnameIsNotDrop": {res: res, yielded: map[string]string{"y.example.com": "team-a/y"}, want: []string{"HostnameRoute/x-route", "PublicHostname/x-host"}},
		// The claim's answer is not in yet: no route is made, one made
		// already is kept (awaits), the PublicHostname is made.
		"Undecided":          {res: res, undecided: map[string]bool{"x.example.com": true}, want: []string{"PublicHostname/x-host"}, awaits: true},
		"AnotherUndecided":   {res: res, undecided: map[string]bool{"y.example.com": true}, want: []string{"HostnameRoute/x-route", "PublicHostname/x-host"}},
		"YieldedOverAwaited": {res: res, yielded: map[string]string{"x.example.com": "team-a/x"}, undecided: map[string]bool{"x.example.com": true}, want: []string{"PublicHostname/x-host"}, drops: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := desiredExposure(tc.res, tc.yielded, tc.undecided)
			var got []string
			for _, o := range d.objs {
				got = append(got, source.Key(o))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
			if got := d.drops(route("x-route", "x.example.com")); got != tc.drops {
				t.Errorf("drops the route: %t, want %t", got, tc.drops)
			}
			if got := d.awaits(route("x-route", "x.example.com")); got != tc.awaits {
				t.Errorf("awaits the claim's answer: %t, want %t", got, tc.awaits)
			}
			if d.drops(ph) {
				t.Error("drops the PublicHostname, which waits in line")
			}
		})
	}
}
