package dnsrecord

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

const target = "6ff42ae2-765d-4adf-8112-31c55c1551ef.cfargotunnel.com"

func spec(mod ...func(*v1alpha1.DNSRecordParameters)) v1alpha1.DNSRecordParameters {
	p := v1alpha1.DNSRecordParameters{
		Name: "app.example.com", Type: "CNAME", Content: target,
		Proxied: ptr.To(true), TTL: ptr.To[int64](1), Comment: ptr.To("web"),
	}
	for _, m := range mod {
		m(&p)
	}
	return p
}

func record(mod ...func(*cloudflare.DNSRecord)) *cloudflare.DNSRecord {
	r := &cloudflare.DNSRecord{
		ID: "a1", Name: "app.example.com", Type: "CNAME", Content: target,
		Proxied: true, TTL: 1, Comment: ownership.Comment("web", mark), Tags: []string{},
	}
	for _, m := range mod {
		m(r)
	}
	return r
}

func TestDesired(t *testing.T) {
	cases := map[string]struct {
		p    v1alpha1.DNSRecordParameters
		want cloudflare.DNSRecord
	}{
		"ProxiedForcesAutomaticTTL": {
			p:    spec(func(p *v1alpha1.DNSRecordParameters) { p.TTL = ptr.To[int64](300) }),
			want: cloudflare.DNSRecord{Name: "app.example.com", Type: "CNAME", Content: target, Proxied: true, TTL: 1, Comment: "web " + mark.String()},
		},
		"UnsetOptionals": {
			p:    v1alpha1.DNSRecordParameters{Name: "App.Example.com.", Type: "a", Content: " 192.0.2.1 "},
			want: cloudflare.DNSRecord{Name: "app.example.com", Type: "A", Content: "192.0.2.1", TTL: 1, Comment: mark.String()},
		},
		"TTLAndTags": {
			p:    v1alpha1.DNSRecordParameters{Name: "t.example.com", Type: "TXT", Content: "v=1", TTL: ptr.To[int64](300), Tags: []string{"team:a"}},
			want: cloudflare.DNSRecord{Name: "t.example.com", Type: "TXT", Content: "v=1", TTL: 300, Comment: mark.String(), Tags: []string{"team:a"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, desired(tc.p, mark)); diff != "" {
				t.Errorf("desired: -want +got:\n%s", diff)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	cases := map[string]struct {
		want v1alpha1.DNSRecordParameters
		got  *cloudflare.DNSRecord
		diff string
	}{
		"UpToDate": {want: spec(), got: record()},
		"NameCaseAndTrailingDot": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Name = "APP.example.com." }),
			got:  record(),
		},
		"HostnameContentCaseAndDot": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) {
				p.Content = "6FF42AE2-765D-4ADF-8112-31C55C1551EF.cfargotunnel.com."
			}),
			got: record(),
		},
		"ProxiedTTLIsCloudflares": {
			// Cloudflare keeps proxied records at TTL 1 whatever was asked.
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.TTL = ptr.To[int64](300) }),
			got:  record(),
		},
		"ProxiedFromCloudflareWhenUnset": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Proxied, p.TTL = nil, ptr.To[int64](300) }),
			got:  record(),
		},
		"UnsetOptionalsAreCloudflares": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Proxied, p.TTL = nil, nil }),
			got:  record(func(r *cloudflare.DNSRecord) { r.Proxied, r.TTL = false, 3600 }),
		},
		"TagsOrderAndNil": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Tags = []string{"b:2", "a:1"} }),
			got:  record(func(r *cloudflare.DNSRecord) { r.Tags = []string{"a:1", "b:2"} }),
		},
		"EmptyTagsEqualAbsent": {
			want: spec(),
			got:  record(func(r *cloudflare.DNSRecord) { r.Tags = nil }),
		},
		"TTLWhenNotProxied": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Proxied, p.TTL = ptr.To(false), ptr.To[int64](300) }),
			got:  record(func(r *cloudflare.DNSRecord) { r.Proxied, r.TTL = false, 1 }),
			diff: "ttl: 1 in Cloudflare, 300 desired",
		},
		"Everything": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Tags = []string{"team:a"} }),
			got: &cloudflare.DNSRecord{
				Name: "old.example.com", Type: "A", Content: "192.0.2.1", Proxied: false, TTL: 300,
				Comment: "edited by hand", Tags: []string{"x:y"},
			},
			diff: `name: "old.example.com" in Cloudflare, "app.example.com" desired
type: A in Cloudflare, CNAME desired
content: "192.0.2.1" in Cloudflare, "` + target + `" desired
proxied: false in Cloudflare, true desired
comment: "edited by hand" in Cloudflare, "web" desired
ownership marker: "" in Cloudflare, "` + string(mark) + `" desired
tags: [x:y] in Cloudflare, [team:a] desired`,
		},
		"UserCommentOnly": {
			want: spec(func(p *v1alpha1.DNSRecordParameters) { p.Comment = nil }),
			got:  record(),
			diff: `comment: "web" in Cloudflare, "" desired`,
		},
		"ImportedRecordGainsMarker": {
			// Same user comment, no marker: the first update hands it over.
			want: spec(),
			got:  record(func(r *cloudflare.DNSRecord) { r.Comment = "web" }),
			diff: `ownership marker: "" in Cloudflare, "` + string(mark) + `" desired`,
		},
		"AnotherResourcesMarker": {
			want: spec(),
			got:  record(func(r *cloudflare.DNSRecord) { r.Comment = ownership.Comment("web", "previous-uid") }),
			diff: `ownership marker: "previous-uid" in Cloudflare, "` + string(mark) + `" desired`,
		},
		"TXTContentIsCaseSensitive": {
			want: v1alpha1.DNSRecordParameters{Name: "app.example.com", Type: "TXT", Content: "Hello"},
			got:  record(func(r *cloudflare.DNSRecord) { r.Type, r.Content, r.Comment = "TXT", "hello", mark.String() }),
			diff: `content: "hello" in Cloudflare, "Hello" desired`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.diff, Diff(tc.want, tc.got, mark)); diff != "" {
				t.Errorf("Diff: -want +got:\n%s", diff)
			}
		})
	}
}

