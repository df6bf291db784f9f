package origin

import (
	"errors"
	"strings"
	"testing"
)

// leads is a Lookup from a table, "<namespace>/<name>" → Lead.
func leads(m map[string]Lead) Lookup {
	return func(ns, name string) (Lead, error) { return m[ns+"/"+name], nil }
}

func TestFollow(t *testing.T) {
	own := Source{Namespace: "team-a"}
	world := leads(map[string]Lead{
		"team-a/web":         {},
		"team-a/meta":        {ExternalName: "metadata.google.internal"},
		"team-a/meta-dot":    {ExternalName: "Metadata.Google.Internal."},
		"team-a/imds":        {ExternalName: "169.254.169.254"},
		"team-a/imds6":       {ExternalName: "fd00:ec2::254"},
		"team-a/decimal":     {ExternalName: "2852039166"},
		"team-a/api":         {ExternalName: "kubernetes.default.svc.cluster.local"},
		"team-a/ext":         {ExternalName: "db.internal.example.com"},
		"team-a/public":      {ExternalName: "api.example.org"},
		"team-a/alias":       {ExternalName: "web.team-a.svc.cluster.local"},
		"team-a/alias2":      {ExternalName: "alias.team-a.svc.cluster.local"},
		"team-a/to-meta":     {ExternalName: "meta.team-a.svc.cluster.local"},
		"team-a/to-b":        {ExternalName: "web.team-b.svc.cluster.local"},
		"team-a/to-c":        {ExternalName: "meta.team-c.svc.cluster.local"},
		"team-a/loop":        {ExternalName: "loop.team-a.svc.cluster.local"},
		"team-a/by-hand":     {Addresses: []string{"10.0.0.7", "169.254.169.254"}},
		"team-a/azure":       {Addresses: []string{"168.63.129.16"}},
		"team-a/listed-ip":   {Addresses: []string{"10.20.1.1"}},
		"team-a/fqdn":        {Addresses: []string{"metadata.goog"}},
		"team-a/own-pod":     {Addresses: []string{"10.244.0.5"}, Pods: map[string]bool{"10.244.0.5": true}},
		"team-a/pod-and-not": {Addresses: []string{"10.244.0.5", "10.9.9.9"}, Pods: map[string]bool{"10.244.0.5": true}},
		"team-a/meta-pod":    {Addresses: []string{"100.100.100.200"}, Pods: map[string]bool{"100.100.100.200": true}},
		"team-c/meta":        {ExternalName: "metadata.google.internal"},
	})
	listed := []string{"internal.example.com", "10.20.0.0/16", "team-c.svc", "metadata.google.internal", "169.254.0.0/16", "kubernetes.default.svc"}
	cases := map[string]struct {
		origin  string
		allowed []string
		want    Rule
		says    string
	}{
		"a Service with no lead":            {origin: "http://web.team-a.svc.cluster.local:80"},
		"a Service that does not exist":     {origin: "http://gone.team-a.svc:80"},
		"not a Service":                     {origin: "https://db.internal.example.com", allowed: listed},
		"ExternalName to metadata":          {origin: "http://meta.team-a.svc.cluster.local:80", want: RuleMetadata, says: "Service team-a/meta is an ExternalName Service for metadata.google.internal"},
		"ExternalName to metadata, listed":  {origin: "http://meta.team-a.svc:80", allowed: listed, want: RuleMetadata},
		"ExternalName, case and dot":        {origin: "http://meta-dot.team-a.svc:80", want: RuleMetadata},
		"ExternalName to an IP":             {origin: "http://imds.team-a.svc:80", allowed: listed, want: RuleMetadata, says: "169.254.169.254"},
		"ExternalName to IMDS over IPv6":    {origin: "http://imds6.team-a.svc:80", want: RuleMetadata},
		"ExternalName in decimal":           {origin: "http://decimal.team-a.svc:80", want: RuleUnreadable},
		"ExternalName to the API server":    {origin: "https://api.team-a.svc.cluster.local:443", want: RuleNotListed, says: "Kubernetes API server"},
		"to the API server, listed":         {origin: "https://api.team-a.svc:443", allowed: listed},
		"ExternalName elsewhere":            {origin: "http://public.team-a.svc:80", want: RuleNotListed, says: "api.example.org"},
		"ExternalName elsewhere, listed":    {origin: "http://ext.team-a.svc:80", allowed: listed},
		"ExternalName to an own Service":    {origin: "http://alias.team-a.svc:80"},
		"two hops to an own Service":        {origin: "http://alias2.team-a.svc:80"},
		"two hops to metadata":              {origin: "http://to-meta.team-a.svc:80", want: RuleMetadata, says: "Service team-a/meta"},
		"to another namespace":              {origin: "http://to-b.team-a.svc:80", want: RuleOtherNamespace},
		"to another namespace's metadata":   {origin: "http://to-c.team-a.svc:80", allowed: listed, want: RuleMetadata, says: "Service team-c/meta leads where the guardrail refuses"},
		"a loop":                            {origin: "http://loop.team-a.svc:80", want: RuleUnreadable, says: "loop"},
		"endpoints by hand to metadata":     {origin: "http://by-hand.team-a.svc:80", allowed: listed, want: RuleMetadata, says: "endpoint written by hand at 169.254.169.254"},
		"endpoints by hand to WireServer":   {origin: "http://azure.team-a.svc:80", want: RuleMetadata},
		"endpoints by hand, not listed":     {origin: "http://listed-ip.team-a.svc:80", want: RuleNotListed},
		"endpoints by hand, listed":         {origin: "http://listed-ip.team-a.svc:80", allowed: listed},
		"an FQDN endpoint":                  {origin: "http://fqdn.team-a.svc:80", allowed: listed, want: RuleMetadata},
		"endpoints by hand to an own Pod":   {origin: "http://own-pod.team-a.svc:80"},
		"to an own Pod and elsewhere":       {origin: "http://pod-and-not.team-a.svc:80", want: RuleNotListed, says: "10.9.9.9"},
		"a Pod at a metadata address":       {origin: "http://meta-pod.team-a.svc:80", allowed: listed, want: RuleMetadata},
		"the text is judged first":          {origin: "http://169.254.169.254", want: RuleMetadata},
		"another namespace's, not followed": {origin: "http://meta.team-b.svc:80", want: RuleOtherNamespace},
		"builtin":                           {origin: "http_status:404"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Follow(tc.origin, own, tc.allowed, world)
			if err != nil {
				t.Fatal(err)
			}
			var got Rule
			if r != nil {
				got = r.Rule
			}
			if got != tc.want {
				t.Fatalf("Follow(%q) = %v, want rule %q", tc.origin, r, tc.want)
			}
			if r != nil && (r.Origin != tc.origin || !strings.Contains(r.Error(), tc.says)) {
				t.Errorf("refusal %q: want the origin and %q", r.Error(), tc.says)
			}
		})
	}
}

// TestFollowHidesOtherNamespaces: where another namespace's Service leads
// is not said to this one.
func TestFollowHidesOtherNamespaces(t *testing.T) {
	look := leads(map[string]Lead{"team-c/secret": {ExternalName: "metadata.google.internal"}})
	r, _ := Follow("http://secret.team-c.svc:80", Source{Namespace: "team-a"}, []string{"team-c.svc"}, look)
	if r == nil || strings.Contains(r.Error(), "google") {
		t.Fatalf("refusal %v names what team-c's Service leads to", r)
	}
}

func TestFollowReturnsLookupErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := Follow("http://web.team-a.svc:80", Source{Namespace: "team-a"}, nil, func(string, string) (Lead, error) { return Lead{}, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}
