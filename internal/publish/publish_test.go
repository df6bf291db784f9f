package publish

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// The rules' cases are the golden corpus (golden_test.go); these are what
// its YAML cannot say.

const aud = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func rule(host, path, service string, o *ztv1alpha1.OriginRequest) ztv1alpha1.IngressRule {
	r := ztv1alpha1.IngressRule{Hostname: ptr.To(host), Service: service, OriginRequest: o}
	if path != "" {
		r.Path = ptr.To(path)
	}
	return r
}

// A path with a byte that is not UTF-8 (which YAML cannot carry) would not
// compile in cloudflared: it is refused.
func TestAPathThatIsNotUTF8(t *testing.T) {
	s := v1alpha1.PublicHostnameSpec{Hostname: "app.example.com", Paths: []v1alpha1.PathOrigin{
		{Path: "/\xff", Origin: v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: "api", Port: intstr.FromInt32(80)}}},
	}}
	got := Rules(s, Env{Namespace: "team-a"})
	if len(got.Problems) != 1 || got.Problems[0].Field != "spec.paths[0].path" || len(got.Rules) > 0 {
		t.Errorf("Rules = %+v, want one problem with spec.paths[0].path and no rules", got)
	}
}

func TestRuleCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 rules", 1: "1 rule", 2: "2 rules", 11: "11 rules"} {
		if got := RuleCount(n); got != want {
			t.Errorf("RuleCount(%d) = %q, want %q", n, got, want)
		}
	}
}
