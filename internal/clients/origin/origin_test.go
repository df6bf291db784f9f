package origin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	own := Source{Namespace: "team-a"}
	listed := []string{"internal.example.com", "10.20.0.0/16", "2001:db8::/32", "unix:/run/app.sock", "bastion", "team-c.svc", "kubernetes.default.svc", "*.wild.example.com.", "192.168.1.7", "not a cidr/99", "169.254.0.0/16", "metadata.google.internal"}
	cases := map[string]struct {
		origin  string
		from    Source
		allowed []string
		want    Rule // "" allows
	}{
		// The default.
		"own Service, short":                   {origin: "http://web.team-a.svc:80", from: own},
		"own Service, cluster domain":          {origin: "https://web.team-a.svc.cluster.local:8443", from: own},
		"own Service, case and trailing dot":   {origin: "HTTP://Web.Team-A.SVC.Cluster.Local.:80", from: own},
		"own Service, no port":                 {origin: "http://web.team-a.svc", from: own},
		"own headless Service's pod":           {origin: "tcp://db-0.db.team-a.svc.cluster.local:5432", from: own},
		"own Service, custom cluster domain":   {origin: "http://web.team-a.svc.corp.internal:80", from: Source{Namespace: "team-a", ClusterDomain: "corp.internal."}},
		"cluster.local is not a custom domain": {origin: "http://web.team-a.svc.cluster.local:80", from: Source{Namespace: "team-a", ClusterDomain: "corp.internal"}, want: RuleNotListed},
		"own Service, tcp":                     {origin: "tcp://db.team-a.svc.cluster.local:5432", from: own},
		"own Service, ssh":                     {origin: "ssh://bastion.team-a.svc:22", from: own},
		"own Service, rdp":                     {origin: "rdp://win.team-a.svc:3389", from: own},
		"http_status":                          {origin: "http_status:404", from: own},
		"hello_world":                          {origin: "hello_world", from: own},
		"http_status not a code":               {origin: "http_status:4o4", from: own, want: RuleUnreadable},
		"http_status out of range":             {origin: "http_status:999", from: own, want: RuleUnreadable},
		"http_status with a leading zero":      {origin: "http_status:0404", from: own, want: RuleUnreadable},

		// Other namespaces.
		"another namespace's Service":        {origin: "http://web.team-b.svc.cluster.local:80", from: own, want: RuleOtherNamespace},
		"another namespace's Service, short": {origin: "http://web.team-b.svc:80", from: own, want: RuleOtherNamespace},
		"another namespace's, granted":       {origin: "http://gw.infra.svc.cluster.local:80", from: Source{Namespace: "team-a", Granted: []string{"infra/gw"}}},
		"a grant is for one Service":         {origin: "http://other.infra.svc.cluster.local:80", from: Source{Namespace: "team-a", Granted: []string{"infra/gw"}}, want: RuleOtherNamespace},
		"another namespace, listed":          {origin: "http://web.team-c.svc.cluster.local:80", from: own, allowed: listed},
		"namespace unknown: any Service":     {origin: "http://web.team-b.svc.cluster.local:80"},
		"the API server":                     {origin: "https://kubernetes.default.svc", from: own, want: RuleNotListed},
		"the API server, cluster domain":     {origin: "https://kubernetes.default.svc.cluster.local:443", from: own, want: RuleNotListed},
		"the API server from default":        {origin: "https://kubernetes.default.svc", from: Source{Namespace: "default"}, want: RuleNotListed},
		"the API server, namespace unknown":  {origin: "https://kubernetes.default.svc", want: RuleNotListed},
		"the API server, listed":             {origin: "https://kubernetes.default.svc.cluster.local:443", from: own, allowed: listed},
		"another Service of default":         {origin: "http://web.default.svc:80", from: Source{Namespace: "default"}},

		// Bare names resolve through cloudflared's search path.
		"bare name":              {origin: "http://web:80", from: own, want: RuleNotListed},
		"name and namespace":     {origin: "http://web.team-a:80", from: own, want: RuleNotListed},
		"svc without a name":     {origin: "http://team-a.svc:80", from: own, want: RuleNotListed},
		"localhost":              {origin: "http://localhost:2000", from: own, want: RuleNotListed},
		"external name":          {origin: "https://api.example.org", from: own, want: RuleNotListed},
		"svc label, public name": {origin: "http://web.team-a.svc.example.com:80", from: own, want: RuleNotListed},

		// Listed.
		"listed name":                {origin: "https://internal.example.com", from: own, allowed: listed},
		"listed name, below":         {origin: "https://db.internal.example.com:5432", from: own, allowed: listed},
		"listed name, not at label":  {origin: "https://evilinternal.example.com", from: own, allowed: listed, want: RuleNotListed},
		"listed name, suffix only":   {origin: "https://internal.example.com.evil.org", from: own, allowed: listed, want: RuleNotListed},
		"listed wildcard entry":      {origin: "https://a.wild.example.com", from: own, allowed: listed},
		"listed CIDR":                {origin: "http://10.20.3.4:8080", from: own, allowed: listed},
		"outside the CIDR":           {origin: "http://10.21.3.4:8080", from: own, allowed: listed, want: RuleNotListed},
		"listed address":             {origin: "http://192.168.1.7", from: own, allowed: listed},
		"next to the listed address": {origin: "http://192.168.1.8", from: own, allowed: listed, want: RuleNotListed},
		"listed IPv6 CIDR":           {origin: "http://[2001:db8::5]:80", from: own, allowed: listed},
		"IPv4-mapped in listed CIDR": {origin: "http://[::ffff:10.20.0.9]:80", from: own, allowed: listed},
		"IP not listed":              {origin: "http://10.0.0.1:80", from: own, want: RuleNotListed},
		"loopback not listed":        {origin: "http://127.0.0.1:2000", from: own, want: RuleNotListed},
		"unspecified not listed":     {origin: "http://0.0.0.0:2000", from: own, allowed: listed, want: RuleNotListed},
		"unix socket":                {origin: "unix:/run/app.sock", from: own, want: RuleNotListed},
		"unix socket, listed":        {origin: "unix:/run/app.sock", from: own, allowed: listed},
		"unix+tls socket, listed":    {origin: "unix+tls:/run/app.sock", from: own, allowed: listed},
		"another socket":             {origin: "unix:/run/../run/app.sock", from: own, allowed: listed, want: RuleNotListed},
		"unix relative path":         {origin: "unix:run/app.sock", from: own, allowed: listed, want: RuleUnreadable},
		"bastion":                    {origin: "bastion", from: own, want: RuleNotListed},
		"bastion, listed":            {origin: "bastion", from: own, allowed: listed},

		// Never, whatever is listed.
		"metadata":                             {origin: "http://169.254.169.254:80", from: own, allowed: listed, want: RuleMetadata},
		"metadata, namespace unknown":          {origin: "http://169.254.169.254/", want: RuleMetadata},
		"ECS task metadata":                    {origin: "http://169.254.170.2", from: own, want: RuleMetadata},
		"metadata behind userinfo":             {origin: "http://good.team-a.svc@169.254.169.254", from: own, want: RuleUnreadable},
		"userinfo before a good host":          {origin: "http://169.254.169.254@web.team-a.svc", from: own, want: RuleUnreadable},
		"metadata, IPv4-mapped":                {origin: "http://[::ffff:169.254.169.254]:80", from: own, allowed: listed, want: RuleMetadata},
		"metadata, IPv4-mapped hex":            {origin: "http://[::ffff:a9fe:a9fe]/", from: own, want: RuleMetadata},
		"metadata, IPv4-compatible":            {origin: "http://[::169.254.169.254]/", from: own, want: RuleMetadata},
		"metadata, NAT64":                      {origin: "http://[64:ff9b::a9fe:a9fe]/", from: own, want: RuleMetadata},
		"metadata, 6to4":                       {origin: "http://[2002:a9fe:a9fe::1]/", from: own, want: RuleMetadata},
		"IPv6 link-local":                      {origin: "http://[fe80::1]:80", from: own, want: RuleMetadata},
		"IPv6 link-local with zone":            {origin: "http://[fe80::1%25eth0]:80", from: own, want: RuleMetadata},
		"AWS IMDS IPv6":                        {origin: "http://[fd00:ec2::254]/", from: own, allowed: []string{"fd00::/8"}, want: RuleMetadata},
		"GCE metadata IPv6":                    {origin: "http://[fd20:ce::254]/", from: own, want: RuleMetadata},
		"Alibaba metadata":                     {origin: "http://100.100.100.200/", from: own, allowed: []string{"100.64.0.0/10"}, want: RuleMetadata},
		"Azure WireServer":                     {origin: "http://168.63.129.16/", from: own, want: RuleMetadata},
		"GCE metadata name":                    {origin: "http://metadata.google.internal/", from: own, allowed: listed, want: RuleMetadata},
		"GCE metadata name, case and dot":      {origin: "http://METADATA.Google.Internal.:80", from: own, want: RuleMetadata},
		"GCE metadata, bare":                   {origin: "http://metadata", from: own, want: RuleMetadata},
		"below a metadata name":                {origin: "http://x.metadata.google.internal", from: own, want: RuleMetadata},
		"AWS instance-data":                    {origin: "http://instance-data.ec2.internal", from: own, want: RuleMetadata},
		"pod name spelling metadata":           {origin: "http://169-254-169-254.team-a.pod.cluster.local", from: own, allowed: []string{"cluster.local"}, want: RuleMetadata},
		"Service-shaped name spelling it":      {origin: "http://169-254-169-254.team-a.svc", from: own, want: RuleMetadata},
		"wildcard DNS spelling metadata":       {origin: "http://169.254.169.254.nip.io", from: own, allowed: []string{"nip.io"}, want: RuleMetadata},
		"wildcard DNS spelling a good address": {origin: "http://10.20.0.1.nip.io", from: own, allowed: []string{"nip.io"}},

		// Spellings a resolver takes for an address.
		"decimal":                 {origin: "http://2852039166/", from: own, want: RuleUnreadable},
		"hexadecimal":             {origin: "http://0xa9fea9fe/", from: own, want: RuleUnreadable},
		"dotted hexadecimal":      {origin: "http://0xa9.0xfe.0xa9.0xfe/", from: own, want: RuleUnreadable},
		"octal":                   {origin: "http://0251.0376.0251.0376/", from: own, want: RuleUnreadable},
		"trailing dot":            {origin: "http://169.254.169.254.:80", from: own, want: RuleMetadata},
		"leading zeros":           {origin: "http://169.254.169.0254/", from: own, want: RuleUnreadable},
		"three parts":             {origin: "http://169.254.43518/", from: own, want: RuleUnreadable},
		"percent-encoded address": {origin: "http://%31%36%39.254.169.254/", from: own, want: RuleUnreadable},
		"unbracketed IPv6":        {origin: "http://fe80::1/", from: own, want: RuleUnreadable},
		"bracketed IPv4":          {origin: "http://[169.254.169.254]/", from: own, want: RuleUnreadable},
		"non-ASCII host":          {origin: "http://ｍetadata.google.internal/", from: own, want: RuleUnreadable},
		"empty label":             {origin: "http://web..team-a.svc/", from: own, want: RuleUnreadable},
		"no host":                 {origin: "http://:80", from: own, want: RuleUnreadable},
		"no scheme":               {origin: "web.team-a.svc:80", from: own, want: RuleUnreadable},
		"opaque":                  {origin: "http:web.team-a.svc", from: own, want: RuleUnreadable},
		"leading space":           {origin: " http://web.team-a.svc", from: own, want: RuleUnreadable},
		"backslash":               {origin: `http://web.team-a.svc\@169.254.169.254`, from: own, want: RuleUnreadable},
		"empty":                   {origin: "", from: own, want: RuleUnreadable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got Rule
			if r := Check(tc.origin, tc.from, tc.allowed); r != nil {
				got = r.Rule
				if r.Why == "" || r.Origin != tc.origin {
					t.Errorf("Check(%q): refusal %+v says nothing", tc.origin, r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check(%q, %+v): -want +got:\n%s", tc.origin, tc.from, diff)
			}
		})
	}
}

// TestCheckMessages: a refusal says what to do.
func TestCheckMessages(t *testing.T) {
	cases := map[string]struct {
		origin string
		want   string
	}{
		"other namespace": {"http://web.team-b.svc:80", `origin "http://web.team-b.svc:80": Service team-b/web is in another namespace than team-a; a namespace publishes only its own Services unless spec.allow.origins lists this one (web.team-b.svc) or its namespace (team-b.svc)`},
		"metadata":        {"http://169.254.169.254:80", `origin "http://169.254.169.254:80": 169.254.169.254 is a link-local or cloud metadata address; it is never published, whatever spec.allow.origins lists`},
		"bare name":       {"http://web:80", `origin "http://web:80": web is a name without a dot, which cloudflared resolves through its DNS search path (the tunnel's namespace, then the node's domains); name a Service as <name>.<namespace>.svc, or list the name in spec.allow.origins`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Check(tc.origin, Source{Namespace: "team-a"}, nil)
			if r == nil {
				t.Fatalf("Check(%q) allowed it", tc.origin)
			}
			if diff := cmp.Diff(tc.want, r.Error()); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