func TestSameContent(t *testing.T) {
	cases := map[string]struct {
		typ, a, b string
		want      bool
	}{
		"IPv4":              {typ: "A", a: "192.0.2.1", b: "192.0.2.1", want: true},
		"IPv4Differs":       {typ: "A", a: "192.0.2.1", b: "192.0.2.2"},
		"IPv6Normalized":    {typ: "AAAA", a: "2001:DB8:0:0::1", b: "2001:db8::1", want: true},
		"CNAMECase":         {typ: "CNAME", a: "Target.Example.com.", b: "target.example.com", want: true},
		"MXHostname":        {typ: "MX", a: "mail.example.com.", b: "MAIL.example.com", want: true},
		"TXTExact":          {typ: "TXT", a: "v=spf1 -all", b: "v=spf1 -all", want: true},
		"TXTCaseSensitive":  {typ: "TXT", a: "ABC", b: "abc"},
		"TXTTrailingDot":    {typ: "TXT", a: "abc.", b: "abc"},
		"LowerCaseTypeName": {typ: "cname", a: "A.example.com", b: "a.example.com", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sameContent(tc.typ, tc.a, tc.b); got != tc.want {
				t.Errorf("sameContent(%q, %q, %q) = %v, want %v", tc.typ, tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestLateInitialize(t *testing.T) {
	cases := map[string]struct {
		p       v1alpha1.DNSRecordParameters
		r       *cloudflare.DNSRecord
		want    v1alpha1.DNSRecordParameters
		changed bool
	}{
		"FillsUnset": {
			p:       v1alpha1.DNSRecordParameters{Name: "a.example.com", Type: "A", Content: "192.0.2.1"},
			r:       &cloudflare.DNSRecord{Proxied: true, TTL: 1},
			want:    v1alpha1.DNSRecordParameters{Name: "a.example.com", Type: "A", Content: "192.0.2.1", Proxied: ptr.To(true), TTL: ptr.To[int64](1)},
			changed: true,
		},
		"KeepsSet": {
			p:    v1alpha1.DNSRecordParameters{Proxied: ptr.To(false), TTL: ptr.To[int64](300)},
			r:    &cloudflare.DNSRecord{Proxied: true, TTL: 1},
			want: v1alpha1.DNSRecordParameters{Proxied: ptr.To(false), TTL: ptr.To[int64](300)},
		},
		"OnlyTTL": {
			p:       v1alpha1.DNSRecordParameters{Proxied: ptr.To(false)},
			r:       &cloudflare.DNSRecord{TTL: 3600},
			want:    v1alpha1.DNSRecordParameters{Proxied: ptr.To(false), TTL: ptr.To[int64](3600)},
			changed: true,
		},
		"ProxiedSpecOverUnproxiedRecord": {
			p:       v1alpha1.DNSRecordParameters{Proxied: ptr.To(true)},
			r:       &cloudflare.DNSRecord{TTL: 300},
			want:    v1alpha1.DNSRecordParameters{Proxied: ptr.To(true), TTL: ptr.To[int64](1)},
			changed: true,
		},
		"TTLSpecOverProxiedRecord": {
			p:    v1alpha1.DNSRecordParameters{TTL: ptr.To[int64](300)},
			r:    &cloudflare.DNSRecord{Proxied: true, TTL: 1},
			want: v1alpha1.DNSRecordParameters{TTL: ptr.To[int64](300)},
		},
		"AutomaticTTLSpecOverProxiedRecord": {
			p:       v1alpha1.DNSRecordParameters{TTL: ptr.To[int64](1)},
			r:       &cloudflare.DNSRecord{Proxied: true, TTL: 1},
			want:    v1alpha1.DNSRecordParameters{Proxied: ptr.To(true), TTL: ptr.To[int64](1)},
			changed: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := lateInitialize(&tc.p, tc.r)
			if diff := cmp.Diff(tc.want, tc.p); diff != "" {
				t.Errorf("spec: -want +got:\n%s", diff)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
		})
	}
}

func TestConflicts(t *testing.T) {
	cases := map[string]struct {
		typ, other string
		want       bool
	}{
		"SameType":     {typ: "A", other: "A", want: true},
		"SameTXT":      {typ: "TXT", other: "TXT", want: true},
		"CNAMEvsA":     {typ: "CNAME", other: "A", want: true},
		"AvsCNAME":     {typ: "A", other: "CNAME", want: true},
		"AAAAvsCNAME":  {typ: "aaaa", other: "cname", want: true},
		"AvsAAAA":      {typ: "A", other: "AAAA"},
		"CNAMEvsTXT":   {typ: "CNAME", other: "TXT"},
		"TXTvsA":       {typ: "TXT", other: "A"},
		"NSvsAnything": {typ: "NS", other: "TXT", want: true},
		"AnythingVsNS": {typ: "MX", other: "NS", want: true},
		"MXvsTXT":      {typ: "MX", other: "TXT"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := conflicts(tc.typ, tc.other); got != tc.want {
				t.Errorf("conflicts(%q, %q) = %v, want %v", tc.typ, tc.other, got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	foreignCNAME := cloudflare.DNSRecord{ID: "f1", Type: "CNAME", Comment: "by hand"}
	foreignTXT := cloudflare.DNSRecord{ID: "f2", Type: "TXT"}
	othersCNAME := cloudflare.DNSRecord{ID: "o1", Type: "CNAME", Comment: ownership.Comment("", "another-uid")}
	oursCNAME := cloudflare.DNSRecord{ID: "m1", Type: "CNAME", Comment: ownership.Comment("x", mark)}
	oursA := cloudflare.DNSRecord{ID: "m2", Type: "A", Comment: ownership.Comment("", mark)}
	oursLegacy := cloudflare.DNSRecord{ID: "m3", Type: "CNAME", Comment: ownership.Comment("x", ownership.Mark(uid))}
	rebuiltIdentity := testIdentity
	rebuiltIdentity.UID = "a-new-uid-after-a-restore"
	otherOwner := testIdentity
	otherOwner.Owner = "another-cluster"
	otherOwnersCNAME := cloudflare.DNSRecord{ID: "o2", Type: "CNAME", Comment: ownership.Comment("", otherOwner.Mark())}
	cases := map[string]struct {
		rs           []cloudflare.DNSRecord
		id           *ownership.Identity
		wantOurs     string
		wantConflict string
	}{
		"OursByAnEarlierVersionsUIDMarker": {rs: []cloudflare.DNSRecord{oursLegacy}, wantOurs: "m3"},
		"OursAfterARebuild":                {rs: []cloudflare.DNSRecord{oursCNAME}, id: &rebuiltIdentity, wantOurs: "m1"},
		"AnotherOwnersRecord":              {rs: []cloudflare.DNSRecord{otherOwnersCNAME}, wantConflict: "o2"},
		"Nothing":                          {},
		"Ours":                             {rs: []cloudflare.DNSRecord{foreignTXT, oursCNAME}, wantOurs: "m1"},
		"Foreign":                          {rs: []cloudflare.DNSRecord{foreignTXT, foreignCNAME}, wantConflict: "f1"},
		"AnotherResourcesRecord":           {rs: []cloudflare.DNSRecord{othersCNAME}, wantConflict: "o1"},
		"NonConflicting":                   {rs: []cloudflare.DNSRecord{foreignTXT}},
		"OursPreferredByType":              {rs: []cloudflare.DNSRecord{oursA, oursCNAME}, wantOurs: "m1"},
		"OursOfAnotherType":                {rs: []cloudflare.DNSRecord{oursA}, wantOurs: "m2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			who := testIdentity
			if tc.id != nil {
				who = *tc.id
			}
			ours, conflict := classify(tc.rs, who, "CNAME")
			id := func(r *cloudflare.DNSRecord) string {
				if r == nil {
					return ""
				}
				return r.ID
			}
			if id(ours) != tc.wantOurs || id(conflict) != tc.wantConflict {
				t.Errorf("classify = ours %q conflict %q, want %q, %q", id(ours), id(conflict), tc.wantOurs, tc.wantConflict)
			}
		})
	}
}
